// Secrets named by file in nginx.conf (the ops token, the Redis password):
// read by the master at (re)load under the master key's rule (a regular
// file, no group or other bits, owned by the master's user or root:
// keys/private_file.hpp), kept in the configuration pool, wiped when that
// pool goes.
#pragma once

#include <cstddef>

#include "lua-free-config/conf_where.hpp"
#include "ngx-boundary/nginx.hpp"

namespace mr::conf {

// The file's content without trailing newlines or spaces, min_len to 511
// bytes, into `out` (cf->pool); false after a one-line nginx -t error
// naming `directive`, at `where` it was written.
bool read_secret_file(ngx_conf_t* cf, const char* directive, const mr_conf_where_t& where, const ngx_str_t& path,
                      std::size_t min_len, ngx_str_t& out);

}  // namespace mr::conf
