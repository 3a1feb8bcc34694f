// The metrics zone directive (the auth module owns the zone: every other
// module already finds the auth module when a worker starts).
//
//   mr_metrics_zone <name>;   http (default none: no node counters): one
//                             shared memory zone where every worker counts
//                             requests, idempotency outcomes, Redis errors,
//                             the ledger pool and the key catalogue; the
//                             ops listener serves them at /metrics
#pragma once

#include "ngx-boundary/nginx.hpp"

struct mr_metrics_conf_t {
  ngx_str_t zone_name;   // empty: no counters
  ngx_shm_zone_t* zone;  // added by the auth module at postconfiguration
};

namespace mr::conf {

// The directive's handler; `cmd->offset` locates an mr_metrics_conf_t in
// the module's main conf. A zone name is 1 to 64 of [A-Za-z0-9_-].
char* set_metrics_zone(ngx_conf_t* cf, ngx_command_t* cmd, void* conf) noexcept;

}  // namespace mr::conf
