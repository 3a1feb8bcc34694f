#include "modules/ledger/payout_simulator.hpp"

#include <string>
#include <vector>

#include "ledger/statements.hpp"
#include "ngx-boundary/guarded.hpp"
#include "modules/common/worker_timer.hpp"
#include "modules/ledger/pod_pools.hpp"

namespace mr::ngx::ledger {
namespace {

ngx_event_t g_timer;
ngx_msec_t g_delay;
std::vector<bool> g_busy;  // per pod: its last pass has not answered yet

// Each pod settles its own payouts: a pass per pod, one at a time each.
void simulate(ngx_event_t* ev) noexcept {
  mr::ngx::guarded(ev->log, [&] {
    auto& pods = worker_pods();
    g_busy.resize(pods.size(), false);
    for (std::size_t i = 0; i < pods.size(); ++i) {
      if (g_busy[i]) continue;
      auto job = std::make_unique<mr::pg::Job>();
      job->sql = mr::ledger::sql::payout_simulate;
      job->params = {std::to_string(g_delay)};
      ngx_log_t* log = ev->log;
      const std::string pod = pods[i].name;
      job->done = [log, i, pod](mr::pg::Outcome&& outcome) {
        if (i < g_busy.size()) g_busy[i] = false;
        if (outcome.kind != mr::pg::Outcome::Kind::ok) {
          ngx_log_error(NGX_LOG_WARN, log, 0, "mr_payout_simulator: pod %s: %s", pod.c_str(), outcome.message.c_str());
        }
      };
      g_busy[i] = true;
      pods[i].pool->submit(std::move(job));
    }
  });
  if (!ngx_exiting) ngx_add_timer(ev, 1000);
}

}  // namespace

void start_payout_simulator(ngx_msec_t delay, ngx_log_t* log) {
  g_delay = delay;
  start_worker_timer(g_timer, simulate, log, 1000);
}

void stop_payout_simulator() {
  stop_worker_timer(g_timer);
}

}  // namespace mr::ngx::ledger
