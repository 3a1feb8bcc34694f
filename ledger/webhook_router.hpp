// The events API and the webhook endpoint API (contract section 10): the
// part of the router (router.cpp) for GET /api/v1/events and every path
// under /api/v1/webhook-endpoints.
#pragma once

#include <string_view>
#include <vector>

#include "ledger/api.hpp"

namespace mr::ledger {

// `parts`: the path's segments ("", "api", "v1", ...), already known to be
// one of route_of's events or webhook endpoint routes.
Prepared prepare_events_and_webhooks(const Request& r, const std::vector<std::string_view>& parts);

}  // namespace mr::ledger
