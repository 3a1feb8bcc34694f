#include "lua-free-config/conf_where.hpp"

#include <cstdarg>

namespace mr::conf {

void remember(ngx_conf_t* cf, mr_conf_where_t& where) {
  if (cf->conf_file == nullptr) return;
  // The name lives in the cycle's pool (nginx keeps it for its own errors).
  where.file = cf->conf_file->file.name;
  where.line = cf->conf_file->line;
}

void log_at(ngx_conf_t* cf, const mr_conf_where_t& where, ngx_uint_t level, const char* fmt, ...) {
  u_char text[NGX_MAX_CONF_ERRSTR];
  va_list args;
  va_start(args, fmt);
  const u_char* end = ngx_vslprintf(text, text + sizeof text, fmt, args);
  va_end(args);
  ngx_conf_file_t* current = cf->conf_file;
  ngx_conf_file_t at{};
  if (where.file.len != 0 && current != nullptr) {
    at = *current;
    at.file.name = where.file;
    at.line = where.line;
    cf->conf_file = &at;
  }
  ngx_conf_log_error(level, cf, 0, "%*s", static_cast<size_t>(end - text), text);
  cf->conf_file = current;
}

}  // namespace mr::conf
