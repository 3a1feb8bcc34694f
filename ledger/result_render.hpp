// Renders what a ledger function returned ({"outcome", "requestId",
// "data" | "message"/"details"/"redemptionId", "replayed"?}) as the API's response. A
// pure function of that jsonb, so a replay is byte for byte the first.
#pragma once

#include <string>
#include <string_view>

#include "ledger/api.hpp"
#include "ledger/json_text.hpp"

namespace mr::ledger {

// The success envelope, {"ok":true,"data":...}, around what `data` writes;
// false from `data` is a rendering failure (nullopt).
template <class WriteData>
std::optional<std::string> ok_body(WriteData&& data) {
  JsonText w;
  w.StartObject();
  w.Key("ok");
  w.Bool(true);
  w.Key("data");
  if (!data(w)) return std::nullopt;
  w.EndObject();
  return w.str();
}

Response render_result(std::string_view result_json, std::string_view request_id);

// GET balance from mr_balance_row's columns (no row: cardholder_not_found),
// byte for byte what mr_balance's jsonb rendered to: jsonb's key order
// (shorter keys first, then bytewise) and RapidJSON's numbers.
Response render_balance(const ResultView& row, std::string_view request_id);

}  // namespace mr::ledger
