// The ops listener's content handler (locations with mr_ops; its own
// server on loopback): /healthz from the worker alone; payouts, readiness
// and metrics behind the bearer token of mr_ops_token_file.
#pragma once

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx::ledger {

ngx_int_t ops_handler(ngx_http_request_t* r);

}  // namespace mr::ngx::ledger
