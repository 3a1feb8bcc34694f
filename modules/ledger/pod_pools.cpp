#include "modules/ledger/pod_pools.hpp"

#include "keys/key_catalogue.hpp"
#include "modules/common/request_context.hpp"
#include "modules/common/request_reading.hpp"

namespace mr::ngx::ledger {

std::vector<PodPool>& worker_pods() {
  static std::vector<PodPool> pods;  // one set per worker process
  return pods;
}

mr::pg::Pool* pod_pool(std::size_t pod) {
  auto& pods = worker_pods();
  return pod < pods.size() ? pods[pod].pool.get() : nullptr;
}

mr::pg::Pool* pool_of(ngx_http_request_t* r) {
  const RequestContext* ctx = authenticated(r);
  return pod_pool(ctx != nullptr && ctx->key != nullptr ? ctx->key->pod : 0);
}

void start_pod_pools(const mr_ledger_main_conf_t& mcf, const mr::KeyCatalogue* catalogue, ngx_log_t* log) {
  auto settings = [&mcf](std::string dsn) {
    mr::pg::Settings s;
    s.dsn = std::move(dsn);
    s.size = mcf.pool_size;
    s.settle_connections = mcf.settle_connections;
    s.queue_limit = mcf.queue_size;
    s.connect_timeout = mcf.connect_timeout;
    s.query_timeout = mcf.query_timeout;
    return s;
  };
  auto& pods = worker_pods();
  pods.clear();
  pods.push_back({std::string(mr::kHomePod), std::make_unique<mr::pg::Pool>(settings(std::string(view(mcf.dsn))), log)});
  if (catalogue == nullptr) return;
  for (const mr::PodAddress& pod : catalogue->pods()) {
    pods.push_back({pod.name, std::make_unique<mr::pg::Pool>(settings(pod.conninfo), log)});
  }
}

void stop_pod_pools() { worker_pods().clear(); }

}  // namespace mr::ngx::ledger
