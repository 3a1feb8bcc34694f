// The POST bodies that change points, validated into the normalised
// command (only known fields, typed) that mr_write receives as jsonb.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include "ledger/errors.hpp"

namespace mr::ledger {

struct WriteCommand {
  std::string op;        // mr_write's operation: member, settle, reverse, ...
  std::string cmd_json;  // p_cmd
};

using Parsed = std::variant<Error, WriteCommand>;

Parsed parse_member(std::string_view body);
Parsed parse_settlement(std::string_view body);
Parsed parse_reversal(std::string_view body);
Parsed parse_redemption(std::string_view body);
// The member comes from the path, already decoded and checked.
Parsed parse_close(std::string_view body, std::string_view external_member_id);
// The sandbox test helper's payout result (contract section 9): outcome
// succeeded | failed, failureReason optional; the redemption comes from the
// path, already decoded and checked.
Parsed parse_test_payout(std::string_view body, std::string_view redemption_id);

}  // namespace mr::ledger
