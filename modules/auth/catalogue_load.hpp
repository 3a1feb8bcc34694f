// Loading the key catalogue (keys/) into a configuration's cycle.
#pragma once

#include "lua-free-config/auth_conf.hpp"

namespace mr::auth {

// Reads the master key, then the keys and clubs of the configured
// environment from PostgreSQL, or from the last-known-good snapshot when
// the database cannot be read (catalogue_source.hpp). Runs in the master at
// start and reload, and in `nginx -t`; never for `nginx -s`. Without the
// master key, or with neither the database nor a snapshot, the new
// configuration is refused and a running one keeps serving.
ngx_int_t load_catalogue(ngx_conf_t* cf, mr_auth_main_conf_t* mcf);

}  // namespace mr::auth
