// nginx variables: filling a value from a get handler, reading one by index.
#pragma once

#include <optional>
#include <string_view>

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

// Fills a variable's value (found, valid) with `len` bytes at `data`,
// which must outlive the request.
inline void set_variable(ngx_http_variable_value_t* v, u_char* data, size_t len, bool cacheable) {
  v->data = data;
  v->len = len;
  v->valid = 1;
  v->no_cacheable = cacheable ? 0 : 1;
  v->not_found = 0;
}

// The value of the variable at `index` (from ngx_http_get_variable_index),
// evaluated if need be; nullopt when NGX_ERROR, not found or out of memory.
std::optional<std::string_view> variable_value(ngx_http_request_t* r, ngx_int_t index);

}  // namespace mr::ngx
