#include "modules/common/variables.hpp"

namespace mr::ngx {

std::optional<std::string_view> variable_value(ngx_http_request_t* r, ngx_int_t index) {
  if (index == NGX_ERROR) return std::nullopt;
  const ngx_http_variable_value_t* v = ngx_http_get_indexed_variable(r, index);
  if (v == nullptr || v->not_found || !v->valid) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(v->data), v->len);
}

}  // namespace mr::ngx
