// Tells this worker's pool which settles are on their way to it, so a free
// connection can wait for them (pg_pool.hpp, settle_arriving): a settle
// past authentication holds a ticket from the access phase, before its
// idempotency claim goes to Redis, until it is submitted or answered in any
// other way (a replay, a refusal, an error: the header filter), or at the
// latest until its request is freed (a client gone). So a ticket is held
// for the idempotency claim's Redis commands past the access phase: one,
// two when a pending record is confirmed, each bounded by mr_redis_timeout.
#pragma once

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx::ledger {

// At postconfiguration: the access-phase handler (before the idempotency
// claim, which mr_idempotency puts last in the phase) and the header filter.
bool install_settle_gate(ngx_http_core_main_conf_t* cmcf);
// The settle reached the pool: its ticket is given back (no-op without one).
void settle_reached_pool(ngx_http_request_t* r);

}  // namespace mr::ngx::ledger
