// The node's counters in the shared memory zone mr_metrics_zone names: the
// auth module adds the zone and counts every finished request in the log
// phase (route, status, error code, duration). The master writes the key
// catalogue's figures into the zone whenever it (re)loads the catalogue.
#pragma once

#include "lua-free-config/auth_conf.hpp"

namespace mr::auth {

// At postconfiguration, after the catalogue was loaded; `tag` is the auth
// module, so a reload with the same module keeps the counters.
ngx_int_t add_metrics_zone(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, void* tag);

}  // namespace mr::auth
