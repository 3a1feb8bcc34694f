// Where a directive was written, so that an error found later (when the
// http block is done, at merge or at postconfiguration) points at the
// directive's own file and line instead of the end of the http block.
#pragma once

#include <cstddef>

#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/nginx.hpp"

// Empty (file.len 0) until the directive is read.
struct mr_conf_where_t {
  ngx_str_t file;
  ngx_uint_t line;
};

namespace mr::conf {

// The directive nginx is reading now.
void remember(ngx_conf_t* cf, mr_conf_where_t& where);

// ngx_conf_log_error, but " in <file>:<line>" names `where` when known.
void log_at(ngx_conf_t* cf, const mr_conf_where_t& where, ngx_uint_t level, const char* fmt, ...);

// A directive setter that runs nginx's `Slot` and, when it succeeds,
// remembers where the directive was in the conf's mr_conf_where_t at
// offset `Where`.
template <char* (*Slot)(ngx_conf_t*, ngx_command_t*, void*), std::size_t Where>
char* remembered(ngx_conf_t* cf, ngx_command_t* cmd, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    char* rv = Slot(cf, cmd, conf);
    if (rv == NGX_CONF_OK) remember(cf, *reinterpret_cast<mr_conf_where_t*>(static_cast<char*>(conf) + Where));
    return rv;
  });
}

}  // namespace mr::conf
