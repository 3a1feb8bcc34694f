// The node's counters (modules/common/metrics_block.hpp) as each module .so
// sees them.
#pragma once

#include "lua-free-config/auth_conf.hpp"
#include "ngx-boundary/nginx.hpp"
#include "modules/common/metrics_block.hpp"

namespace mr::ngx {

// This worker's counters in shared memory; nullptr without mr_metrics_zone.
mr::metrics::Block* node_metrics();
// At a worker's start, from the auth module's main conf (its zone).
void bind_node_metrics(const mr_auth_main_conf_t* auth);
// The block in a configured zone (nullptr before the zone is initialised).
mr::metrics::Block* zone_block(const mr_metrics_conf_t& conf);

}  // namespace mr::ngx
