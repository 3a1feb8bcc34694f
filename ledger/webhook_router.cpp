#include "ledger/webhook_router.hpp"

#include <memory>
#include <optional>
#include <string>

#include "ledger/events_query.hpp"
#include "ledger/read_requests.hpp"
#include "ledger/result_render.hpp"
#include "ledger/statements.hpp"
#include "ledger/webhook_render.hpp"
#include "ledger/webhook_requests.hpp"

namespace mr::ledger {
namespace {

// How a result's data is rendered: as it is (events, deliveries, lists),
// without any sealed secret (an endpoint's GET and update), or with it
// opened (create, rotate).
enum class Secret { plain, conceal, reveal };

class WebhookPending final : public Pending {
 public:
  WebhookPending(Query q, Secret secret, const WebhookSecrets* secrets)
      : query_(std::move(q)), secret_(secret), secrets_(secrets) {}
  const Query& query() const override { return query_; }
  Response render(const ResultView& result, std::string_view request_id) const override {
    if (result.rows() != 1 || result.is_null(0, 0)) {
      return error_response(ErrorCode::internal_error, "", request_id);
    }
    if (secret_ == Secret::plain) return render_result(result.value(0, 0), request_id);
    return render_webhook_result(result.value(0, 0), request_id, secret_ == Secret::reveal ? secrets_ : nullptr);
  }

 private:
  Query query_;
  Secret secret_;
  const WebhookSecrets* secrets_;
};

Prepared pending(std::string_view sql, std::vector<std::optional<std::string>> params, Secret secret,
                 const WebhookSecrets* secrets = nullptr) {
  return std::make_unique<WebhookPending>(Query{std::string(sql), std::move(params)}, secret, secrets);
}

Response fail(const Request& r, const Error& e) { return error_response(e, r.request_id); }

Response fail(const Request& r, ErrorCode code) {
  return error_response(code, "", r.request_id);
}

Prepared events(const Request& r) {
  auto parsed = parse_events_query(r.query);
  if (auto* e = std::get_if<Error>(&parsed)) return fail(r, *e);
  auto& q = std::get<EventsQuery>(parsed);
  return pending(sql::events,
                 {std::to_string(r.club_id), std::string(r.environment), std::move(q.after), std::to_string(q.limit),
                  std::move(q.types), std::string(r.request_id)},
                 Secret::plain);
}

Prepared deliveries(const Request& r, const std::string& endpoint_id) {
  auto parsed = parse_history_query(r.query, false);
  if (auto* e = std::get_if<Error>(&parsed)) return fail(r, *e);
  const auto& q = std::get<HistoryQuery>(parsed);
  std::optional<std::string> before;
  if (q.before) before = std::to_string(*q.before);
  return pending(sql::webhook_deliveries,
                 {std::to_string(r.club_id), endpoint_id, std::to_string(q.limit), std::move(before),
                  std::string(r.request_id)},
                 Secret::plain);
}

// A POST: the body checked, then (create, rotate) a new secret sealed by
// the glue, then mr_write as every partner write.
Prepared write(const Request& r, WebhookOp op, std::optional<std::string> endpoint_id) {
  auto parsed = parse_webhook_body(op, r.body, r.environment);
  if (auto* e = std::get_if<Error>(&parsed)) return fail(r, *e);
  const auto& body = std::get<WebhookBody>(parsed);
  const WebhookSecrets* secrets = r.webhook_secrets;
  std::string sealed;
  if (op == WebhookOp::create || op == WebhookOp::rotate) {
    if (secrets == nullptr) return fail(r, ErrorCode::internal_error);
    if (op == WebhookOp::create) endpoint_id = secrets->new_endpoint_id();
    if (!endpoint_id || endpoint_id->empty()) return fail(r, ErrorCode::internal_error);
    sealed = secrets->new_sealed_secret(*endpoint_id);
    if (sealed.empty()) return fail(r, ErrorCode::internal_error);
  }
  auto cmd = webhook_command(op, body, *endpoint_id, sealed);
  const bool reveal = op == WebhookOp::create || op == WebhookOp::rotate;
  return pending(sql::write,
                 {std::move(cmd.op), std::to_string(r.club_id), std::string(r.partner_ref),
                  std::string(r.idempotency_key), std::string(r.fingerprint), std::string(r.request_id),
                  std::move(cmd.cmd_json), signature_param(r.signature)},
                 reveal ? Secret::reveal : Secret::conceal, secrets);
}

}  // namespace

Prepared prepare_events_and_webhooks(const Request& r, Route route, const std::vector<std::string_view>& parts) {
  const std::string club = std::to_string(r.club_id), rid(r.request_id);
  // The router has matched the path and its method (routes.cpp); parts:
  // "", "api", "v1", then "events" or "webhook-endpoints"[, id[, action]].
  if (route == Route::events_list) return events(r);
  if (route == Route::webhook_endpoints_list) return pending(sql::webhook_endpoints, {club, rid}, Secret::conceal);
  if (route == Route::webhook_endpoints_create) return write(r, WebhookOp::create, std::nullopt);
  const auto id = path_identifier(parts[4]);
  if (!id) {
    return fail(r, Error{ErrorCode::invalid_request, "Invalid webhook endpoint id in the path.",
                         {{"endpointId", "must be 1 to 128 printable ASCII characters"}}});
  }
  switch (route) {
    case Route::webhook_endpoint_get: return pending(sql::webhook_endpoint, {club, *id, rid}, Secret::conceal);
    case Route::webhook_endpoint_update: return write(r, WebhookOp::update, *id);
    case Route::webhook_endpoint_deliveries: return deliveries(r, *id);
    case Route::webhook_endpoint_rotate_secret: return write(r, WebhookOp::rotate, *id);
    case Route::webhook_endpoint_delete: return write(r, WebhookOp::remove, *id);
    case Route::webhook_endpoint_replay: return write(r, WebhookOp::replay, *id);
    default: return fail(r, ErrorCode::not_found);  // not one of this file's routes
  }
}

}  // namespace mr::ledger
