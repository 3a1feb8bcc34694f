// Helpers every mr module uses to answer with the JSON envelope.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "ledger/errors.hpp"
#include "lua-free-config/nginx.hpp"
#include "modules/common/request_id.hpp"

namespace mr::ngx {

inline std::string_view view(const ngx_str_t& s) {
  return {reinterpret_cast<const char*>(s.data), s.len};
}

// Copies into the request pool (nginx keeps pointers past our stack frames).
ngx_str_t pool_string(ngx_pool_t* pool, std::string_view s);

// A request header's name as nginx keeps every parsed header: lower-case,
// with nginx's hash of it (ngx_hash over the lower-case bytes), so a lookup
// compares a hash before any byte. Built at compile time from a lower-case
// literal.
struct HeaderName {
  std::string_view lower;
  ngx_uint_t hash = 0;

  template <std::size_t N>
  consteval HeaderName(const char (&name)[N]) : lower(name, N - 1) {
    for (const char c : lower) {
      if (c >= 'A' && c <= 'Z') throw "header names are written lower-case";
      hash = ngx_hash(hash, static_cast<u_char>(c));
    }
  }
};

// First request header with this name (case-insensitive), if any.
std::optional<std::string_view> header_in(ngx_http_request_t* r, const HeaderName& name);
// Several request headers in one pass over the list: found[i] is the first
// header named names[i], else nullopt.
void headers_in(ngx_http_request_t* r, std::span<const HeaderName> names,
                std::span<std::optional<std::string_view>> found);

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

// Adds a response header; false when out of memory.
bool add_header_out(ngx_http_request_t* r, std::string_view name, std::string_view value);

// The request's W3C traceparent header when it is valid (first 55
// characters), else nullopt: an invalid one is ignored.
std::optional<std::string_view> traceparent(ngx_http_request_t* r);

// Path exactly as on the request line, without the query string.
std::string_view raw_path(ngx_http_request_t* r);

// The request body as one contiguous view: in place, or joined into the
// pool from several buffers and whatever nginx spooled to its temp file;
// nullopt when out of memory or the temp file cannot be read back.
std::optional<std::string_view> request_body(ngx_http_request_t* r);

// Sends status + JSON body (a failure envelope's `error` code noted for the
// log phase) and returns what the handler should hand to
// ngx_http_finalize_request (or return from a content handler).
// content_type must outlive the request (a literal).
ngx_int_t send_json(ngx_http_request_t* r, ngx_uint_t status, std::string_view body,
                    std::optional<ErrorCode> error = std::nullopt,
                    std::string_view content_type = "application/json");

// For a handler that answers without reading the body: nginx reads and drops
// it (or the connection closes after the answer).
void discard_body(ngx_http_request_t* r);

// Sends the failure envelope for `code`; 429 and 503 get Retry-After: 1.
ngx_int_t send_error(ngx_http_request_t* r, ErrorCode code, std::string_view message = {},
                     std::span<const FieldProblem> details = {});

}  // namespace mr::ngx
