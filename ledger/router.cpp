// Routes a request that passed the edge (contract section 1): an unknown
// path is not_found, a known path with another method method_not_allowed.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "ledger/api.hpp"
#include "ledger/history_render.hpp"
#include "ledger/read_requests.hpp"
#include "ledger/result_render.hpp"
#include "ledger/routes.hpp"
#include "ledger/statements.hpp"
#include "ledger/webhook_router.hpp"
#include "ledger/write_requests.hpp"

namespace mr::ledger {
namespace {

class StatementPending final : public Pending {
 public:
  explicit StatementPending(Query q) : query_(std::move(q)) {}
  const Query& query() const override { return query_; }
  Response render(const ResultView& result, std::string_view request_id) const override {
    if (result.rows() != 1 || result.is_null(0, 0)) {
      return error_response(ErrorCode::internal_error, "", request_id);
    }
    return render_result(result.value(0, 0), request_id);
  }

 private:
  Query query_;
};

// The balance comes as plain columns (mr_balance_row), rendered here.
class BalancePending final : public Pending {
 public:
  explicit BalancePending(Query q) : query_(std::move(q)) {}
  const Query& query() const override { return query_; }
  Response render(const ResultView& result, std::string_view request_id) const override {
    return render_balance(result, request_id);
  }

 private:
  Query query_;
};

// A history page comes as plain rows (mr_points_rows, mr_transactions_rows), rendered here
// with the page's limit.
class HistoryPending final : public Pending {
 public:
  HistoryPending(Query q, bool points, int limit) : query_(std::move(q)), points_(points), limit_(limit) {}
  const Query& query() const override { return query_; }
  Response render(const ResultView& result, std::string_view request_id) const override {
    return points_ ? render_points_page(result, limit_, request_id)
                   : render_transactions_page(result, limit_, request_id);
  }

 private:
  Query query_;
  bool points_;
  int limit_;
};

Prepared statement(std::string_view sql, std::vector<std::optional<std::string>> params,
                   BatchKind batch = BatchKind::none) {
  return std::make_unique<StatementPending>(Query{std::string(sql), std::move(params), batch});
}

Response fail(const Request& r, const Error& e) {
  return error_response(e, r.request_id);
}

Response fail(const Request& r, ErrorCode code, std::string_view message = {}) {
  return error_response(code, message, r.request_id);
}

// Every segment, empty ones included: "/api/v1/members/" is not
// "/api/v1/members" (a trailing slash names another, unknown, path).
std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  for (;;) {
    const auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) return out;
    path = path.substr(slash + 1);
  }
}

Prepared write(const Request& r, Parsed parsed) {
  if (auto* e = std::get_if<Error>(&parsed)) return fail(r, *e);
  auto& cmd = std::get<WriteCommand>(parsed);
  const BatchKind batch = batch_kind(cmd.op);
  return statement(sql::write,
                   {cmd.op, std::to_string(r.club_id), std::string(r.partner_ref), std::string(r.idempotency_key),
                    std::string(r.fingerprint), std::string(r.request_id), std::move(cmd.cmd_json),
                    signature_param(r.signature)},
                   batch);
}

Prepared member_read(const Request& r, const std::string& member, std::string_view what) {
  const bool points = what == "points";
  std::optional<std::string> before;
  HistoryQuery q;
  if (what != "balance") {
    auto parsed = parse_history_query(r.query, points);
    if (auto* e = std::get_if<Error>(&parsed)) return fail(r, *e);
    q = std::get<HistoryQuery>(parsed);
    if (q.before) before = std::to_string(*q.before);
  }
  const std::string club = std::to_string(r.club_id);
  if (what == "balance") return std::make_unique<BalancePending>(Query{std::string(sql::balance), {club, member}});
  const std::string limit = std::to_string(q.limit);
  Query query;
  if (!points) {
    query = Query{std::string(sql::transactions), {club, member, limit, before}};
  } else if (q.filter == "all") {
    query = Query{std::string(sql::points), {club, member, limit, before}};
  } else {
    query = Query{std::string(sql::points_filtered), {club, member, q.filter, limit, before}};
  }
  return std::make_unique<HistoryPending>(std::move(query), points, q.limit);
}

Prepared bad_redemption_id(const Request& r) {
  return fail(r, Error{ErrorCode::invalid_request, "Invalid redemption id in the path.",
                       {{"redemptionId", "must be 1 to 128 printable ASCII characters"}}});
}

// GET /api/v1/redemptions: the club's redemptions, paged as histories.
Prepared redemptions_list(const Request& r) {
  auto parsed = parse_redemptions_query(r.query);
  if (auto* e = std::get_if<Error>(&parsed)) return fail(r, *e);
  auto& q = std::get<RedemptionsQuery>(parsed);
  std::optional<std::string> before;
  if (q.before) before = std::to_string(*q.before);
  return statement(sql::redemptions,
                   {std::to_string(r.club_id), std::move(q.request_id), std::move(q.external_member_id),
                    std::move(q.status), std::to_string(q.limit), std::move(before), std::string(r.request_id)});
}

// The path's identifier at `index`. route_of matched the path against its
// template, so the segment is there; a miss would be a template the router
// does not know, refused as a bad id rather than read out of range.
std::optional<std::string> identifier_at(const std::vector<std::string_view>& parts, std::size_t index) {
  if (index >= parts.size()) return std::nullopt;
  return path_identifier(parts[index]);
}

// /api/v1/members/{externalMemberId}/<what>: a read of the member's
// balance or history, or its close.
Prepared member_route(const Request& r, Route route, const std::vector<std::string_view>& parts) {
  auto member = identifier_at(parts, 4);
  if (!member || parts.size() < 6) {
    return fail(r, Error{ErrorCode::invalid_request, "Invalid member id in the path.",
                         {{"externalMemberId", "must be 1 to 128 printable ASCII characters"}}});
  }
  if (route == Route::member_close) return write(r, parse_close(r.body, *member));
  return member_read(r, *member, parts[5]);
}

// A route whose path and method matched: its statement or its refusal.
Prepared dispatch(const Request& r, Route route, const std::vector<std::string_view>& parts) {
  switch (route) {
    case Route::members_create:
      return write(r, parse_member(r.body));
    case Route::transactions_settled:
      return write(r, parse_settlement(r.body));
    case Route::transactions_reversed:
      return write(r, parse_reversal(r.body));
    case Route::member_balance:
    case Route::member_points:
    case Route::member_transactions:
    case Route::member_close:
      return member_route(r, route, parts);
    case Route::redemptions_create:
      return write(r, parse_redemption(r.body));
    case Route::redemption_get: {
      auto id = identifier_at(parts, 4);
      if (!id) return bad_redemption_id(r);
      return statement(sql::redemption, {std::to_string(r.club_id), *id, std::string(r.request_id)});
    }
    case Route::redemptions_list:
      return redemptions_list(r);
    case Route::club_get:
      return statement(sql::club, {std::to_string(r.club_id), std::string(r.environment), std::string(r.request_id)});
    case Route::test_payout: {
      auto id = identifier_at(parts, 5);
      if (!id) return bad_redemption_id(r);
      return write(r, parse_test_payout(r.body, *id));
    }
    case Route::events_list:
    case Route::webhook_endpoints_list:
    case Route::webhook_endpoints_create:
    case Route::webhook_endpoint_get:
    case Route::webhook_endpoint_update:
    case Route::webhook_endpoint_rotate_secret:
    case Route::webhook_endpoint_delete:
    case Route::webhook_endpoint_deliveries:
    case Route::webhook_endpoint_replay:
      return prepare_events_and_webhooks(r, route, parts);
    default:
      break;
  }
  return fail(r, ErrorCode::not_found);
}

Prepared route(const Request& r) {
  const auto parts = segments(r.path);  // "", "api", "v1", ...
  if (parts.size() < 4 || parts[0] != "" || parts[1] != "api" || parts[2] != "v1") {
    return fail(r, ErrorCode::not_found);
  }
  // The club comes from the key alone; the edge refuses this too, the
  // domain keeps the rule so it holds whoever calls it.
  if (query_has_club_id(r.query)) {
    return fail(r, club_id_in_query_error());
  }
  // Which path is which route, and the method each serves, is decided
  // once, in routes.cpp (the metrics, the access log and the OpenAPI test
  // use the same table).
  const Route route = route_of(r.method, r.path);
  // The test helper exists only where mr_test_helpers is on (a sandbox):
  // elsewhere its path is unknown, whatever the method.
  if (route == Route::other || (route == Route::test_payout && !r.test_helpers)) {
    return fail(r, ErrorCode::not_found);
  }
  // The method first: a wrong one is method_not_allowed whatever the id.
  if (!route_serves(route, r.method)) return fail(r, ErrorCode::method_not_allowed);
  return dispatch(r, route, parts);
}

}  // namespace

Prepared prepare(const Request& request) noexcept {
  try {
    return route(request);
  } catch (...) {
    // Out of memory: try the normal envelope (it names the request id),
    // else a constant body.
    try {
      return error_response(ErrorCode::internal_error, "", request.request_id);
    } catch (...) {
      return Response{500, "{\"ok\":false,\"error\":{\"code\":\"internal_error\",\"message\":\"Internal error.\"}}",
                      false, kJsonContentType, false, ErrorCode::internal_error};
    }
  }
}

}  // namespace mr::ledger
