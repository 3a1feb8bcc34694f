// The ledger content handler: hands a request that passed the edge to the
// domain (ledger/), runs the one statement it asks for on the worker's
// PostgreSQL pool and sends what the domain renders. The club comes from
// the auth module's variables; the body was read in the access phase.
#include <memory>
#include <new>

#include "ledger/api.hpp"
#include "lua-free-config/ledger_directives.hpp"
#include "modules/common/fingerprint.hpp"
#include "modules/common/http_json.hpp"
#include "modules/ledger/pg_pool.hpp"

#include <openssl/crypto.h>

namespace {

std::unique_ptr<mr::pg::Pool> g_pool;  // one per worker process
ngx_int_t g_club_id_var = NGX_ERROR;
ngx_int_t g_partner_ref_var = NGX_ERROR;

class PgResultView final : public mr::ledger::ResultView {
 public:
  explicit PgResultView(const PGresult* r) : r_(r) {}
  int rows() const override { return PQntuples(r_); }
  bool is_null(int row, int col) const override { return PQgetisnull(r_, row, col) != 0; }
  std::string_view value(int row, int col) const override {
    return {PQgetvalue(r_, row, col), static_cast<std::size_t>(PQgetlength(r_, row, col))};
  }

 private:
  const PGresult* r_;
};

// What a request waiting for the database keeps: the domain's pending
// renderer and the job handle, detached if nginx drops the request.
struct Waiting {
  std::unique_ptr<mr::ledger::Pending> pending;
  mr::pg::Job* job = nullptr;
};

std::string_view variable(ngx_http_request_t* r, ngx_int_t index) {
  ngx_http_variable_value_t* v = ngx_http_get_indexed_variable(r, index);
  if (v == nullptr || v->not_found) return {};
  return {reinterpret_cast<const char*>(v->data), v->len};
}

ngx_int_t send_response(ngx_http_request_t* r, const mr::ledger::Response& response) {
  if (response.replayed && !mr::ngx::add_header_out(r, "X-MR-Idempotent-Replay", "true")) {
    return NGX_ERROR;
  }
  return mr::ngx::send_json(r, static_cast<ngx_uint_t>(response.status), response.body);
}

void on_outcome(ngx_http_request_t* r, Waiting* waiting, mr::pg::Outcome&& outcome) {
  waiting->job = nullptr;
  ngx_int_t rc;
  switch (outcome.kind) {
    case mr::pg::Outcome::Kind::ok: {
      const PgResultView view(outcome.result.get());
      rc = send_response(r, waiting->pending->render(view, mr::ngx::request_id(r)));
      break;
    }
    case mr::pg::Outcome::Kind::sql_error:
      if (auto answer = waiting->pending->on_sql_error(outcome.sqlstate, mr::ngx::request_id(r))) {
        rc = send_response(r, *answer);
        break;
      }
      ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "mr_ledger: statement failed (%s): %s",
                    outcome.sqlstate.c_str(), outcome.message.c_str());
      rc = mr::ngx::send_error(r, mr::ErrorCode::internal_error);
      break;
    default:
      ngx_log_error(NGX_LOG_WARN, r->connection->log, 0, "mr_ledger: database unavailable: %s",
                    outcome.message.c_str());
      rc = mr::ngx::send_error(r, mr::ErrorCode::service_unavailable);
      break;
  }
  ngx_http_finalize_request(r, rc);
}

ngx_int_t run_prepared(ngx_http_request_t* r, mr::ledger::Prepared prepared);

ngx_int_t start(ngx_http_request_t* r) {
  auto body = mr::ngx::request_body(r);
  const std::string_view club_text = variable(r, g_club_id_var);
  if (!body || club_text.empty()) {
    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "mr_ledger: no authenticated club or body in memory; is mr_auth on here?");
    return mr::ngx::send_error(r, mr::ErrorCode::internal_error);
  }
  mr::ledger::Request request;
  request.method = mr::ngx::view(r->method_name);
  request.path = mr::ngx::raw_path(r);
  request.query = mr::ngx::view(r->args);
  request.body = *body;
  request.club_id = std::stoll(std::string(club_text));
  request.partner_ref = variable(r, g_partner_ref_var);
  request.request_id = mr::ngx::request_id(r);
  const std::string fingerprint = mr::request_fingerprint(request.method, request.path, request.body);
  if (auto key = mr::ngx::header_in(r, "X-MR-Idempotency-Key")) request.idempotency_key = *key;
  request.fingerprint = fingerprint;

  return run_prepared(r, mr::ledger::prepare(request));
}

// Answers at once, or runs the one statement on the pool and answers when
// it completes (NGX_DONE: the request waits).
ngx_int_t run_prepared(ngx_http_request_t* r, mr::ledger::Prepared prepared) {
  if (auto* response = std::get_if<mr::ledger::Response>(&prepared)) {
    return send_response(r, *response);
  }
  if (!g_pool) return mr::ngx::send_error(r, mr::ErrorCode::service_unavailable);

  // The waiting state lives in the request pool; its cleanup detaches the
  // job so a late result never touches a freed request.
  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(r->pool, sizeof(Waiting));
  if (cln == nullptr) return NGX_ERROR;
  auto* waiting = new (cln->data) Waiting{};
  cln->handler = [](void* data) {
    auto* w = static_cast<Waiting*>(data);
    if (w->job != nullptr) mr::pg::Pool::detach(w->job);
    w->~Waiting();
  };
  waiting->pending = std::move(std::get<std::unique_ptr<mr::ledger::Pending>>(prepared));

  auto job = std::make_unique<mr::pg::Job>();
  job->sql = waiting->pending->query().sql;
  job->params = waiting->pending->query().params;
  job->done = [r, waiting](mr::pg::Outcome&& outcome) { on_outcome(r, waiting, std::move(outcome)); };
  waiting->job = job.get();
  // submit may answer at once (queue full, database unreachable): the
  // callback has then already finalized the request.
  g_pool->submit(std::move(job));
  return NGX_DONE;
}

const mr_ledger_main_conf_t* main_conf(ngx_http_request_t* r) {
  return static_cast<mr_ledger_main_conf_t*>(ngx_http_get_module_main_conf(r, ngx_http_mr_ledger_module));
}

// The ops listener: /healthz answers from the worker alone; everything else
// wants "Authorization: Bearer <token>" and goes to the database.
ngx_int_t start_ops(ngx_http_request_t* r) {
  const std::string_view path = mr::ngx::raw_path(r);
  if (path == "/healthz") {
    return mr::ngx::send_json(r, 200, R"({"ok":true,"data":{"status":"ok"}})");
  }
  const mr_ledger_main_conf_t* mcf = main_conf(r);
  const std::string_view token = mr::ngx::view(mcf->ops_token);
  const auto given = mr::ngx::header_in(r, "Authorization");
  const std::string expected = "Bearer " + std::string(token);
  if (token.empty() || !given || given->size() != expected.size() ||
      CRYPTO_memcmp(given->data(), expected.data(), expected.size()) != 0) {
    return mr::ngx::send_error(r, mr::ErrorCode::unauthorized, "The ops listener wants its bearer token.");
  }
  auto body = mr::ngx::request_body(r);
  if (!body) return mr::ngx::send_error(r, mr::ErrorCode::payload_too_large);
  mr::ledger::Request request;
  request.method = mr::ngx::view(r->method_name);
  request.path = path;
  request.query = mr::ngx::view(r->args);
  request.body = *body;
  request.request_id = mr::ngx::request_id(r);
  return run_prepared(r, mr::ledger::prepare_ops(request));
}

void ops_body_ready(ngx_http_request_t* r) {
  ngx_int_t rc;
  try {
    rc = start_ops(r);
  } catch (...) {
    rc = mr::ngx::send_error(r, mr::ErrorCode::internal_error);
  }
  if (rc != NGX_DONE) ngx_http_finalize_request(r, rc);
}

// The sandbox payout simulator: every second each worker asks the database
// to settle payouts older than the delay; SKIP LOCKED there makes workers
// and nodes share the work without settling any payout twice.
ngx_event_t g_simulator_timer;
ngx_msec_t g_simulator_delay;
bool g_simulator_busy = false;

void simulate(ngx_event_t* ev) {
  if (g_pool && !g_simulator_busy) {
    auto job = std::make_unique<mr::pg::Job>();
    job->sql = "SELECT mr_payout_simulate($1::bigint)";
    job->params = {std::to_string(g_simulator_delay)};
    ngx_log_t* log = ev->log;
    job->done = [log](mr::pg::Outcome&& outcome) {
      g_simulator_busy = false;
      if (outcome.kind != mr::pg::Outcome::Kind::ok) {
        ngx_log_error(NGX_LOG_WARN, log, 0, "mr_payout_simulator: %s", outcome.message.c_str());
      }
    };
    g_simulator_busy = true;
    g_pool->submit(std::move(job));
  }
  if (!ngx_exiting) ngx_add_timer(ev, 1000);
}

void body_ready(ngx_http_request_t* r) {
  ngx_int_t rc;
  try {
    rc = start(r);
  } catch (...) {
    rc = mr::ngx::send_error(r, mr::ErrorCode::internal_error);
  }
  if (rc != NGX_DONE) ngx_http_finalize_request(r, rc);
}

ngx_int_t postconfiguration(ngx_conf_t* cf) {
  ngx_str_t club = ngx_string("mr_club_id");
  ngx_str_t ref = ngx_string("mr_partner_ref");
  g_club_id_var = ngx_http_get_variable_index(cf, &club);
  g_partner_ref_var = ngx_http_get_variable_index(cf, &ref);
  if (g_club_id_var == NGX_ERROR || g_partner_ref_var == NGX_ERROR) return NGX_ERROR;
  return mr::ngx::init_request_id(cf);
}

ngx_int_t init_process(ngx_cycle_t* cycle) {
  auto* mcf = static_cast<mr_ledger_main_conf_t*>(
      ngx_http_cycle_get_module_main_conf(cycle, ngx_http_mr_ledger_module));
  if (mcf == nullptr || !mcf->used) return NGX_OK;
  try {
    mr::pg::Settings s;
    s.dsn.assign(reinterpret_cast<const char*>(mcf->dsn.data), mcf->dsn.len);
    s.size = mcf->pool_size;
    s.queue_limit = mcf->queue_size;
    s.connect_timeout = mcf->connect_timeout;
    s.query_timeout = mcf->query_timeout;
    g_pool = std::make_unique<mr::pg::Pool>(std::move(s), cycle->log);
    if (mcf->simulator) {
      g_simulator_delay = mcf->simulator_delay;
      g_simulator_timer = ngx_event_t{};
      g_simulator_timer.handler = simulate;
      g_simulator_timer.log = cycle->log;
      g_simulator_timer.cancelable = 1;  // never keeps an old worker alive
      ngx_add_timer(&g_simulator_timer, 1000);
    }
  } catch (...) {
    ngx_log_error(NGX_LOG_EMERG, cycle->log, 0, "mr_ledger: cannot create the connection pool");
    return NGX_ERROR;
  }
  return NGX_OK;
}

void exit_process(ngx_cycle_t*) {
  if (g_simulator_timer.timer_set) ngx_del_timer(&g_simulator_timer);
  try {
    g_pool.reset();
  } catch (...) {
  }
}

ngx_http_module_t module_ctx = {
    nullptr,                       // preconfiguration
    postconfiguration,             // postconfiguration
    mr_ledger_create_main_conf,    // create main configuration
    mr_ledger_init_main_conf,      // init main configuration
    nullptr,                       // create server configuration
    nullptr,                       // merge server configuration
    mr_ledger_create_loc_conf,     // create location configuration
    mr_ledger_merge_loc_conf,      // merge location configuration
};

}  // namespace

extern "C" ngx_int_t mr_ledger_handler(ngx_http_request_t* r) {
  if (r != r->main) return NGX_DECLINED;
  r->request_body_in_single_buf = 1;
  ngx_int_t rc = ngx_http_read_client_request_body(r, body_ready);
  if (rc >= NGX_HTTP_SPECIAL_RESPONSE) return rc;
  return NGX_DONE;
}

extern "C" ngx_int_t mr_ops_handler(ngx_http_request_t* r) {
  if (r != r->main) return NGX_DECLINED;
  r->request_body_in_single_buf = 1;
  ngx_int_t rc = ngx_http_read_client_request_body(r, ops_body_ready);
  if (rc >= NGX_HTTP_SPECIAL_RESPONSE) return rc;
  return NGX_DONE;
}

extern "C" {
ngx_module_t ngx_http_mr_ledger_module = {
    NGX_MODULE_V1,
    &module_ctx,          // module context
    mr_ledger_commands,   // module directives
    NGX_HTTP_MODULE,      // module type
    nullptr,              // init master
    nullptr,              // init module
    init_process,         // init process
    nullptr,              // init thread
    nullptr,              // exit thread
    exit_process,         // exit process
    nullptr,              // exit master
    NGX_MODULE_V1_PADDING};
}
