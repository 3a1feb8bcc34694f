// What a request brings, read in place: nginx strings as views, request
// headers, the raw path, the body, the W3C traceparent.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "ngx-boundary/nginx.hpp"

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

// The request's W3C traceparent header when it is valid (first 55
// characters), else nullopt: an invalid one is ignored.
std::optional<std::string_view> traceparent(ngx_http_request_t* r);

// Path exactly as on the request line, without the query string.
std::string_view raw_path(ngx_http_request_t* r);

// The request body as one contiguous view: in place, or joined into the
// pool from several buffers and whatever nginx spooled to its temp file;
// nullopt when out of memory or the temp file cannot be read back.
std::optional<std::string_view> request_body(ngx_http_request_t* r);

// For a handler that answers without reading the body: nginx reads and drops
// it (or the connection closes after the answer).
void discard_body(ngx_http_request_t* r);

}  // namespace mr::ngx
