// Runs what the domain prepared (ledger/api.hpp) for a request: an
// immediate answer, or one statement on this worker's PostgreSQL pool
// whose result the domain renders. Shared by the partner handler and the
// ops listener.
#pragma once

#include <memory>

#include "ledger/api.hpp"
#include "lua-free-config/nginx.hpp"
#include "modules/ledger/pg_pool.hpp"

namespace mr::ngx::ledger {

// This worker's pool (null before init_process or when no location uses it).
std::unique_ptr<mr::pg::Pool>& worker_pool();

// What a content handler returns: the answer's rc, or NGX_DONE while the
// statement runs (the request is finalized when it completes).
ngx_int_t run_prepared(ngx_http_request_t* r, mr::ledger::Prepared prepared);

ngx_int_t answer_internal_error(ngx_http_request_t* r);

// A content handler's start: reads the body (at once if the access phase
// already did), then runs `Start`, which answers or returns NGX_DONE.
template <ngx_int_t (*Start)(ngx_http_request_t*)>
ngx_int_t read_body_then(ngx_http_request_t* r) {
  r->request_body_in_single_buf = 1;
  const ngx_int_t rc = ngx_http_read_client_request_body(r, [](ngx_http_request_t* req) {
    ngx_int_t done;
    try {
      done = Start(req);
    } catch (...) {
      done = answer_internal_error(req);
    }
    if (done != NGX_DONE) ngx_http_finalize_request(req, done);
  });
  if (rc >= NGX_HTTP_SPECIAL_RESPONSE) return rc;
  return NGX_DONE;
}

}  // namespace mr::ngx::ledger
