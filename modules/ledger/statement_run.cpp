#include "modules/ledger/statement_run.hpp"

#include <new>

#include "ngx-boundary/guarded.hpp"
#include "modules/common/answers.hpp"
#include "modules/common/request_id.hpp"
#include "modules/common/request_reading.hpp"
#include "modules/ledger/settle_gate.hpp"

namespace mr::ngx::ledger {
namespace {

// The job's tuples: the whole result, or its one row of a batch's.
class PgResultView final : public mr::ledger::ResultView {
 public:
  PgResultView(const PGresult* r, int row) : r_(r), row_(row) {}
  int rows() const override { return row_ < 0 ? PQntuples(r_) : 1; }
  bool is_null(int row, int col) const override { return PQgetisnull(r_, at(row), col) != 0; }
  std::string_view value(int row, int col) const override {
    return {PQgetvalue(r_, at(row), col), static_cast<std::size_t>(PQgetlength(r_, at(row), col))};
  }

 private:
  int at(int row) const { return row_ < 0 ? row : row_; }
  const PGresult* r_;
  int row_;
};

// What a request waiting for the database keeps: the domain's pending
// renderer and the job handle, detached if nginx drops the request.
struct Waiting {
  std::unique_ptr<mr::ledger::Pending> pending;
  mr::pg::Job* job = nullptr;
};

// libpq's messages run over lines (ERROR, LINE, HINT): one line in the error
// log, which the request id then ends. No allocation; long ones are cut.
struct OneLine {
  u_char text[1024];
  size_t len = 0;
  explicit OneLine(const std::string& message) {
    for (const char c : message) {
      if (len == sizeof text) break;
      const bool space = c == '\n' || c == '\r' || c == '\t';
      if (space && (len == 0 || text[len - 1] == ' ')) continue;
      text[len++] = static_cast<u_char>(space ? ' ' : c);
    }
    while (len > 0 && text[len - 1] == ' ') --len;
  }
};

// Through the request's log: the line ends with its request id.
void log_failure(ngx_http_request_t* r, ngx_uint_t level, const mr::pg::Outcome& outcome) {
  const OneLine message(outcome.message);
  if (outcome.kind == mr::pg::Outcome::Kind::sql_error) {
    ngx_log_error(level, r->connection->log, 0, "mr_ledger: statement failed (%s): %*s", outcome.sqlstate.c_str(),
                  message.len, message.text);
  } else {
    ngx_log_error(level, r->connection->log, 0, "mr_ledger: database unavailable: %*s", message.len, message.text);
  }
}

ngx_int_t send_response(ngx_http_request_t* r, const mr::ledger::Response& response) {
  if (response.replayed && !add_header_out(r, "X-MR-Idempotent-Replay", "true")) return NGX_ERROR;
  if (response.no_store && !add_header_out(r, "Cache-Control", "no-store")) return NGX_ERROR;
  return send_json(r, static_cast<ngx_uint_t>(response.status), response.body, response.error,
                   response.content_type);
}

void on_outcome(ngx_http_request_t* r, Waiting* waiting, mr::pg::Outcome&& outcome) {
  waiting->job = nullptr;
  const auto answer = domain_answer(r, *waiting->pending, outcome);
  const ngx_int_t rc = answer ? send_response(r, *answer) : send_error(r, unanswered_code(outcome));
  ngx_http_finalize_request(r, rc);
}

}  // namespace

std::optional<mr::ledger::Response> domain_answer(ngx_http_request_t* r, const mr::ledger::Pending& pending,
                                                  const mr::pg::Outcome& outcome) {
  switch (outcome.kind) {
    case mr::pg::Outcome::Kind::ok:
      return pending.render(PgResultView(outcome.result.get(), outcome.row), request_id(r));
    case mr::pg::Outcome::Kind::sql_error:
      if (auto answer = pending.on_sql_error(outcome.sqlstate, request_id(r))) return answer;
      // Only a failure of ours is an error; a moving club's write is retried.
      log_failure(r, unanswered_code(outcome) == mr::ErrorCode::internal_error ? NGX_LOG_ERR : NGX_LOG_INFO, outcome);
      return std::nullopt;
    default:
      log_failure(r, NGX_LOG_WARN, outcome);
      return pending.on_unavailable(request_id(r));
  }
}

mr::ErrorCode unanswered_code(const mr::pg::Outcome& outcome) {
  return outcome.kind == mr::pg::Outcome::Kind::sql_error ? mr::code_for_sqlstate(outcome.sqlstate)
                                                          : mr::ErrorCode::service_unavailable;
}

ngx_int_t run_prepared(ngx_http_request_t* r, mr::ledger::Prepared prepared) {
  if (auto* response = std::get_if<mr::ledger::Response>(&prepared)) return send_response(r, *response);
  mr::pg::Pool* pool = pool_of(r);
  if (pool == nullptr) {
    const auto& pending = std::get<std::unique_ptr<mr::ledger::Pending>>(prepared);
    if (auto answer = pending->on_unavailable(request_id(r))) return send_response(r, *answer);
    return send_error(r, mr::ErrorCode::service_unavailable);
  }

  // The waiting state lives in the request pool; its cleanup detaches the
  // job so a late result never touches a freed request.
  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(r->pool, sizeof(Waiting));
  if (cln == nullptr) return NGX_ERROR;
  auto* waiting = new (cln->data) Waiting{};
  cln->handler = c_entry(+[](void* data) noexcept {
    auto* w = static_cast<Waiting*>(data);
    if (w->job != nullptr) mr::pg::Pool::detach(w->job);
    w->~Waiting();
  });
  waiting->pending = std::move(std::get<std::unique_ptr<mr::ledger::Pending>>(prepared));

  auto job = std::make_unique<mr::pg::Job>();
  job->sql = waiting->pending->query().sql;
  job->params = waiting->pending->query().params;
  // Tracing costs nothing without the header: see pg_pool's application_name.
  if (const auto trace = traceparent(r)) job->traceparent.assign(trace->data(), trace->size());
  // A traced write runs alone: the session's name is one request's.
  job->batch = job->traceparent.empty() ? waiting->pending->query().batch : mr::ledger::BatchKind::none;
  job->done = [r, waiting](mr::pg::Outcome&& outcome) { on_outcome(r, waiting, std::move(outcome)); };
  waiting->job = job.get();
  settle_reached_pool(r);
  // submit may answer at once (queue full, database unreachable): the
  // callback has then already finalized the request.
  pool->submit(std::move(job));
  return NGX_DONE;
}

ngx_int_t answer_internal_error(ngx_http_request_t* r) { return send_error(r, mr::ErrorCode::internal_error); }

namespace {

// A statement on every pod at once: the answer goes when the last pod's
// outcome is in.
struct FanOut {
  std::vector<PodAnswer> answers;
  std::vector<mr::pg::Job*> jobs;  // null once answered
  std::size_t waiting = 0;
  std::function<mr::ledger::Response(const std::vector<PodAnswer>&)> combine;
};

void on_pod_answer(ngx_http_request_t* r, FanOut* fan, std::size_t i, mr::pg::Outcome&& outcome) {
  fan->jobs[i] = nullptr;
  fan->answers[i].outcome = std::move(outcome);
  if (--fan->waiting > 0) return;
  const ngx_int_t rc =
      guarded(r->connection->log, NGX_ERROR, [&] { return send_response(r, fan->combine(fan->answers)); });
  ngx_http_finalize_request(r, rc);
}

}  // namespace

std::unique_ptr<mr::ledger::ResultView> rows_of(const mr::pg::Outcome& outcome) {
  return std::make_unique<PgResultView>(outcome.result.get(), outcome.row);
}

ngx_int_t run_on_every_pod(ngx_http_request_t* r, const mr::ledger::Query& query,
                           std::function<mr::ledger::Response(const std::vector<PodAnswer>&)> combine) {
  auto& pods = worker_pods();
  if (pods.empty()) return send_response(r, combine({}));
  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(r->pool, sizeof(FanOut));
  if (cln == nullptr) return NGX_ERROR;
  auto* fan = new (cln->data) FanOut{};
  cln->handler = c_entry(+[](void* data) noexcept {
    auto* f = static_cast<FanOut*>(data);
    for (mr::pg::Job* job : f->jobs) {
      if (job != nullptr) mr::pg::Pool::detach(job);
    }
    f->~FanOut();
  });
  fan->combine = std::move(combine);
  for (const PodPool& pod : pods) fan->answers.push_back({pod.name, {mr::pg::Outcome::Kind::unavailable, {}, -1, {}, {}}});
  fan->jobs.assign(pods.size(), nullptr);
  // Counted before any submit: one may answer at once.
  fan->waiting = pods.size();
  for (std::size_t i = 0; i < pods.size(); ++i) {
    auto job = std::make_unique<mr::pg::Job>();
    job->sql = query.sql;
    job->params = query.params;
    job->done = [r, fan, i](mr::pg::Outcome&& outcome) { on_pod_answer(r, fan, i, std::move(outcome)); };
    fan->jobs[i] = job.get();
    pods[i].pool->submit(std::move(job));
  }
  return NGX_DONE;
}

}  // namespace mr::ngx::ledger
