#include "lua-free-config/webhooks_conf.hpp"

#include "ngx-boundary/guarded.hpp"

#include <array>

namespace mr::conf {
namespace {

// As modules/webhooks/schedule.hpp has them (this library links no module code).
constexpr std::array<ngx_msec_t, 8> kDefaultSchedule = {0, 5000, 300000, 1800000, 7200000, 18000000, 36000000,
                                                        36000000};
constexpr ngx_uint_t kMaxSteps = 32;
constexpr ngx_msec_t kMaxStep = 86400000;  // a day

char* error(ngx_conf_t* cf, const char* line) {
  ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s", line);
  return static_cast<char*>(NGX_CONF_ERROR);
}

// mr_webhook_schedule 0 5s 5m ...: every wait parsed as nginx times.
char* set_schedule(ngx_conf_t* cf, ngx_command_t*, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* wcf = static_cast<mr_webhooks_main_conf_t*>(conf);
    if (wcf->schedule != nullptr) return const_cast<char*>("is duplicate");
    auto* value = static_cast<ngx_str_t*>(cf->args->elts);
    const ngx_uint_t steps = cf->args->nelts - 1;
    if (steps > kMaxSteps) return error(cf, "mr_webhook_schedule takes at most 32 attempts");
    wcf->schedule = ngx_array_create(cf->pool, steps, sizeof(ngx_msec_t));
    if (wcf->schedule == nullptr) return static_cast<char*>(NGX_CONF_ERROR);
    for (ngx_uint_t i = 1; i <= steps; ++i) {
      const ngx_int_t ms = ngx_parse_time(&value[i], 0);
      if (ms == NGX_ERROR) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_webhook_schedule: \"%V\" is not a time", &value[i]);
        return static_cast<char*>(NGX_CONF_ERROR);
      }
      if (static_cast<ngx_msec_t>(ms) > kMaxStep) {
        ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_webhook_schedule: \"%V\" is longer than a day", &value[i]);
        return static_cast<char*>(NGX_CONF_ERROR);
      }
      if (i == 1 && ms != 0) {
        return error(cf, "mr_webhook_schedule: the first attempt is sent at once, so the first wait is 0 "
                         "(e.g. \"mr_webhook_schedule 0 5s 5m;\")");
      }
      *static_cast<ngx_msec_t*>(ngx_array_push(wcf->schedule)) = static_cast<ngx_msec_t>(ms);
    }
    return NGX_CONF_OK;
  });
}

}  // namespace

ngx_command_t webhooks_commands[] = {
    {ngx_string("mr_webhook_delivery"), NGX_HTTP_MAIN_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot,
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_webhooks_main_conf_t, delivery), nullptr},
    {ngx_string("mr_webhook_schedule"), NGX_HTTP_MAIN_CONF | NGX_CONF_1MORE,
     mr::ngx::c_entry(set_schedule), NGX_HTTP_MAIN_CONF_OFFSET,
     0, nullptr},
    {ngx_string("mr_webhook_timeout"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, ngx_conf_set_msec_slot,
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_webhooks_main_conf_t, timeout), nullptr},
    {ngx_string("mr_webhook_concurrency"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, ngx_conf_set_num_slot,
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_webhooks_main_conf_t, concurrency), nullptr},
    {ngx_string("mr_webhook_poll"), NGX_HTTP_MAIN_CONF | NGX_CONF_TAKE1, ngx_conf_set_msec_slot,
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_webhooks_main_conf_t, poll), nullptr},
    {ngx_string("mr_webhook_insecure_targets"), NGX_HTTP_MAIN_CONF | NGX_CONF_FLAG, ngx_conf_set_flag_slot,
     NGX_HTTP_MAIN_CONF_OFFSET, offsetof(mr_webhooks_main_conf_t, insecure_targets), nullptr},
    ngx_null_command};

void* webhooks_create_main(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<void*>(nullptr), [&]() -> void* {
    auto* wcf = static_cast<mr_webhooks_main_conf_t*>(ngx_pcalloc(cf->pool, sizeof(mr_webhooks_main_conf_t)));
    if (wcf == nullptr) return nullptr;
    wcf->delivery = NGX_CONF_UNSET;
    wcf->schedule = nullptr;
    wcf->timeout = NGX_CONF_UNSET_MSEC;
    wcf->concurrency = NGX_CONF_UNSET_UINT;
    wcf->poll = NGX_CONF_UNSET_MSEC;
    wcf->insecure_targets = NGX_CONF_UNSET;
    return wcf;
  });
}

char* webhooks_init_main(ngx_conf_t* cf, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* wcf = static_cast<mr_webhooks_main_conf_t*>(conf);
    ngx_conf_init_msec_value(wcf->timeout, 15000);
    ngx_conf_init_uint_value(wcf->concurrency, 16);
    ngx_conf_init_msec_value(wcf->poll, 5000);
    if (wcf->schedule == nullptr) {
      wcf->schedule = ngx_array_create(cf->pool, kDefaultSchedule.size(), sizeof(ngx_msec_t));
      if (wcf->schedule == nullptr) return static_cast<char*>(NGX_CONF_ERROR);
      for (const ngx_msec_t step : kDefaultSchedule) {
        *static_cast<ngx_msec_t*>(ngx_array_push(wcf->schedule)) = step;
      }
    }
    if (wcf->timeout < 100 || wcf->timeout > 300000) return error(cf, "mr_webhook_timeout must be 100ms..5m");
    if (wcf->concurrency < 1 || wcf->concurrency > 1024) return error(cf, "mr_webhook_concurrency must be 1..1024");
    if (wcf->poll < 100 || wcf->poll > 3600000) return error(cf, "mr_webhook_poll must be 100ms..1h");
    return NGX_CONF_OK;
  });
}

bool webhooks_resolve(ngx_conf_t* cf, mr_webhooks_main_conf_t* conf, bool ledger_used, bool sandbox) {
  ngx_conf_init_value(conf->insecure_targets, sandbox ? 1 : 0);
  if (conf->insecure_targets && !sandbox) {
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "mr_webhook_insecure_targets on lets deliveries reach http:// URLs and loopback or "
                       "private addresses and is for \"mr_environment sandbox\" only: set "
                       "\"mr_webhook_insecure_targets off\"");
    return false;
  }
  // Delivery needs the ledger's database, which only a node serving the
  // ledger has (mr_ledger_dsn with mr_ledger or mr_ops).
  ngx_conf_init_value(conf->delivery, ledger_used ? 1 : 0);
  if (conf->delivery && !ledger_used) {
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                       "mr_webhook_delivery on needs the ledger's database: add a location with mr_ledger "
                       "or mr_ops (and mr_ledger_dsn), or set \"mr_webhook_delivery off\"");
    return false;
  }
  return true;
}

}  // namespace mr::conf
