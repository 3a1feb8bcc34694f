#include "modules/ledger/ops_listener.hpp"

#include <string>

#include <openssl/crypto.h>

#include "lua-free-config/ledger_conf.hpp"
#include "modules/common/http_json.hpp"
#include "modules/common/node_metrics.hpp"
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

// /metrics: this node's counters (shared memory, every worker) before the
// books' gauges the database gives. Without the database the node's part
// still answers, with mr_books_up 0: the alerts that matter most then
// (pool timeouts, service_unavailable) come from the node.
class WithNodeMetrics final : public mr::ledger::Pending {
 public:
  explicit WithNodeMetrics(std::unique_ptr<mr::ledger::Pending> books) : books_(std::move(books)) {}
  const mr::ledger::Query& query() const override { return books_->query(); }
  mr::ledger::Response render(const mr::ledger::ResultView& result, std::string_view request_id) const override {
    mr::ledger::Response response = books_->render(result, request_id);
    if (response.status != 200) return without_books();
    response.body.insert(0, node_text());
    return response;
  }
  std::optional<mr::ledger::Response> on_sql_error(std::string_view, std::string_view) const override {
    return without_books();
  }
  std::optional<mr::ledger::Response> on_unavailable(std::string_view) const override { return without_books(); }

 private:
  static std::string node_text() {
    const mr::metrics::Block* block = node_metrics();
    if (block == nullptr) return {};
    publish_pool_metrics();  // this worker's figures as of now; the others' within a second
    return mr::metrics::render(*block, process_alive);
  }
  static mr::ledger::Response without_books() {
    return {200, node_text() + "# HELP mr_books_up Whether the books' gauges below could be read.\n"
                               "# TYPE mr_books_up gauge\nmr_books_up 0\n", false,
            mr::ledger::kPrometheusContentType};
  }
  std::unique_ptr<mr::ledger::Pending> books_;
};

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
  auto* books = std::get_if<std::unique_ptr<mr::ledger::Pending>>(&prepared);
  const mr::ledger::Route route = mr::ledger::ops_route_of(path);
  if (books != nullptr && route == mr::ledger::Route::ops_readyz) return run_readiness(r);  // every pod's
  if (books != nullptr && route == mr::ledger::Route::ops_metrics) {
    prepared = std::make_unique<WithNodeMetrics>(std::move(*books));
  }
  return run_prepared(r, std::move(prepared));
}

}  // namespace

// The token is checked before any body is read: a caller without it gets
// nothing read or spooled on its behalf.
ngx_int_t ops_handler(ngx_http_request_t* r) {
  try {
    set_route(r, mr::ledger::ops_route_of(raw_path(r)));  // whatever the answer, for metrics and logs
    if (raw_path(r) == "/healthz") {
      discard_body(r);
      return send_json(r, 200, R"({"ok":true,"data":{"status":"ok"}})");
    }
    if (!token_matches(r)) {
      discard_body(r);
      return send_error(r, mr::ErrorCode::unauthorized, "The ops listener wants its bearer token.");
    }
  } catch (...) {
    return NGX_HTTP_INTERNAL_SERVER_ERROR;
  }
  return read_body_then<start>(r);
}

}  // namespace mr::ngx::ledger
