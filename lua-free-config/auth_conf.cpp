#include "lua-free-config/auth_conf.hpp"

#include <string_view>
#include <utility>

#include "lua-free-config/conf_values.hpp"
#include "ngx-boundary/guarded.hpp"

namespace mr::conf {
namespace {

char* set_json_error(ngx_conf_t* cf, ngx_command_t*, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* lcf = static_cast<mr_auth_loc_conf_t*>(conf);
    if (lcf->json_error_status != NGX_CONF_UNSET) return const_cast<char*>("is duplicate");
    lcf->json_error_status = kJsonErrorFromErrorPage;
    if (cf->args->nelts == 2) {
      auto* value = static_cast<ngx_str_t*>(cf->args->elts);
      ngx_int_t status = ngx_atoi(value[1].data, value[1].len);
      if (status < 400 || status > 599) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_json_error: \"%V\" is not an HTTP error status",
                           &value[1]);
        return static_cast<char*>(NGX_CONF_ERROR);
      }
      lcf->json_error_status = status;
    }
    return NGX_CONF_OK;
  });
}

char* set_environment(ngx_conf_t* cf, ngx_command_t* cmd, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    char* rv = ngx_conf_set_str_slot(cf, cmd, conf);
    if (rv != NGX_CONF_OK) return rv;
    auto* mcf = static_cast<mr_auth_main_conf_t*>(conf);
    const std::string_view env = view(mcf->environment);
    if (env != "sandbox" && env != "production") {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                         "mr_environment must be \"sandbox\" or \"production\", not \"%V\"",
                         &mcf->environment);
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    return NGX_CONF_OK;
  });
}

// A path relative to nginx's prefix, as nginx reads file names, or off.
char* set_catalogue_snapshot(ngx_conf_t* cf, ngx_command_t*, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = static_cast<mr_auth_main_conf_t*>(conf);
    if (mcf->catalogue_snapshot.len != 0) return const_cast<char*>("is duplicate");
    ngx_str_t value = static_cast<ngx_str_t*>(cf->args->elts)[1];
    if (view(value) != "off" && ngx_conf_full_name(cf->cycle, &value, 0) != NGX_OK) {
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    mcf->catalogue_snapshot = value;
    return NGX_CONF_OK;
  });
}

}  // namespace

ngx_command_t auth_commands[] = {
    {ngx_string("mr_environment"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, mr::ngx::c_entry(set_environment),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_auth_main_conf_t, environment), nullptr},
    {ngx_string("mr_catalogue_dsn"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, ngx_conf_set_str_slot,
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_auth_main_conf_t, catalogue_dsn), nullptr},
    {ngx_string("mr_master_key_file"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     mr::ngx::c_entry(remembered<ngx_conf_set_str_slot, offsetof(mr_auth_main_conf_t, master_key_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_auth_main_conf_t, master_key_file), nullptr},
    {ngx_string("mr_catalogue_snapshot"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, mr::ngx::c_entry(set_catalogue_snapshot),
     NGX_HTTP_MAIN_CONF_OFFSET, 0, nullptr},
    {ngx_string("mr_auth"),
     NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_FLAG,
     mr::ngx::c_entry(remembered<ngx_conf_set_flag_slot, offsetof(mr_auth_loc_conf_t, enabled_where)>),
     NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(mr_auth_loc_conf_t, enabled),
     nullptr},
    {ngx_string("mr_timestamp_window"),
     NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_sec_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(mr_auth_loc_conf_t, timestamp_window), nullptr},
    {ngx_string("mr_max_body_size"),
     NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_size_slot, NGX_HTTP_LOC_CONF_OFFSET, offsetof(mr_auth_loc_conf_t, max_body_size),
     nullptr},
    {ngx_string("mr_request_id"),
     NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_FLAG,
     ngx_conf_set_flag_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(mr_auth_loc_conf_t, request_id_header), nullptr},
    {ngx_string("mr_json_error"), NGX_HTTP_LOC_CONF | NGX_CONF_NOARGS | NGX_CONF_TAKE1,
     mr::ngx::c_entry(set_json_error), NGX_HTTP_LOC_CONF_OFFSET, 0, nullptr},
    {ngx_string("mr_metrics_zone"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, mr::ngx::c_entry(set_metrics_zone),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_auth_main_conf_t, metrics), nullptr},
    ngx_null_command};

void* auth_create_main(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<void*>(nullptr), [&]() -> void* {
    // pcalloc: strings empty, used 0, catalogue null.
    return ngx_pcalloc(cf->pool, sizeof(mr_auth_main_conf_t));
  });
}

void* auth_create_loc(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<void*>(nullptr), [&]() -> void* {
    auto* lcf = static_cast<mr_auth_loc_conf_t*>(ngx_pcalloc(cf->pool, sizeof(mr_auth_loc_conf_t)));
    if (lcf == nullptr) return nullptr;
    lcf->enabled = NGX_CONF_UNSET;
    lcf->request_id_header = NGX_CONF_UNSET;
    lcf->timestamp_window = NGX_CONF_UNSET;
    lcf->max_body_size = NGX_CONF_UNSET_SIZE;
    lcf->json_error_status = NGX_CONF_UNSET;
    return lcf;
  });
}

char* auth_merge_loc(ngx_conf_t* cf, mr_auth_main_conf_t* main, mr_auth_loc_conf_t* prev,
                     mr_auth_loc_conf_t* conf) {
  ngx_conf_merge_value(conf->enabled, prev->enabled, 0);
  if (conf->enabled_where.file.len == 0) conf->enabled_where = prev->enabled_where;
  ngx_conf_merge_value(conf->request_id_header, prev->request_id_header, 0);
  ngx_conf_merge_sec_value(conf->timestamp_window, prev->timestamp_window, 300);
  ngx_conf_merge_size_value(conf->max_body_size, prev->max_body_size, 16 * 1024);
  if (conf->json_error_status == NGX_CONF_UNSET) conf->json_error_status = kJsonErrorOff;

  if (conf->enabled) {
    main->used = 1;
    if (main->auth_where.file.len == 0) main->auth_where = conf->enabled_where;
    // The signature is over the exact bytes and the ledger parses them from
    // memory: cap the body and keep all of it in one in-memory buffer.
    auto* clcf = static_cast<ngx_http_core_loc_conf_t*>(
        ngx_http_conf_get_module_loc_conf(cf, ngx_http_core_module));
    clcf->client_max_body_size = static_cast<off_t>(conf->max_body_size);
    if (clcf->client_body_buffer_size < conf->max_body_size) {
      clcf->client_body_buffer_size = conf->max_body_size;
    }
  }
  return NGX_CONF_OK;
}

bool auth_catalogue_settings_complete(ngx_conf_t* cf, const mr_auth_main_conf_t* main) {
  for (const auto& [value, directive] : {std::pair{&main->environment, "mr_environment"},
                                         std::pair{&main->catalogue_dsn, "mr_catalogue_dsn"},
                                         std::pair{&main->master_key_file, "mr_master_key_file"}}) {
    if (value->len == 0) {
      log_at(cf, main->auth_where, NGX_LOG_EMERG, "mr_auth is on but %s is not set", directive);
      return false;
    }
  }
  return true;
}

bool auth_resolve_catalogue_snapshot(ngx_conf_t* cf, mr_auth_main_conf_t* main) {
  if (main->catalogue_snapshot.len != 0) return true;
  // Beside the master key: a folder only root reads, on local disk, and
  // one per deployment (each has its own master key file, or environment).
  const std::string_view key = view(main->master_key_file);
  const std::size_t slash = key.rfind('/');
  const std::string_view folder = slash == std::string_view::npos ? std::string_view(".") : key.substr(0, slash);
  const std::string_view env = view(main->environment);
  constexpr std::string_view kName = "/mr-catalogue-", kSuffix = ".snapshot";
  const std::size_t len = folder.size() + kName.size() + env.size() + kSuffix.size();
  auto* data = static_cast<u_char*>(ngx_pnalloc(cf->pool, len));
  if (data == nullptr) return false;
  u_char* at = data;
  for (const std::string_view part : {folder, kName, env, kSuffix}) at = ngx_cpymem(at, part.data(), part.size());
  main->catalogue_snapshot = {len, data};
  return true;
}

}  // namespace mr::conf
