#include "lua-free-config/idempotency_conf.hpp"

#include "lua-free-config/conf_values.hpp"
#include "ngx-boundary/guarded.hpp"
#include "lua-free-config/redis_address.hpp"
#include "lua-free-config/secret_file.hpp"

namespace mr::conf {
namespace {

// A size as nginx reads them (4m, 512k), or off.
char* set_replay_cache(ngx_conf_t* cf, ngx_command_t*, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = static_cast<mr_idempotency_main_conf_t*>(conf);
    if (mcf->replay_cache != NGX_CONF_UNSET_SIZE) return const_cast<char*>("is duplicate");
    const ngx_str_t& value = static_cast<ngx_str_t*>(cf->args->elts)[1];
    if (value.len == 3 && ngx_strncmp(value.data, "off", 3) == 0) {
      mcf->replay_cache = 0;
      return NGX_CONF_OK;
    }
    const ssize_t size = ngx_parse_size(const_cast<ngx_str_t*>(&value));
    if (size == NGX_ERROR) {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_idempotency_replay_cache \"%V\" is neither a size nor off",
                         &value);
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    mcf->replay_cache = static_cast<size_t>(size);
    return NGX_CONF_OK;
  });
}

// mr_redis_sentinel <ip:port>... master <name>: IPv4 addresses only (hiredis
// would resolve a name blocking the worker), then the keyword and the name.
char* set_redis_sentinel(ngx_conf_t* cf, ngx_command_t*, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = static_cast<mr_idempotency_main_conf_t*>(conf);
    if (mcf->redis_sentinels != nullptr) return const_cast<char*>("is duplicate");
    const auto* args = static_cast<ngx_str_t*>(cf->args->elts);
    const ngx_uint_t n = cf->args->nelts;
    if (n < 4 || view(args[n - 2]) != "master") {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_redis_sentinel wants <ip>:<port>... master <name>");
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    if (!mr::redis::valid_master_name(view(args[n - 1]))) {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                         "mr_redis_sentinel: master name \"%V\" must be 1 to 255 printable characters, no space",
                         &args[n - 1]);
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    mcf->redis_sentinels = ngx_array_create(cf->pool, n - 3, sizeof(ngx_str_t));
    if (mcf->redis_sentinels == nullptr) return static_cast<char*>(NGX_CONF_ERROR);
    for (ngx_uint_t i = 1; i < n - 2; ++i) {
      if (!mr::redis::parse_ipv4_port(view(args[i]))) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_redis_sentinel \"%V\" must be an IPv4 address and port",
                           &args[i]);
        return static_cast<char*>(NGX_CONF_ERROR);
      }
      auto* slot = static_cast<ngx_str_t*>(ngx_array_push(mcf->redis_sentinels));
      if (slot == nullptr) return static_cast<char*>(NGX_CONF_ERROR);
      *slot = args[i];
    }
    mcf->redis_sentinel_master = args[n - 1];
    return NGX_CONF_OK;
  });
}

}  // namespace

ngx_command_t idempotency_commands[] = {
    {ngx_string("mr_idempotency"),
     NGX_HTTP_MAIN_CONF | NGX_HTTP_SRV_CONF | NGX_HTTP_LOC_CONF | NGX_CONF_FLAG,
     ngx_conf_set_flag_slot, NGX_HTTP_LOC_CONF_OFFSET,
     offsetof(mr_idempotency_loc_conf_t, enabled), nullptr},
    {ngx_string("mr_redis"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     mr::ngx::c_entry(remembered<ngx_conf_set_str_slot, offsetof(mr_idempotency_main_conf_t, redis_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_idempotency_main_conf_t, redis), nullptr},
    {ngx_string("mr_redis_sentinel"), NGX_HTTP_MAIN_CONF | NGX_CONF_2MORE, mr::ngx::c_entry(set_redis_sentinel),
     NGX_HTTP_MAIN_CONF_OFFSET, 0, nullptr},
    {ngx_string("mr_redis_password_file"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     mr::ngx::c_entry(
         remembered<ngx_conf_set_str_slot, offsetof(mr_idempotency_main_conf_t, redis_password_file_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_idempotency_main_conf_t, redis_password_file), nullptr},
    {ngx_string("mr_redis_username"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     mr::ngx::c_entry(remembered<ngx_conf_set_str_slot, offsetof(mr_idempotency_main_conf_t, redis_username_where)>),
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_idempotency_main_conf_t, redis_username), nullptr},
    {ngx_string("mr_redis_connect_timeout"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_msec_slot, NGX_HTTP_MAIN_CONF_OFFSET,
     offsetof(mr_idempotency_main_conf_t, connect_timeout), nullptr},
    {ngx_string("mr_redis_timeout"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, ngx_conf_set_msec_slot,
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_idempotency_main_conf_t, command_timeout), nullptr},
    {ngx_string("mr_idempotency_ttl"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_msec_slot, NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_idempotency_main_conf_t, ttl),
     nullptr},
    {ngx_string("mr_idempotency_lock_ttl"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1,
     ngx_conf_set_msec_slot, NGX_HTTP_MAIN_CONF_OFFSET,
     offsetof(mr_idempotency_main_conf_t, lock_ttl), nullptr},
    {ngx_string("mr_idempotency_replay_cache"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, mr::ngx::c_entry(set_replay_cache),
     NGX_HTTP_MAIN_CONF_OFFSET, 0, nullptr},
    ngx_null_command};

void* idempotency_create_main(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<void*>(nullptr), [&]() -> void* {
    auto* mcf = static_cast<mr_idempotency_main_conf_t*>(
        ngx_pcalloc(cf->pool, sizeof(mr_idempotency_main_conf_t)));
    if (mcf == nullptr) return nullptr;
    mcf->connect_timeout = NGX_CONF_UNSET_MSEC;
    mcf->command_timeout = NGX_CONF_UNSET_MSEC;
    mcf->ttl = NGX_CONF_UNSET_MSEC;
    mcf->lock_ttl = NGX_CONF_UNSET_MSEC;
    mcf->replay_cache = NGX_CONF_UNSET_SIZE;
    return mcf;
  });
}

char* idempotency_init_main(ngx_conf_t* cf, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = static_cast<mr_idempotency_main_conf_t*>(conf);
    ngx_conf_init_msec_value(mcf->connect_timeout, 200);
    ngx_conf_init_msec_value(mcf->command_timeout, 200);
    ngx_conf_init_msec_value(mcf->ttl, 24 * 3600 * 1000);
    ngx_conf_init_msec_value(mcf->lock_ttl, 60 * 1000);
    ngx_conf_init_size_value(mcf->replay_cache, 4 * 1024 * 1024);
    if (mcf->redis.len != 0 && mcf->redis_sentinels != nullptr) {
      // Which one would win is a guess an operator should not have to make.
      log_at(cf, mcf->redis_where, NGX_LOG_EMERG, "mr_redis and mr_redis_sentinel: give one of them");
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    if (mcf->redis.len == 0) {
      ngx_str_set(&mcf->redis, "127.0.0.1:6379");  // two statements: braces needed
    }
    // An address, never a name: hiredis would resolve it blocking.
    u_char* colon = static_cast<u_char*>(ngx_strlchr(mcf->redis.data, mcf->redis.data + mcf->redis.len, ':'));
    if (colon == nullptr) {
      log_at(cf, mcf->redis_where, NGX_LOG_EMERG, "mr_redis \"%V\" is not ip:port", &mcf->redis);
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    mcf->redis_host.data = static_cast<u_char*>(ngx_pnalloc(cf->pool, colon - mcf->redis.data + 1));
    if (mcf->redis_host.data == nullptr) return static_cast<char*>(NGX_CONF_ERROR);
    mcf->redis_host.len = colon - mcf->redis.data;
    *ngx_cpymem(mcf->redis_host.data, mcf->redis.data, mcf->redis_host.len) = '\0';
    mcf->redis_port = ngx_atoi(colon + 1, mcf->redis.data + mcf->redis.len - colon - 1);
    if (mcf->redis_port < 1 || mcf->redis_port > 65535 ||
        ngx_inet_addr(mcf->redis_host.data, mcf->redis_host.len) == INADDR_NONE) {
      log_at(cf, mcf->redis_where, NGX_LOG_EMERG, "mr_redis \"%V\" must be an IPv4 address and port", &mcf->redis);
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    if (mcf->redis_username.len != 0 && mcf->redis_password_file.len == 0) {
      log_at(cf, mcf->redis_username_where, NGX_LOG_EMERG, "mr_redis_username needs mr_redis_password_file");
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    if (mcf->redis_password_file.len != 0 &&
        !read_secret_file(cf, "mr_redis_password_file", mcf->redis_password_file_where, mcf->redis_password_file, 1,
                          mcf->redis_password)) {
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    return NGX_CONF_OK;
  });
}

void* idempotency_create_loc(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<void*>(nullptr), [&]() -> void* {
    auto* lcf = static_cast<mr_idempotency_loc_conf_t*>(
        ngx_pcalloc(cf->pool, sizeof(mr_idempotency_loc_conf_t)));
    if (lcf == nullptr) return nullptr;
    lcf->enabled = NGX_CONF_UNSET;
    return lcf;
  });
}

char* idempotency_merge_loc(ngx_conf_t*, mr_idempotency_main_conf_t* main,
                            mr_idempotency_loc_conf_t* prev, mr_idempotency_loc_conf_t* conf) {
  ngx_conf_merge_value(conf->enabled, prev->enabled, 0);
  if (conf->enabled) main->used = 1;
  return NGX_CONF_OK;
}

}  // namespace mr::conf
