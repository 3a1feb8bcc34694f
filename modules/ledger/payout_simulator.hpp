// The sandbox payout simulator (mr_payout_simulator on): every second each
// worker asks the database to settle payouts older than the delay; SKIP
// LOCKED there makes workers and nodes share the work without settling any
// payout twice.
#pragma once

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx::ledger {

void start_payout_simulator(ngx_msec_t delay, ngx_log_t* log);
void stop_payout_simulator();

}  // namespace mr::ngx::ledger
