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

// A path after kPrefix as its segments, split once: the request's for
// each match, each template's at compile time.
constexpr std::size_t kMaxSegments = 4;
struct Segments {
  std::size_t count = 0;  // kMaxSegments + 1: too many for any route
  std::array<std::string_view, kMaxSegments> at{};
};

constexpr Segments split(std::string_view rest) {
  Segments out;
  for (;;) {
    if (out.count == kMaxSegments) return Segments{kMaxSegments + 1, {}};
    const auto slash = rest.find('/');
    out.at[out.count++] = rest.substr(0, slash);
    if (slash == std::string_view::npos) return out;
    rest.remove_prefix(slash + 1);
  }
}

constexpr auto kTemplates = [] {
  std::array<Segments, kPartnerRoutes.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = split(kPartnerRoutes[i].path.substr(kPrefix.size()));
  return out;
}();
static_assert(std::all_of(kTemplates.begin(), kTemplates.end(),
                          [](const Segments& t) { return t.count <= kMaxSegments; }));

// A request's segments against a template's: literal segments equal, a
// "{name}" segment any one but an empty last one. A trailing slash names
// another, unknown, path ("/api/v1/redemptions/"); an empty id inside a
// path ("/api/v1/members//balance") is the route's, whose router refuses
// it as a malformed id.
constexpr bool matches(const Segments& tmpl, const Segments& path) {
  if (tmpl.count != path.count) return false;
  for (std::size_t i = 0; i < tmpl.count; ++i) {
    const bool param = tmpl.at[i].starts_with('{');
    if (param ? path.at[i].empty() && i + 1 == path.count : tmpl.at[i] != path.at[i]) return false;
  }
  return true;
}
static_assert(matches(split("members/{id}/balance"), split("members/m-1/balance")));
static_assert(matches(split("members/{id}/balance"), split("members//balance")));
static_assert(!matches(split("redemptions/{id}"), split("redemptions/")));
static_assert(!matches(split("members"), split("members/")));

}  // namespace

std::string_view route_label(Route route) { return kLabels[static_cast<std::size_t>(route)]; }

std::span<const PartnerRoute> partner_routes() { return kPartnerRoutes; }

bool route_serves(Route route, std::string_view method) {
  for (const auto& r : kPartnerRoutes) {
    if (r.route == route) return r.method == method;
  }
  return false;
}

Route route_of(std::string_view method, std::string_view path) {
  if (!path.starts_with(kPrefix)) return Route::other;
  const Segments segments = split(path.substr(kPrefix.size()));
  if (segments.count > kMaxSegments) return Route::other;
  Route first = Route::other;
  for (std::size_t i = 0; i < kPartnerRoutes.size(); ++i) {
    if (!matches(kTemplates[i], segments)) continue;
    if (kPartnerRoutes[i].method == method) return kPartnerRoutes[i].route;
    if (first == Route::other) first = kPartnerRoutes[i].route;
  }
  return first;
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
