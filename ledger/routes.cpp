#include "ledger/routes.hpp"

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
    "ops_payout_result",  "other"};

// The next segment of `path` after a '/', advancing past it.
std::optional<std::string_view> next_segment(std::string_view& path) {
  if (path.empty() || path.front() != '/') return std::nullopt;
  path.remove_prefix(1);
  const auto slash = path.find('/');
  const std::string_view segment = path.substr(0, slash);
  path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash);
  return segment;
}

}  // namespace

std::string_view route_label(Route route) { return kLabels[static_cast<std::size_t>(route)]; }

std::optional<Route> route_from_label(std::string_view label) {
  for (std::size_t i = 0; i < kLabels.size(); ++i) {
    if (kLabels[i] == label) return static_cast<Route>(i);
  }
  return std::nullopt;
}

Route route_of(std::string_view path) {
  constexpr std::string_view prefix = "/api/v1";
  if (!path.starts_with(prefix)) return Route::other;
  path.remove_prefix(prefix.size());
  std::array<std::string_view, 4> parts{};
  std::size_t n = 0;
  while (!path.empty()) {
    auto segment = next_segment(path);
    if (!segment || n == parts.size()) return Route::other;
    parts[n++] = *segment;
  }
  if (n == 1 && parts[0] == "club") return Route::club_get;
  if (n == 4 && parts[0] == "test-helpers" && parts[1] == "redemptions" && parts[3] == "payout") {
    return Route::test_payout;
  }
  if (n == 1 && parts[0] == "events") return Route::events_list;
  if (parts[0] == "webhook-endpoints") {
    if (n == 1) return Route::webhook_endpoints_create;
    if (parts[1].empty()) return Route::other;  // a trailing slash is another, unknown, path
    if (n == 2) return Route::webhook_endpoint_update;
    if (n == 3 && parts[2] == "rotate-secret") return Route::webhook_endpoint_rotate_secret;
    if (n == 3 && parts[2] == "delete") return Route::webhook_endpoint_delete;
    if (n == 3 && parts[2] == "deliveries") return Route::webhook_endpoint_deliveries;
    if (n == 3 && parts[2] == "replay") return Route::webhook_endpoint_replay;
    return Route::other;
  }
  if (n == 1 && parts[0] == "members") return Route::members_create;
  if (n == 1 && parts[0] == "redemptions") return Route::redemptions_create;
  if (n == 2 && parts[0] == "redemptions") return Route::redemption_get;
  if (n == 2 && parts[0] == "transactions" && parts[1] == "settled") return Route::transactions_settled;
  if (n == 2 && parts[0] == "transactions" && parts[1] == "reversed") return Route::transactions_reversed;
  if (n == 3 && parts[0] == "members") {
    if (parts[2] == "balance") return Route::member_balance;
    if (parts[2] == "points") return Route::member_points;
    if (parts[2] == "transactions") return Route::member_transactions;
    if (parts[2] == "close") return Route::member_close;
  }
  return Route::other;
}

Route route_of(std::string_view method, std::string_view path) {
  const Route route = route_of(path);
  if (method != "GET") return route;
  if (route == Route::redemptions_create) return Route::redemptions_list;
  if (route == Route::webhook_endpoints_create) return Route::webhook_endpoints_list;
  if (route == Route::webhook_endpoint_update) return Route::webhook_endpoint_get;
  return route;
}

Route ops_route_of(std::string_view path) {
  if (path == "/healthz") return Route::ops_healthz;
  if (path == "/readyz") return Route::ops_readyz;
  if (path == "/metrics") return Route::ops_metrics;
  if (path == "/payouts") return Route::ops_payouts;
  if (path.starts_with("/payouts/")) return Route::ops_payout_result;
  return Route::other;
}

}  // namespace mr::ledger
