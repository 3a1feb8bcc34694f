#include "modules/ledger/ops_listener.hpp"

#include <string>
#include <vector>

#include <openssl/crypto.h>

#include "ledger/books_metrics.hpp"
#include "ledger/ops_pods.hpp"
#include "ledger/pods.hpp"
#include "ledger/readiness.hpp"
#include "ledger/statements.hpp"
#include "lua-free-config/ledger_conf.hpp"
#include "modules/common/answers.hpp"
#include "modules/common/node_metrics.hpp"
#include "modules/common/request_id.hpp"
#include "modules/common/request_outcome.hpp"
#include "modules/common/request_reading.hpp"
#include "modules/ledger/pool_metrics.hpp"
#include "modules/ledger/statement_run.hpp"

extern "C" ngx_module_t ngx_http_mr_ledger_module;

namespace mr::ngx::ledger {
namespace {

// "Authorization: Bearer <token>", compared in constant time.
bool token_matches(ngx_http_request_t* r) {
  const auto* mcf = static_cast<const mr_ledger_main_conf_t*>(
      ngx_http_get_module_main_conf(r, ngx_http_mr_ledger_module));
  const std::string_view token = view(mcf->ops_token);
  const auto given = header_in(r, "authorization");
  const std::string expected = "Bearer " + std::string(token);
  return !token.empty() && given && given->size() == expected.size() &&
         CRYPTO_memcmp(given->data(), expected.data(), expected.size()) == 0;
}

// /readyz: every pod's schema version, one answer (ledger/readiness).
mr::ledger::Response readiness(const std::vector<PodAnswer>& answers, std::string_view request_id) {
  std::vector<mr::ledger::PodReadiness> pods;
  for (const PodAnswer& a : answers) {
    switch (a.outcome.kind) {
      case mr::pg::Outcome::Kind::ok: {
        const auto rows = rows_of(a.outcome);
        pods.push_back(rows->rows() == 1 && !rows->is_null(0, 0)
                           ? mr::ledger::readiness_of_version(a.pod, rows->value(0, 0))
                           : mr::ledger::readiness_of_sql_error(a.pod, "XX000"));
        break;
      }
      case mr::pg::Outcome::Kind::sql_error:
        pods.push_back(mr::ledger::readiness_of_sql_error(a.pod, a.outcome.sqlstate));
        break;
      case mr::pg::Outcome::Kind::unavailable:
        pods.push_back(mr::ledger::readiness_unavailable(a.pod));
        break;
    }
  }
  if (pods.empty()) pods.push_back(mr::ledger::readiness_unavailable(mr::kHomePod));
  return mr::ledger::render_readiness(pods, request_id);
}

// /metrics: this node's counters (shared memory, every worker), then every
// pod's books (ledger/books_metrics). Without a pod's database its part is
// mr_books_up 0 and the rest still answers: the alerts that matter most
// then (pool timeouts, service_unavailable) come from the node.
mr::ledger::Response metrics(const std::vector<PodAnswer>& answers) {
  std::vector<mr::ledger::PodBooks> pods;
  for (const PodAnswer& a : answers) {
    if (a.outcome.kind == mr::pg::Outcome::Kind::ok) {
      pods.push_back(mr::ledger::books_of(a.pod, *rows_of(a.outcome)));
    } else {
      pods.push_back({a.pod, false, {}});
    }
  }
  if (pods.empty()) pods.push_back({std::string(mr::kHomePod), false, {}});
  std::string body;
  if (const mr::metrics::Block* block = node_metrics()) {
    publish_pool_metrics();  // this worker's figures as of now; the others' within a second
    body = mr::metrics::render(*block, process_alive);
  }
  body += mr::ledger::render_books(pods);
  return {200, std::move(body), false, mr::ledger::kPrometheusContentType};
}

ngx_int_t start(ngx_http_request_t* r) {
  const std::string_view path = raw_path(r);
  auto body = request_body(r);
  if (!body) return send_error(r, mr::ErrorCode::payload_too_large);
  mr::ledger::Request request;
  request.method = view(r->method_name);
  request.path = path;
  request.query = view(r->args);
  request.body = *body;
  request.request_id = request_id(r);
  mr::ledger::Prepared prepared = mr::ledger::prepare_ops(request);
  // Past the domain's checks (method), /readyz and /metrics speak for every pod.
  if (std::holds_alternative<std::unique_ptr<mr::ledger::Pending>>(prepared)) {
    const mr::ledger::Route route = mr::ledger::ops_route_of(path);
    const std::string id(request_id(r));
    if (route == mr::ledger::Route::ops_readyz) {
      return run_on_every_pod(r, {std::string(mr::ledger::sql::ready), {}},
                              [id](const std::vector<PodAnswer>& answers) { return readiness(answers, id); });
    }
    if (route == mr::ledger::Route::ops_metrics) {
      return run_on_every_pod(r, {std::string(mr::ledger::sql::metrics), {}}, metrics);
    }
    if (worker_pods().size() > 1 && mr::ledger::is_pod_list(request)) {
      // Every pod's list, or 503 naming the pods that could not give theirs:
      // a list with a pod silently missing would mislead.
      std::shared_ptr<const mr::ledger::Pending> pending =
          std::move(std::get<std::unique_ptr<mr::ledger::Pending>>(prepared));
      const std::string method(request.method), list_path(request.path), query(request.query);
      return run_on_every_pod(r, pending->query(), [r, pending, id, method, list_path, query](
                                                       const std::vector<PodAnswer>& answers) {
        std::vector<std::string> lists;
        std::string missing;
        for (const PodAnswer& a : answers) {
          const auto rows = a.outcome.kind == mr::pg::Outcome::Kind::ok ? rows_of(a.outcome) : nullptr;
          if (rows == nullptr || rows->rows() != 1 || rows->is_null(0, 0)) {
            if (a.outcome.kind != mr::pg::Outcome::Kind::ok) (void)domain_answer(r, *pending, a.outcome);  // logged
            missing += (missing.empty() ? "" : ", ") + a.pod;
            continue;
          }
          lists.emplace_back(rows->value(0, 0));
        }
        if (!missing.empty()) {
          return mr::ledger::error_response(mr::ErrorCode::service_unavailable,
                                            "Pods not answering: " + missing + ".", id);
        }
        mr::ledger::Request again;
        again.method = method;
        again.path = list_path;
        again.query = query;
        again.request_id = id;
        return mr::ledger::merged_list(again, lists);
      });
    }
    if (worker_pods().size() > 1 && mr::ledger::addressed_by_id(route, view(r->method_name), path)) {
      std::shared_ptr<const mr::ledger::Pending> pending =
          std::move(std::get<std::unique_ptr<mr::ledger::Pending>>(prepared));
      return run_on_every_pod(r, pending->query(), [r, pending, id](const std::vector<PodAnswer>& answers) {
        std::vector<mr::ledger::Response> each;
        for (const PodAnswer& a : answers) {
          auto answer = domain_answer(r, *pending, a.outcome);
          each.push_back(answer ? std::move(*answer)
                                : mr::ledger::error_response(unanswered_code(a.outcome), "", id));
        }
        return mr::ledger::holder_answer(each, id);
      });
    }
  }
  return run_prepared(r, std::move(prepared));
}

}  // namespace

// The token is checked before any body is read: a caller without it gets
// nothing read or spooled on its behalf.
ngx_int_t ops_handler(ngx_http_request_t* r) {
  set_route(r, mr::ledger::ops_route_of(raw_path(r)));  // whatever the answer, for metrics and logs
  if (raw_path(r) == "/healthz") {
    discard_body(r);
    return send_json(r, 200, R"({"ok":true,"data":{"status":"ok"}})");
  }
  if (!token_matches(r)) {
    discard_body(r);
    return send_error(r, mr::ErrorCode::unauthorized, "The ops listener wants its bearer token.");
  }
  return read_body_then<start>(r);
}

}  // namespace mr::ngx::ledger
