// Loading the key catalogue (keys/) into a configuration's cycle.
#pragma once

#include "lua-free-config/auth_conf.hpp"

namespace mr::auth {

// Reads keys and clubs of the configured environment from PostgreSQL with
// the master key. Runs in the master at start and reload: on failure the
// new configuration is refused and the running one keeps serving.
ngx_int_t load_catalogue(ngx_conf_t* cf, mr_auth_main_conf_t* mcf);

}  // namespace mr::auth
