#include "modules/ledger/payout_simulator.hpp"

#include <string>

#include "modules/common/worker_timer.hpp"
#include "modules/ledger/statement_run.hpp"

namespace mr::ngx::ledger {
namespace {

ngx_event_t g_timer;
ngx_msec_t g_delay;
bool g_busy = false;

void simulate(ngx_event_t* ev) {
  auto& pool = worker_pool();
  if (pool && !g_busy) {
    auto job = std::make_unique<mr::pg::Job>();
    job->sql = "SELECT mr_payout_simulate($1::bigint)";
    job->params = {std::to_string(g_delay)};
    ngx_log_t* log = ev->log;
    job->done = [log](mr::pg::Outcome&& outcome) {
      g_busy = false;
      if (outcome.kind != mr::pg::Outcome::Kind::ok) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "mr_payout_simulator: %s", outcome.message.c_str());
      }
    };
    g_busy = true;
    pool->submit(std::move(job));
  }
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
