// This worker's ledger pool figures (mr::pg::Pool::stats) in the node's
// counters: the worker takes a slot of the shared zone when it starts,
// publishes every second and right before it answers /metrics, and leaves
// the slot when it exits. The pool itself knows nothing of shared memory.
#pragma once

#include <cstdint>

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx::ledger {

void start_pool_metrics(ngx_log_t* log);  // after the pool exists
void publish_pool_metrics();
void stop_pool_metrics();  // before the pool goes
// Whether a worker process is still running (its slot's gauges count).
bool process_alive(std::uint64_t pid);

}  // namespace mr::ngx::ledger
