// Error codes of the partner API, their HTTP statuses and the JSON failure
// envelope (contract section 1). One table serves the edge modules and the
// ledger, so a code always maps to the same status everywhere.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mr {

enum class ErrorCode {
  invalid_request,
  unauthorized,
  invalid_signature,
  stale_timestamp,
  partner_not_found,
  cardholder_not_found,
  transaction_not_found,
  redemption_not_found,
  webhook_endpoint_not_found,
  not_found,
  method_not_allowed,
  idempotency_in_progress,
  member_closed,
  duplicate_transaction,
  duplicate_request_id,
  transaction_already_reversed,
  member_has_pending_redemptions,
  payout_state_conflict,
  payload_too_large,
  duplicate_idempotency_conflict,
  unsupported_currency,
  insufficient_partner_points_pool,
  insufficient_points_balance,
  missing_payout_reference,
  insufficient_partner_cash_capacity,
  partner_funding_restricted,
  minimum_redemption,
  invalid_redemption_points,
  invalid_redemption_value,
  partner_configuration_incomplete,
  reversal_exceeds_settled_amount,
  rate_limited,
  internal_error,
  not_implemented,
  service_unavailable,
};

// Every code, in the order of the table in errors.cpp (for tools and
// tests that list them, e.g. against docs/openapi.yaml).
std::span<const ErrorCode> all_codes();
std::string_view code_name(ErrorCode code);
std::optional<ErrorCode> code_from_name(std::string_view name);
int http_status(ErrorCode code);
std::string_view default_message(ErrorCode code);

// The error a bare HTTP status from nginx itself stands for (error_page).
ErrorCode code_for_status(int status);

// The error a statement's SQLSTATE stands for when its route has no answer
// of its own to it (ledger::Pending::on_sql_error): a moving club's write
// (kClubMovingSqlstate in ledger/pods.hpp, mr_refuse_moving) is
// service_unavailable, which clients retry (503 with Retry-After); any
// other failed statement is internal_error.
ErrorCode code_for_sqlstate(std::string_view sqlstate);

struct FieldProblem {
  std::string field;    // JSON path of the field, e.g. "member.email"
  std::string problem;  // what is wrong with it, for a human
};

struct Error {
  ErrorCode code;
  std::string message;  // empty: default_message(code)
  std::vector<FieldProblem> details;
  // duplicate_request_id: the first redemption of that requestId, written
  // as error.redemptionId (contract section 9); empty: none.
  std::string redemption_id = {};
};

// {"ok":false,"error":{"code":...,"message":...,"requestId":...,"details":[...]}}
std::string render_error(ErrorCode code, std::string_view message,
                         std::string_view request_id,
                         std::span<const FieldProblem> details = {});
// The same with error.redemptionId when the error names one.
std::string render_error(const Error& error, std::string_view request_id);

}  // namespace mr
