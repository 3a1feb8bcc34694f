// $mr_route and $mr_log_fields: what the access log says of a request
// (the mr_json format in conf/snippets/mr-http.conf).
#pragma once

#include <optional>
#include <string_view>

#include "ngx-boundary/nginx.hpp"
#include "modules/common/request_context.hpp"

namespace mr::auth {

// At postconfiguration: where $upstream_response_time and, when a module
// defines it, $mr_idempotency live.
ngx_int_t init_access_log(ngx_conf_t* cf);

// $mr_route: $uri with every byte outside printable ASCII (and '%', '"',
// '\\') percent-encoded, so a log line holds no raw client bytes; in the
// request pool, nullopt when out of memory.
std::optional<std::string_view> logged_route(ngx_http_request_t* r);

// $mr_log_fields: mr::access_log_members of the request, whose auth context
// is `ctx` (nullptr when mr_auth did not see it). Always found: the format
// writes it unescaped.
ngx_int_t log_fields_value(ngx_http_request_t* r, ngx_http_variable_value_t* v,
                           const mr::ngx::RequestContext* ctx);

}  // namespace mr::auth
