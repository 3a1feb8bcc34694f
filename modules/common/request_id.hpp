// Request ids: X-Request-Id, error.requestId, the access log's requestId.
#pragma once

#include <string_view>

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

// The get handler of $mr_request_id (registered by the auth module): 32 hex
// digits, a random prefix drawn once per worker process followed by that
// worker's request counter. nginx caches the value for the request, error
// page redirects included.
//
// Why not nginx's $request_id: it draws 16 fresh bytes from RAND_bytes for
// every request, about a tenth of the edge's CPU in a profile of signed
// POSTs. An id needs to be unique, not secret: 64 random bits per worker
// start make two workers (or two starts) sharing a prefix a 1 in 2^64
// event, and the counter keeps every id of one worker distinct. Nothing
// is authorised by knowing a request id.
ngx_int_t generate_request_id(ngx_http_request_t* r, ngx_http_variable_value_t* v);

// This request's id ($mr_request_id). Call init_request_id() at config time.
ngx_int_t init_request_id(ngx_conf_t* cf);
std::string_view request_id(ngx_http_request_t* r);

}  // namespace mr::ngx
