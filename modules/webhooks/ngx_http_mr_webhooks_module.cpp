// The webhooks module: webhook delivery from every nginx worker
// (delivery_engine.hpp). Built into the ledger module's file, since it
// claims and reports through that worker's ledger pool; listed before the
// ledger module there, so nginx stops the engine (exit_process) before the
// pool goes. Directives: lua-free-config/webhooks_conf.
#include <curl/curl.h>

#include "keys/key_catalogue.hpp"
#include "keys/webhook_secret.hpp"
#include "lua-free-config/conf_values.hpp"
#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/http_module.hpp"
#include "lua-free-config/ledger_conf.hpp"
#include "lua-free-config/webhooks_conf.hpp"
#include "modules/common/request_context.hpp"
#include "modules/webhooks/delivery_engine.hpp"

extern "C" ngx_module_t ngx_http_mr_webhooks_module;
extern "C" ngx_module_t ngx_http_mr_ledger_module;

namespace {

namespace wh = mr::ngx::webhooks;

// One engine per pod (modules/ledger/pod_pools.hpp): each claims and
// reports on its pod's pool and listens on its pod's database, so a pod's
// deliveries never leave it and one pod's outage stalls only its own.
std::vector<std::unique_ptr<wh::Engine>>& engines() {
  static std::vector<std::unique_ptr<wh::Engine>> e;  // one set per worker process
  return e;
}

bool g_curl_ready = false;

ngx_int_t postconfiguration(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, NGX_ERROR, [&]() -> ngx_int_t {
    auto* wcf = static_cast<mr_webhooks_main_conf_t*>(ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_webhooks_module));
    const auto* lcf =
        static_cast<const mr_ledger_main_conf_t*>(ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_ledger_module));
    const mr_auth_main_conf_t* auth = mr::ngx::auth_main_conf(cf->cycle);
    const bool sandbox = auth != nullptr && mr::conf::view(auth->environment) == "sandbox";
    return mr::conf::webhooks_resolve(cf, wcf, lcf->used != 0, sandbox) ? NGX_OK : NGX_ERROR;
  });
}

ngx_int_t init_process(ngx_cycle_t* cycle) noexcept {
  const auto* wcf = static_cast<const mr_webhooks_main_conf_t*>(
      ngx_http_cycle_get_module_main_conf(cycle, ngx_http_mr_webhooks_module));
  const auto* lcf = static_cast<const mr_ledger_main_conf_t*>(
      ngx_http_cycle_get_module_main_conf(cycle, ngx_http_mr_ledger_module));
  if (wcf == nullptr || lcf == nullptr || !wcf->delivery || !lcf->used) return NGX_OK;
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    ngx_log_error(NGX_LOG_EMERG, cycle->log, 0, "mr_webhook: libcurl cannot start");
    return NGX_ERROR;
  }
  g_curl_ready = true;
  return mr::ngx::guarded(
      cycle->log,
      [&]() -> ngx_int_t {
        wh::EngineSettings s;
        const mr_auth_main_conf_t* auth = mr::ngx::auth_main_conf(cycle);
        if (auth != nullptr) {
          s.environment.assign(mr::conf::view(auth->environment));
          if (auth->webhook_secret_key_set) {
            mr::MasterKey key;
            std::copy(std::begin(auth->webhook_secret_key), std::end(auth->webhook_secret_key), key.bytes.begin());
            s.sealing_key = std::move(key);
          }
        }
        if (!s.sealing_key) {
          ngx_log_error(NGX_LOG_WARN, cycle->log, 0,
                        "mr_webhook: no webhook secret key (mr_master_key_file): deliveries cannot be signed");
        }
        s.connect_timeout = lcf->connect_timeout;
        const auto* steps = static_cast<const ngx_msec_t*>(wcf->schedule->elts);
        s.schedule_ms.assign(steps, steps + wcf->schedule->nelts);
        s.timeout = wcf->timeout;
        s.poll = wcf->poll;
        s.concurrency = wcf->concurrency;
        s.insecure_targets = wcf->insecure_targets != 0;
        // The pods in the order of the ledger's pools: the home pod, then the
        // catalogue's.
        std::vector<std::string> dsns{std::string(mr::conf::view(lcf->dsn))};
        if (auth != nullptr && auth->catalogue != nullptr) {
          for (const mr::PodAddress& pod : auth->catalogue->pods()) dsns.push_back(pod.conninfo);
        }
        for (std::size_t pod = 0; pod < dsns.size(); ++pod) {
          wh::EngineSettings one = s;
          one.pod = pod;
          one.dsn = std::move(dsns[pod]);
          engines().push_back(std::make_unique<wh::Engine>(std::move(one), cycle->log));
        }
        for (auto& e : engines()) e->start();
        return NGX_OK;
      },
      [cycle]() noexcept -> ngx_int_t {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0, "mr_webhook: cannot start webhook delivery");
        return NGX_ERROR;
      });
}

void exit_process(ngx_cycle_t* cycle) noexcept {
  mr::ngx::guarded(cycle->log, [] { engines().clear(); });
  if (g_curl_ready) {
    curl_global_cleanup();
    g_curl_ready = false;
  }
}

ngx_http_module_t module_ctx = {
    nullptr,                                           // preconfiguration
    mr::ngx::c_entry(postconfiguration),               // postconfiguration
    mr::ngx::c_entry(mr::conf::webhooks_create_main),  // create main configuration
    mr::ngx::c_entry(mr::conf::webhooks_init_main),    // init main configuration
    nullptr,                                           // create server configuration
    nullptr,                                           // merge server configuration
    nullptr,                                           // create location configuration
    nullptr,                                           // merge location configuration
};

}  // namespace

extern "C" {
constinit ngx_module_t ngx_http_mr_webhooks_module = mr::ngx::http_module(&module_ctx, mr::conf::webhooks_commands, init_process, exit_process);
}
