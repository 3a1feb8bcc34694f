// The ops listener's routes (contract sections 8 and 10): readiness,
// Prometheus metrics, payout listing and payout results, and the webhook
// endpoints' operator view (list, failed deliveries, enable, disable,
// replay). Payout states move only through mr_payout_move, the one place
// that rule lives; the webhook calls are the mr_ops_webhook_* functions,
// which mrctl calls too.
#include <algorithm>
#include <charconv>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ledger/api.hpp"
#include "ledger/books_metrics.hpp"
#include "ledger/json_fields.hpp"
#include "ledger/payouts.hpp"
#include "ledger/pods.hpp"
#include "ledger/read_requests.hpp"
#include "ledger/readiness.hpp"
#include "ledger/routes.hpp"
#include "ledger/result_render.hpp"
#include "ledger/statements.hpp"

namespace mr::ledger {
namespace {

enum class Shape { json_data, metrics_text, ready };

class OpsPending final : public Pending {
 public:
  OpsPending(Query q, Shape shape, std::string_view not_found = "No such payout.")
      : query_(std::move(q)), shape_(shape), not_found_(not_found) {}
  const Query& query() const override { return query_; }

  Response render(const ResultView& result, std::string_view request_id) const override {
    if (shape_ == Shape::metrics_text) {  // the home pod's alone; the ops listener asks every pod
      return Response{200, render_books({books_of(std::string(kHomePod), result)}), false, kPrometheusContentType};
    }
    if (result.rows() != 1 || result.is_null(0, 0)) {
      return error_response(ErrorCode::internal_error, "", request_id);
    }
    const std::string_view v = result.value(0, 0);
    if (shape_ == Shape::ready) return render_readiness({readiness_of_version(kHomePod, v)}, request_id);
    JsonDocument d;
    d.Parse(v.data(), v.size());
    auto body = d.HasParseError() ? std::nullopt : ok_body([&](JsonWriter& w) { return d.Accept(w); });
    if (!body) return error_response(ErrorCode::internal_error, "", request_id);
    return Response{200, std::move(*body), false};
  }

  std::optional<Response> on_sql_error(std::string_view sqlstate, std::string_view request_id) const override {
    // undefined_table: a database no migration ever ran on.
    if (shape_ == Shape::ready) return render_readiness({readiness_of_sql_error(kHomePod, sqlstate)}, request_id);
    if (sqlstate == "P0002") return error_response(ErrorCode::not_found, not_found_, request_id);
    if (sqlstate == "P0409") {
      return error_response(ErrorCode::payout_state_conflict, "", request_id);
    }
    return std::nullopt;
  }

 private:
  Query query_;
  Shape shape_;
  std::string_view not_found_;  // a static string
};

Prepared ops_statement(std::string_view sql, std::vector<std::optional<std::string>> params, Shape shape,
                       std::string_view not_found = "No such payout.") {
  return std::make_unique<OpsPending>(Query{std::string(sql), std::move(params)}, shape, not_found);
}

Response ops_fail(const Request& r, ErrorCode code, std::string_view message = {}) {
  return error_response(code, message, r.request_id);
}

// GET /webhooks[?partnerRef=]: the endpoints, with their queued deliveries.
// GET /webhooks/failures[?partnerRef=&limit=]: failed attempts, newest first.
// POST /webhooks/{endpointId}/enable|disable, and /replay {"since": RFC 3339}.
Prepared route_webhooks(const Request& r) {
  constexpr std::string_view kNoEndpoint = "No such webhook endpoint.";
  const bool get = r.method == "GET", post = r.method == "POST";
  if (r.path == "/webhooks" || r.path == "/webhooks/failures") {
    if (!get) return ops_fail(r, ErrorCode::method_not_allowed);
    std::optional<std::string> ref;
    bool bad_ref = false;
    for_each_query_param(r.query, [&](std::string_view name, std::string_view raw_value) {
      if (name != "partnerRef") return true;
      ref = percent_decode(raw_value, true);
      bad_ref = !ref || ref->empty() || ref->size() > 128 ||
                !std::all_of(ref->begin(), ref->end(), [](char c) { return c > 0x20 && c < 0x7f; });
      return !bad_ref;
    });
    if (bad_ref) {
      return error_response(Error{ErrorCode::invalid_request, "Invalid partnerRef in the query.",
                                  {{"partnerRef", "must be 1 to 128 printable ASCII characters"}}},
                            r.request_id);
    }
    if (r.path == "/webhooks") return ops_statement(sql::ops_webhooks, {ref}, Shape::json_data);
    auto limit = parse_history_query(r.query, false);
    if (auto* e = std::get_if<Error>(&limit)) return error_response(*e, r.request_id);
    return ops_statement(sql::ops_webhook_failures, {ref, std::to_string(std::get<HistoryQuery>(limit).limit)},
                         Shape::json_data);
  }
  constexpr std::string_view prefix = "/webhooks/";
  const std::string_view rest = r.path.substr(prefix.size());
  const auto slash = rest.find('/');
  const std::string_view verb = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
  if (verb != "enable" && verb != "disable" && verb != "replay") return ops_fail(r, ErrorCode::not_found);
  if (!post) return ops_fail(r, ErrorCode::method_not_allowed);
  auto id = path_identifier(rest.substr(0, slash));
  if (!id) return ops_fail(r, ErrorCode::not_found, kNoEndpoint);
  if (verb != "replay") {
    return ops_statement(sql::ops_webhook_status, {*id, verb == "enable" ? "enabled" : "disabled"}, Shape::json_data,
                         kNoEndpoint);
  }
  std::string why;
  JsonDocument doc;
  if (!parse_object(r.body, doc, why)) return ops_fail(r, ErrorCode::invalid_request, why);
  std::vector<FieldProblem> problems;
  Fields f(problems);
  auto since = f.timestamp(doc, "", "since");
  if (!problems.empty()) {
    return error_response(ErrorCode::invalid_request, "", r.request_id, problems);
  }
  return ops_statement(sql::ops_webhook_replay, {*id, *since}, Shape::json_data, kNoEndpoint);
}

Prepared route_ops(const Request& r) {
  const bool get = r.method == "GET", post = r.method == "POST";
  const Route route = ops_route_of(r.path);  // the names metrics and logs use
  if (route == Route::ops_readyz) {
    if (!get) return ops_fail(r, ErrorCode::method_not_allowed);
    return ops_statement(sql::ready, {}, Shape::ready);
  }
  if (route == Route::ops_metrics) {
    if (!get) return ops_fail(r, ErrorCode::method_not_allowed);
    return ops_statement(sql::metrics, {}, Shape::metrics_text);
  }
  if (route == Route::ops_payouts) {
    if (!get) return ops_fail(r, ErrorCode::method_not_allowed);
    std::optional<std::string> status;
    for_each_query_param(r.query, [&status](std::string_view name, std::string_view raw_value) {
      if (name == "status") status = std::string(raw_value);
      return true;
    });
    if (status && !is_payout_status(*status)) {
      return ops_fail(r, ErrorCode::invalid_request, "status is " + std::string(kPayoutStatusList) + ".");
    }
    auto limit = parse_history_query(r.query, false);
    if (auto* e = std::get_if<Error>(&limit)) return error_response(*e, r.request_id);
    return ops_statement(sql::payouts,
                         {status, std::to_string(std::get<HistoryQuery>(limit).limit)}, Shape::json_data);
  }
  // POST /payouts/{payoutId}/submit|succeed|fail
  constexpr std::string_view prefix = "/payouts/";
  if (route == Route::ops_payout_result) {
    const std::string_view rest = r.path.substr(prefix.size());
    const auto slash = rest.find('/');
    if (slash != std::string_view::npos) {
      const std::string_view verb = rest.substr(slash + 1);
      if (const auto to = payout_status_for_verb(verb)) {
        if (!post) return ops_fail(r, ErrorCode::method_not_allowed);
        auto id = path_identifier(rest.substr(0, slash));
        if (!id) return ops_fail(r, ErrorCode::not_found, "No such payout.");
        std::optional<std::string> reason;
        if (verb == "fail") {
          std::string why;
          JsonDocument doc;
          if (!parse_object(r.body.empty() ? "{}" : r.body, doc, why)) {
            return ops_fail(r, ErrorCode::invalid_request, why);
          }
          std::vector<FieldProblem> problems;
          Fields f(problems);
          reason = f.text(doc, "", "reason", 500);
          if (!problems.empty()) {
            return error_response(ErrorCode::invalid_request, "", r.request_id, problems);
          }
        }
        return ops_statement(sql::payout_move, {*id, std::string(*to), reason}, Shape::json_data);
      }
    }
  }
  if (route == Route::ops_webhooks) return route_webhooks(r);
  return ops_fail(r, ErrorCode::not_found);
}

}  // namespace

Prepared prepare_ops(const Request& request) noexcept {
  try {
    return route_ops(request);
  } catch (...) {
    return Response{500, "{\"ok\":false,\"error\":{\"code\":\"internal_error\",\"message\":\"Internal error.\"}}",
                    false, kJsonContentType, false, ErrorCode::internal_error};
  }
}

}  // namespace mr::ledger
