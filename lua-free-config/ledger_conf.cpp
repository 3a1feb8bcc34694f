#include "lua-free-config/ledger_conf.hpp"

#include "pg/blocking_pg.hpp"
#include "lua-free-config/conf_values.hpp"
#include "ngx-boundary/guarded.hpp"
#include "lua-free-config/secret_file.hpp"

namespace mr::conf {
namespace {

// mr_ledger and mr_ops: what the location serves (one of them, once).
char* set_role(ngx_conf_t* cf, ngx_command_t* cmd, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* lcf = static_cast<mr_ledger_loc_conf_t*>(conf);
    if (lcf->role != mr_ledger_role::none) return const_cast<char*>("is duplicate");
    lcf->role = static_cast<mr_ledger_role>(cmd->offset);
    remember(cf, lcf->role_where);
    return NGX_CONF_OK;
  });
}

// The workers connect without blocking: a DSN that would make libpq
// resolve a name (getaddrinfo blocks the event loop) is refused here.
char* set_ledger_dsn(ngx_conf_t* cf, ngx_command_t* cmd, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    char* rv = ngx_conf_set_str_slot(cf, cmd, conf);
    if (rv != NGX_CONF_OK) return rv;
    const auto* mcf = static_cast<const mr_ledger_main_conf_t*>(conf);
    if (const auto problem = mr::pg::host_needing_resolution(view(mcf->dsn))) {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                         "mr_ledger_dsn: %s: the workers never resolve names (it would block them); give "
                         "hostaddr=<its address> (host= may stay, for TLS) or a unix socket folder",
                         problem->c_str());
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    return NGX_CONF_OK;
  });
}

}  // namespace

ngx_command_t ledger_commands[] = {
    {ngx_string("mr_ops"), NGX_HTTP_LOC_CONF | NGX_CONF_NOARGS, mr::ngx::c_entry(set_role), NGX_HTTP_LOC_CONF_OFFSET,
     static_cast<ngx_uint_t>(mr_ledger_role::ops), nullptr},
    {ngx_string("mr_ops_token_file"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     mr::ngx::c_entry(remembered<ngx_conf_set_str_slot, offsetof(mr_ledger_main_conf_t, ops_token_file_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_ledger_main_conf_t, ops_token_file), nullptr},
    {ngx_string("mr_payout_simulator"), NGX_HTTP_MAIN_CONF | NGX_CONF_FLAG,
     mr::ngx::c_entry(remembered<ngx_conf_set_flag_slot, offsetof(mr_ledger_main_conf_t, simulator_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_ledger_main_conf_t, simulator), nullptr},
    {ngx_string("mr_payout_simulator_delay"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, ngx_conf_set_msec_slot,
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_ledger_main_conf_t, simulator_delay), nullptr},
    {ngx_string("mr_test_helpers"), NGX_HTTP_MAIN_CONF | NGX_CONF_FLAG,
     mr::ngx::c_entry(remembered<ngx_conf_set_flag_slot, offsetof(mr_ledger_main_conf_t, test_helpers_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_ledger_main_conf_t, test_helpers), nullptr},
    {ngx_string("mr_ledger"), NGX_HTTP_LOC_CONF | NGX_CONF_NOARGS, mr::ngx::c_entry(set_role),
     NGX_HTTP_LOC_CONF_OFFSET, static_cast<ngx_uint_t>(mr_ledger_role::partner_api), nullptr},
    {ngx_string("mr_ledger_dsn"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, mr::ngx::c_entry(set_ledger_dsn),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_ledger_main_conf_t, dsn), nullptr},
    {ngx_string("mr_ledger_pool_size"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     mr::ngx::c_entry(remembered<ngx_conf_set_num_slot, offsetof(mr_ledger_main_conf_t, pool_size_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET,
     offsetof(mr_ledger_main_conf_t, pool_size),
     nullptr},
    {ngx_string("mr_ledger_settle_connections"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     mr::ngx::c_entry(remembered<ngx_conf_set_num_slot, offsetof(mr_ledger_main_conf_t, settle_connections_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_ledger_main_conf_t, settle_connections),
     nullptr},
    {ngx_string("mr_ledger_queue_size"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_num_slot, NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_ledger_main_conf_t, queue_size),
     nullptr},
    {ngx_string("mr_ledger_connect_timeout"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_msec_slot, NGX_HTTP_MAIN_CONF_OFFSET,
     offsetof(mr_ledger_main_conf_t, connect_timeout), nullptr},
    {ngx_string("mr_ledger_query_timeout"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_msec_slot, NGX_HTTP_MAIN_CONF_OFFSET,
     offsetof(mr_ledger_main_conf_t, query_timeout), nullptr},
    ngx_null_command};

void* ledger_create_main(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<void*>(nullptr), [&]() -> void* {
    auto* mcf = static_cast<mr_ledger_main_conf_t*>(ngx_pcalloc(cf->pool, sizeof(mr_ledger_main_conf_t)));
    if (mcf == nullptr) return nullptr;
    mcf->pool_size = NGX_CONF_UNSET_UINT;
    mcf->settle_connections = NGX_CONF_UNSET_UINT;
    mcf->queue_size = NGX_CONF_UNSET_UINT;
    mcf->connect_timeout = NGX_CONF_UNSET_MSEC;
    mcf->query_timeout = NGX_CONF_UNSET_MSEC;
    mcf->simulator = NGX_CONF_UNSET;
    mcf->simulator_delay = NGX_CONF_UNSET_MSEC;
    mcf->test_helpers = NGX_CONF_UNSET;
    mcf->partner_locations = ngx_array_create(cf->pool, 2, sizeof(mr_ledger_location_t));
    mcf->ops_servers = ngx_array_create(cf->pool, 1, sizeof(ngx_http_core_srv_conf_t*));
    if (mcf->partner_locations == nullptr || mcf->ops_servers == nullptr) return nullptr;
    return mcf;
  });
}

char* ledger_init_main(ngx_conf_t* cf, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = static_cast<mr_ledger_main_conf_t*>(conf);
    ngx_conf_init_uint_value(mcf->pool_size, 4);
    ngx_conf_init_uint_value(mcf->settle_connections, 2);
    ngx_conf_init_uint_value(mcf->queue_size, 1024);
    ngx_conf_init_msec_value(mcf->connect_timeout, 3000);
    ngx_conf_init_msec_value(mcf->query_timeout, 5000);
    ngx_conf_init_value(mcf->simulator, 0);
    ngx_conf_init_msec_value(mcf->simulator_delay, 5000);
    ngx_conf_init_value(mcf->test_helpers, 0);
    // The master reads the token (a root-only file is fine); workers keep it.
    if (mcf->ops_token_file.len != 0 &&
        !read_secret_file(cf, "mr_ops_token_file", mcf->ops_token_file_where, mcf->ops_token_file, 16,
                          mcf->ops_token)) {
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    if (mcf->pool_size < 1 || mcf->pool_size > 256) {
      log_at(cf, mcf->pool_size_where, NGX_LOG_EMERG, "mr_ledger_pool_size must be 1..256");
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    if (mcf->settle_connections > 256) {
      log_at(cf, mcf->settle_connections_where, NGX_LOG_EMERG, "mr_ledger_settle_connections must be 0..256");
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    return NGX_CONF_OK;
  });
}

void* ledger_create_loc(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<void*>(nullptr), [&]() -> void* {
    // pcalloc: role none. A role is never inherited: it names one location.
    return ngx_pcalloc(cf->pool, sizeof(mr_ledger_loc_conf_t));
  });
}

char* ledger_merge_loc(ngx_conf_t* cf, mr_ledger_main_conf_t* main, mr_ledger_loc_conf_t* conf) {
  if (conf->role == mr_ledger_role::none) return NGX_CONF_OK;
  main->used = 1;
  if (main->dsn.len == 0) {
    log_at(cf, conf->role_where, NGX_LOG_EMERG, "%s needs mr_ledger_dsn",
           conf->role == mr_ledger_role::ops ? "mr_ops" : "mr_ledger");
    return static_cast<char*>(NGX_CONF_ERROR);
  }
  // While merging, cf->ctx holds this location's confs and its server's.
  auto* ctx = static_cast<ngx_http_conf_ctx_t*>(cf->ctx);
  if (conf->role == mr_ledger_role::partner_api) {
    auto* loc = static_cast<mr_ledger_location_t*>(ngx_array_push(main->partner_locations));
    if (loc == nullptr) return static_cast<char*>(NGX_CONF_ERROR);
    const auto* clcf = static_cast<ngx_http_core_loc_conf_t*>(ctx->loc_conf[ngx_http_core_module.ctx_index]);
    loc->name = clcf->name;
    loc->loc_conf = ctx->loc_conf;
    loc->where = conf->role_where;
  } else {
    if (main->ops_where.file.len == 0) main->ops_where = conf->role_where;
    auto** srv = static_cast<ngx_http_core_srv_conf_t**>(ngx_array_push(main->ops_servers));
    if (srv == nullptr) return static_cast<char*>(NGX_CONF_ERROR);
    *srv = static_cast<ngx_http_core_srv_conf_t*>(ctx->srv_conf[ngx_http_core_module.ctx_index]);
  }
  return NGX_CONF_OK;
}

}  // namespace mr::conf
