#include "ledger/routes.hpp"

#include <algorithm>
#include <array>

namespace mr::ledger {
namespace {

constexpr std::array<std::string_view, kRouteCount> kLabels = {
    "members_create",     "member_balance",       "member_points",          "member_transactions",
    "member_close",       "transactions_settled", "transactions_reversed",  "redemptions_create",
    "redemption_get",     "club_get",             "redemptions_list",       "test_payout",
    "events_list",        "webhook_endpoints_list", "webhook_endpoints_create", "webhook_endpoint_get",
    "webhook_endpoint_update", "webhook_endpoint_rotate_secret", "webhook_endpoint_delete",
    "webhook_endpoint_deliveries", "webhook_endpoint_replay",
    "ops_healthz",        "ops_readyz",           "ops_metrics",            "ops_payouts",
    "ops_payout_result",  "ops_webhooks",         "other"};

// The partner API, one operation a line. Where a path serves two methods
// the POST comes first: a method the path does not serve is counted under
// it (metrics, access log) and answered method_not_allowed.
constexpr std::string_view kPrefix = "/api/v1/";
constexpr std::array kPartnerRoutes = {
    PartnerRoute{Route::members_create, "POST", "/api/v1/members"},
    PartnerRoute{Route::member_balance, "GET", "/api/v1/members/{externalMemberId}/balance"},
    PartnerRoute{Route::member_points, "GET", "/api/v1/members/{externalMemberId}/points"},
    PartnerRoute{Route::member_transactions, "GET", "/api/v1/members/{externalMemberId}/transactions"},
    PartnerRoute{Route::member_close, "POST", "/api/v1/members/{externalMemberId}/close"},
    PartnerRoute{Route::transactions_settled, "POST", "/api/v1/transactions/settled"},
    PartnerRoute{Route::transactions_reversed, "POST", "/api/v1/transactions/reversed"},
    PartnerRoute{Route::redemptions_create, "POST", "/api/v1/redemptions"},
    PartnerRoute{Route::redemptions_list, "GET", "/api/v1/redemptions"},
    PartnerRoute{Route::redemption_get, "GET", "/api/v1/redemptions/{redemptionId}"},
    PartnerRoute{Route::club_get, "GET", "/api/v1/club"},
    PartnerRoute{Route::test_payout, "POST", "/api/v1/test-helpers/redemptions/{redemptionId}/payout"},
    PartnerRoute{Route::events_list, "GET", "/api/v1/events"},
    PartnerRoute{Route::webhook_endpoints_create, "POST", "/api/v1/webhook-endpoints"},
    PartnerRoute{Route::webhook_endpoints_list, "GET", "/api/v1/webhook-endpoints"},
    PartnerRoute{Route::webhook_endpoint_update, "POST", "/api/v1/webhook-endpoints/{endpointId}"},
    PartnerRoute{Route::webhook_endpoint_get, "GET", "/api/v1/webhook-endpoints/{endpointId}"},
    PartnerRoute{Route::webhook_endpoint_rotate_secret, "POST", "/api/v1/webhook-endpoints/{endpointId}/rotate-secret"},
    PartnerRoute{Route::webhook_endpoint_delete, "POST", "/api/v1/webhook-endpoints/{endpointId}/delete"},
    PartnerRoute{Route::webhook_endpoint_deliveries, "GET", "/api/v1/webhook-endpoints/{endpointId}/deliveries"},
    PartnerRoute{Route::webhook_endpoint_replay, "POST", "/api/v1/webhook-endpoints/{endpointId}/replay"},
};
static_assert(std::all_of(kPartnerRoutes.begin(), kPartnerRoutes.end(),
                          [](const PartnerRoute& r) { return r.path.starts_with(kPrefix); }));

// The segment before the next '/' (or the end), advancing past that '/'.
constexpr std::string_view take_segment(std::string_view& rest, bool& more) {
  const auto slash = rest.find('/');
  const std::string_view segment = rest.substr(0, slash);
  more = slash != std::string_view::npos;
  rest = more ? rest.substr(slash + 1) : std::string_view{};
  return segment;
}

// `path` after kPrefix against a template after kPrefix: literal segments
// equal, a "{name}" segment any one but an empty last one. A trailing
// slash names another, unknown, path ("/api/v1/redemptions/"); an empty
// id inside a path ("/api/v1/members//balance") is the route's, whose
// router refuses it as a malformed id.
constexpr bool matches(std::string_view tmpl, std::string_view path) {
  bool tmpl_more = true, path_more = true;
  while (tmpl_more && path_more) {
    const std::string_view want = take_segment(tmpl, tmpl_more);
    const std::string_view got = take_segment(path, path_more);
    if (want.starts_with('{') ? got.empty() && !path_more : want != got) return false;
  }
  return !tmpl_more && !path_more;
}

}  // namespace

std::string_view route_label(Route route) { return kLabels[static_cast<std::size_t>(route)]; }

std::optional<Route> route_from_label(std::string_view label) {
  for (std::size_t i = 0; i < kLabels.size(); ++i) {
    if (kLabels[i] == label) return static_cast<Route>(i);
  }
  return std::nullopt;
}

std::span<const PartnerRoute> partner_routes() { return kPartnerRoutes; }

bool route_serves(Route route, std::string_view method) {
  for (const auto& r : kPartnerRoutes) {
    if (r.route == route) return r.method == method;
  }
  return false;
}

Route route_of(std::string_view method, std::string_view path) {
  if (!path.starts_with(kPrefix)) return Route::other;
  path.remove_prefix(kPrefix.size());
  std::optional<Route> first;
  for (const auto& r : kPartnerRoutes) {
    if (!matches(r.path.substr(kPrefix.size()), path)) continue;
    if (r.method == method) return r.route;
    if (!first) first = r.route;
  }
  return first.value_or(Route::other);
}

Route route_of(std::string_view path) { return route_of({}, path); }

Route ops_route_of(std::string_view path) {
  if (path == "/healthz") return Route::ops_healthz;
  if (path == "/readyz") return Route::ops_readyz;
  if (path == "/metrics") return Route::ops_metrics;
  if (path == "/payouts") return Route::ops_payouts;
  if (path.starts_with("/payouts/")) return Route::ops_payout_result;
  if (path == "/webhooks" || path.starts_with("/webhooks/")) return Route::ops_webhooks;
  return Route::other;
}

}  // namespace mr::ledger
