// Path parameters and the history endpoints' query string (contract 6).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "ledger/errors.hpp"

namespace mr::ledger {

// Percent-decodes a path segment and checks it as an identifier (1..128
// bytes of printable ASCII); nullopt when either fails.
std::optional<std::string> path_identifier(std::string_view segment);

// Calls `visit` with each name=value pair of a query string, raw (not
// percent-decoded), until it returns false; false when it was stopped.
bool for_each_query_param(std::string_view query,
                          const std::function<bool(std::string_view name, std::string_view raw_value)>& visit);

// True when the query string names clubId (percent-decoded name): the club
// comes from the key alone (contract section 1). The edge and the domain
// both refuse it with club_id_in_query_error().
bool query_has_club_id(std::string_view query);
Error club_id_in_query_error();

struct HistoryQuery {
  std::string filter = "all";
  int limit = 50;
  std::optional<std::int64_t> before;
};

// filter (points only), limit (default 50, capped at 100, below 1 or not an
// integer: invalid_request), before (non-negative integer ms).
std::variant<Error, HistoryQuery> parse_history_query(std::string_view query, bool with_filter);

}  // namespace mr::ledger
