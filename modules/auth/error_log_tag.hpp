// The request id in the error log: every line nginx or a module writes
// through a request's log while that request is in hand ends with
// `, request_id: "<X-Request-Id>"`, after nginx's own client, server,
// request and host, so a partner's quoted id finds the line behind a 500.
#pragma once

#include "ngx-boundary/nginx.hpp"

namespace mr::auth {

// For a main request in a location with mr_request_id or mr_auth on:
// wraps its log handler (idempotent; kept across internal redirects).
void tag_error_log(ngx_http_request_t* r);

}  // namespace mr::auth
