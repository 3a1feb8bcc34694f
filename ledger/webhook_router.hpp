// The events API and the webhook endpoint API (contract section 10): the
// part of the router (router.cpp) for GET /api/v1/events and every path
// under /api/v1/webhook-endpoints.
#pragma once

#include <string_view>
#include <vector>

#include "ledger/api.hpp"
#include "ledger/routes.hpp"

namespace mr::ledger {

// `route`: the events or webhook endpoint route route_of found, its method
// already checked; `parts`: the path's segments ("", "api", "v1", ...).
Prepared prepare_events_and_webhooks(const Request& r, Route route, const std::vector<std::string_view>& parts);

}  // namespace mr::ledger
