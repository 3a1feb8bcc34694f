// Renders what a ledger function returned ({"outcome", "requestId",
// "data" | "message"/"details", "replayed"?}) as the API's response. A
// pure function of that jsonb, so a replay is byte for byte the first.
#pragma once

#include <string_view>

#include "ledger/api.hpp"

namespace mr::ledger {

Response render_result(std::string_view result_json, std::string_view request_id);

// GET balance from mr_balance_row's columns (no row: cardholder_not_found),
// byte for byte what mr_balance's jsonb rendered to: jsonb's key order
// (shorter keys first, then bytewise) and RapidJSON's numbers.
Response render_balance(const ResultView& row, std::string_view request_id);

}  // namespace mr::ledger
