// Runs what the domain prepared (ledger/api.hpp) for a request: an
// immediate answer, or one statement on the pool of its club's pod
// (pod_pools.hpp) whose result the domain renders. Shared by the partner handler and the
// ops listener.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ledger/api.hpp"
#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/nginx.hpp"
#include "modules/ledger/pod_pools.hpp"

namespace mr::ngx::ledger {

// What a content handler returns: the answer's rc, or NGX_DONE while the
// statement runs (the request is finalized when it completes).
ngx_int_t run_prepared(ngx_http_request_t* r, mr::ledger::Prepared prepared);

ngx_int_t answer_internal_error(ngx_http_request_t* r);

// What one pod answered to a statement that every pod was asked.
struct PodAnswer {
  std::string pod;
  mr::pg::Outcome outcome;
};

// Runs `query` on every pod's pool at once and answers with what `combine`
// makes of their outcomes (in pod order) once the last is in (NGX_DONE);
// with no pool, at once from no outcome. For the ops listener, which
// speaks for every pod.
ngx_int_t run_on_every_pod(ngx_http_request_t* r, const mr::ledger::Query& query,
                           std::function<mr::ledger::Response(const std::vector<PodAnswer>&)> combine);

// The domain's answer to an outcome of `pending`'s statement (failures
// logged with the request id); nullopt when it has none: internal_error for
// a statement that failed, service_unavailable otherwise.
std::optional<mr::ledger::Response> domain_answer(ngx_http_request_t* r, const mr::ledger::Pending& pending,
                                                  const mr::pg::Outcome& outcome);

// What an outcome the domain had no answer for is answered with: a failed
// statement's SQLSTATE as mr::code_for_sqlstate says (ledger/errors.hpp),
// service_unavailable when the database did not answer.
mr::ErrorCode unanswered_code(const mr::pg::Outcome& outcome);

// An ok outcome's rows, as the domain reads them.
std::unique_ptr<mr::ledger::ResultView> rows_of(const mr::pg::Outcome& outcome);

// A content handler's start: reads the body (at once if the access phase
// already did), then runs `Start`, which answers or returns NGX_DONE.
template <ngx_int_t (*Start)(ngx_http_request_t*)>
ngx_int_t read_body_then(ngx_http_request_t* r) {
  r->request_body_in_single_buf = 1;
  const ngx_int_t rc = ngx_http_read_client_request_body(r, c_entry(+[](ngx_http_request_t* req) noexcept {
    const ngx_int_t done = guarded(
        req->connection->log, [req] { return Start(req); },
        [req]() noexcept { return guarded(req->connection->log, NGX_ERROR, [req] { return answer_internal_error(req); }); });
    if (done != NGX_DONE) ngx_http_finalize_request(req, done);
  }));
  if (rc >= NGX_HTTP_SPECIAL_RESPONSE) return rc;
  return NGX_DONE;
}

}  // namespace mr::ngx::ledger
