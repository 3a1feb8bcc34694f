// GET /api/v1/events' query string (contract section 10): after, limit and
// types; unknown parameters are ignored (contract section 9), clubId is
// refused before, by the router.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "ledger/errors.hpp"

namespace mr::ledger {

struct EventsQuery {
  int limit = 50;
  // The cursor as sent (1..128 printable ASCII); mr_events decides whether
  // it is one of its own and not expired.
  std::optional<std::string> after;
  // Known types joined by ',' (each once); nullopt: every type.
  std::optional<std::string> types;
};

// limit: as histories (default 50, capped at 100, below 1 or not an
// integer: invalid_request); after: 1 to 128 printable ASCII; types: a
// comma-separated list of known event types.
std::variant<Error, EventsQuery> parse_events_query(std::string_view query);

}  // namespace mr::ledger
