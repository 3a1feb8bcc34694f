// Helpers every mr module uses to answer with the JSON envelope.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "ledger/errors.hpp"
#include "lua-free-config/nginx.hpp"

namespace mr::ngx {

inline std::string_view view(const ngx_str_t& s) {
  return {reinterpret_cast<const char*>(s.data), s.len};
}

// Copies into the request pool (nginx keeps pointers past our stack frames).
ngx_str_t pool_string(ngx_pool_t* pool, std::string_view s);

// First request header with this name (case-insensitive), if any.
std::optional<std::string_view> header_in(ngx_http_request_t* r, std::string_view name);

// Adds a response header; false when out of memory.
bool add_header_out(ngx_http_request_t* r, std::string_view name, std::string_view value);

// nginx's $request_id for this request (32 hex characters, stable across
// internal redirects to error pages). Call init_request_id() at config time
// (it also finds $mr_route_name and $mr_error_code, see node_metrics.hpp).
ngx_int_t init_request_id(ngx_conf_t* cf);
std::string_view request_id(ngx_http_request_t* r);

// The request's W3C traceparent header when it is valid (first 55
// characters), else nullopt: an invalid one is ignored.
std::optional<std::string_view> traceparent(ngx_http_request_t* r);

// Path exactly as on the request line, without the query string.
std::string_view raw_path(ngx_http_request_t* r);

// The request body read in memory as one contiguous view (joined into the
// pool if nginx kept several buffers); nullopt if it went to a file.
std::optional<std::string_view> request_body(ngx_http_request_t* r);

// Sends status + JSON body (an error envelope's code noted for the log
// phase) and returns what the handler should hand to
// ngx_http_finalize_request (or return from a content handler).
ngx_int_t send_json(ngx_http_request_t* r, ngx_uint_t status, std::string_view body);

// Sends the failure envelope for `code`; 429 and 503 get Retry-After: 1.
ngx_int_t send_error(ngx_http_request_t* r, ErrorCode code, std::string_view message = {},
                     std::span<const FieldProblem> details = {});

}  // namespace mr::ngx
