// The partner API's content handler (locations with mr_ledger): hands a
// request that passed the edge to the domain (ledger/) with the club, body
// and fingerprint the auth module kept in the request context.
#pragma once

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx::ledger {

ngx_int_t partner_handler(ngx_http_request_t* r);

}  // namespace mr::ngx::ledger
