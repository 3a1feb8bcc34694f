// The states of a payout and the operator verbs that move one (contract
// section 8), for the ops listener and mrctl alike.
#pragma once

#include <optional>
#include <string_view>

namespace mr::ledger {

inline constexpr std::string_view kPayoutStatusList = "created, submitted, succeeded or failed";

inline bool is_payout_status(std::string_view s) {
  return s == "created" || s == "submitted" || s == "succeeded" || s == "failed";
}

// submit -> submitted, succeed -> succeeded, fail -> failed.
inline std::optional<std::string_view> payout_status_for_verb(std::string_view verb) {
  if (verb == "submit") return "submitted";
  if (verb == "succeed") return "succeeded";
  if (verb == "fail") return "failed";
  return std::nullopt;
}

}  // namespace mr::ledger
