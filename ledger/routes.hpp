// The fixed set of route names a request is counted and logged under
// (metrics labels, $mr_route_name): never a raw path, so label sets stay small
// whatever clients send.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace mr::ledger {

enum class Route {
  members_create,
  member_balance,
  member_points,
  member_transactions,
  member_close,
  transactions_settled,
  transactions_reversed,
  redemptions_create,
  redemption_get,
  club_get,             // GET /api/v1/club
  redemptions_list,     // GET /api/v1/redemptions
  test_payout,          // POST /api/v1/test-helpers/redemptions/{id}/payout (sandbox)
  events_list,                    // GET /api/v1/events
  webhook_endpoints_list,         // GET /api/v1/webhook-endpoints
  webhook_endpoints_create,       // POST /api/v1/webhook-endpoints
  webhook_endpoint_get,           // GET /api/v1/webhook-endpoints/{id}
  webhook_endpoint_update,        // POST /api/v1/webhook-endpoints/{id}
  webhook_endpoint_rotate_secret, // POST .../{id}/rotate-secret
  webhook_endpoint_delete,        // POST .../{id}/delete
  webhook_endpoint_deliveries,    // GET .../{id}/deliveries
  webhook_endpoint_replay,        // POST .../{id}/replay
  ops_healthz,
  ops_readyz,
  ops_metrics,
  ops_payouts,
  ops_payout_result,
  ops_webhooks,  // /webhooks, /webhooks/failures, /webhooks/{id}/enable|disable|replay
  other,  // no route: not_found, or a path outside the API
};

inline constexpr std::size_t kRouteCount = static_cast<std::size_t>(Route::other) + 1;

// One partner operation: its method and path template. The table of them
// (partner_routes) is the only place the partner API's paths are defined:
// route_of matches requests against it, the router takes the allowed
// method from it, and tests hold docs/openapi.yaml against it. A "{name}"
// segment stands for any segment but an empty last one (a trailing slash
// is another path); the router checks the id.
struct PartnerRoute {
  Route route;
  std::string_view method;
  std::string_view path;  // e.g. "/api/v1/members/{externalMemberId}/balance"
};
std::span<const PartnerRoute> partner_routes();
// Whether the route's operation is this method: a request on the route's
// path with another method is method_not_allowed.
bool route_serves(Route route, std::string_view method);

std::string_view route_label(Route route);

// The partner API's route for a raw path (without the query), whatever the
// method: the first of partner_routes whose template the path matches;
// Route::other when the router answers not_found.
Route route_of(std::string_view path);
// The same, told apart by the method where one path serves two routes
// (GET /api/v1/redemptions lists, POST creates); a method the path does
// not serve gets the path's first route (the POST where there is one).
Route route_of(std::string_view method, std::string_view path);
// The ops listener's route for a raw path.
Route ops_route_of(std::string_view path);

}  // namespace mr::ledger
