// Path parameters and the query strings of the GET endpoints (contract
// sections 6 and 9).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "ledger/errors.hpp"

namespace mr::ledger {

// Percent-decoding of a query name or value (`plus_is_space`) or a path
// segment; nullopt for a '%' without two hex digits after it.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

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

// Every GET's query string (contract section 9): unknown parameter names
// are ignored, whatever their values; a known one with a bad value is
// invalid_request naming it. clubId is refused before, by the router.

// filter (points only), limit (default 50, capped at 100, below 1 or not an
// integer: invalid_request), before (non-negative integer ms).
std::variant<Error, HistoryQuery> parse_history_query(std::string_view query, bool with_filter);

// GET /api/v1/redemptions: limit and before as histories take them, and the
// filters requestId and externalMemberId (identifiers) and status
// (payout_pending, completed or failed).
struct RedemptionsQuery {
  int limit = 50;
  std::optional<std::int64_t> before;
  std::optional<std::string> request_id;
  std::optional<std::string> external_member_id;
  std::optional<std::string> status;
};
std::variant<Error, RedemptionsQuery> parse_redemptions_query(std::string_view query);

}  // namespace mr::ledger
