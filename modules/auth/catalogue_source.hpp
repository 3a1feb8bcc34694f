// Where the key catalogue comes from at start, reload and `nginx -t`: the
// database, else the last-known-good snapshot (keys/catalogue_snapshot.hpp)
// written after the last load that read it; and what the load has to say,
// logged once the configured error log is open.
#pragma once

#include <string>

#include "keys/secret_box.hpp"
#include "lua-free-config/auth_conf.hpp"

namespace mr::auth {

// Loads the keys into mcf (catalogue, source, times) from the database and
// writes the snapshot, or, when the database cannot be read, from the
// snapshot. With neither, mcf->catalogue stays null and the report holds
// the reason at emerg. NGX_ERROR only when nginx itself fails (memory).
ngx_int_t load_keys(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, const mr::MasterKey& master);

// Adds a line for the report (cf->pool); false when out of memory.
bool report(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, ngx_uint_t level, std::string text);

// A small shared memory zone whose init, which nginx runs once the new
// configuration's files are open, writes the report to the configured
// error log (and, before nginx daemonizes, the terminal) and fails the
// start, reload or test on an emerg line. At configuration time only the
// previous error log (at start: nginx's compiled-in one) is open.
ngx_int_t add_catalogue_report(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, void* tag);

}  // namespace mr::auth
