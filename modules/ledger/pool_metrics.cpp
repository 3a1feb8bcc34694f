#include "modules/ledger/pool_metrics.hpp"

#include <cerrno>
#include <csignal>

#include "ngx-boundary/guarded.hpp"
#include "modules/common/node_metrics.hpp"
#include "modules/common/worker_timer.hpp"
#include "modules/ledger/pod_pools.hpp"

namespace mr::ngx::ledger {
namespace {

namespace metrics = mr::metrics;

metrics::PoolSlot* g_slot = nullptr;
metrics::PoolFigures g_base;
ngx_event_t g_timer;

// The worker's pools together, every pod's.
metrics::PoolFigures figures() {
  metrics::PoolFigures sum{};
  for (const PodPool& pod : worker_pods()) {
    const mr::pg::Stats s = pod.pool->stats();
    sum = {sum.in_use + s.in_use, sum.queued + s.queued, sum.timed_out + s.timed_out,
           sum.reconnects + s.reconnects, sum.batches + s.batches, sum.batched_settles + s.batched_settles,
           sum.batch_fallbacks + s.batch_fallbacks, sum.write_batches + s.write_batches,
           sum.batched_writes + s.batched_writes};
  }
  return sum;
}

void on_timer(ngx_event_t* ev) noexcept {
  mr::ngx::guarded(ev->log, [] { publish_pool_metrics(); });
  if (!ngx_exiting) ngx_add_timer(ev, 1000);
}

}  // namespace

bool process_alive(std::uint64_t pid) {
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

void start_pool_metrics(ngx_log_t* log) {
  metrics::Block* block = node_metrics();
  if (block == nullptr) return;
  g_slot = metrics::claim_pool_slot(*block, static_cast<std::uint64_t>(ngx_pid), process_alive, g_base);
  if (g_slot == nullptr) {
    ngx_log_error(NGX_LOG_WARN, log, 0, "mr_metrics_zone: no pool slot left; this worker's pool is not counted");
    return;
  }
  publish_pool_metrics();
  start_worker_timer(g_timer, on_timer, log, 1000);
}

void publish_pool_metrics() {
  if (g_slot != nullptr) metrics::publish(*g_slot, g_base, figures());
}

void stop_pool_metrics() {
  stop_worker_timer(g_timer);
  if (g_slot == nullptr) return;
  metrics::release(*g_slot, g_base, figures());
  g_slot = nullptr;
}

}  // namespace mr::ngx::ledger
