#include "ledger/errors.hpp"

#include <algorithm>
#include <array>

#include "ledger/json_text.hpp"
#include "ledger/pods.hpp"
#include "ledger/text_rules.hpp"

namespace mr {
namespace {

struct CodeInfo {
  ErrorCode code;
  std::string_view name;
  int status;
  std::string_view message;
};

constexpr std::array kCodes = {
    CodeInfo{ErrorCode::invalid_request, "invalid_request", 400, "The request does not match the endpoint schema."},
    CodeInfo{ErrorCode::unauthorized, "unauthorized", 401, "The API key is missing, inactive or from another environment."},
    CodeInfo{ErrorCode::invalid_signature, "invalid_signature", 401, "The signature does not match the request."},
    CodeInfo{ErrorCode::stale_timestamp, "stale_timestamp", 401, "X-MR-Timestamp is outside the 300 second window."},
    CodeInfo{ErrorCode::partner_not_found, "partner_not_found", 404, "partnerRef is not the reference of this key's club."},
    CodeInfo{ErrorCode::cardholder_not_found, "cardholder_not_found", 404, "The member is not onboarded for this club."},
    CodeInfo{ErrorCode::transaction_not_found, "transaction_not_found", 404, "No settled transaction with this id for this member."},
    CodeInfo{ErrorCode::redemption_not_found, "redemption_not_found", 404, "No redemption with this id."},
    CodeInfo{ErrorCode::webhook_endpoint_not_found, "webhook_endpoint_not_found", 404, "No webhook endpoint with this id."},
    CodeInfo{ErrorCode::not_found, "not_found", 404, "No such resource."},
    CodeInfo{ErrorCode::method_not_allowed, "method_not_allowed", 405, "The method is not allowed on this path."},
    CodeInfo{ErrorCode::idempotency_in_progress, "idempotency_in_progress", 409, "A request with this idempotency key is still being processed."},
    CodeInfo{ErrorCode::member_closed, "member_closed", 409, "The member is closed."},
    CodeInfo{ErrorCode::duplicate_transaction, "duplicate_transaction", 409, "This externalTransactionId was already settled."},
    CodeInfo{ErrorCode::duplicate_request_id, "duplicate_request_id", 409, "This redemption requestId was already used."},
    CodeInfo{ErrorCode::transaction_already_reversed, "transaction_already_reversed", 409, "Nothing is left to reverse on this transaction."},
    CodeInfo{ErrorCode::member_has_pending_redemptions, "member_has_pending_redemptions", 409, "The member has redemptions awaiting payout."},
    CodeInfo{ErrorCode::payout_state_conflict, "payout_state_conflict", 409, "The payout is already in a contradicting state."},
    CodeInfo{ErrorCode::payload_too_large, "payload_too_large", 413, "The body exceeds 16 KiB."},
    CodeInfo{ErrorCode::duplicate_idempotency_conflict, "duplicate_idempotency_conflict", 422, "The idempotency key was used with a different request."},
    CodeInfo{ErrorCode::unsupported_currency, "unsupported_currency", 422, "The currency is not supported by the club."},
    CodeInfo{ErrorCode::insufficient_partner_points_pool, "insufficient_partner_points_pool", 422, "The club's points pool cannot cover the award."},
    CodeInfo{ErrorCode::insufficient_points_balance, "insufficient_points_balance", 422, "The redemption exceeds the available points."},
    CodeInfo{ErrorCode::missing_payout_reference, "missing_payout_reference", 422, "The member's payout details are not ready."},
    CodeInfo{ErrorCode::insufficient_partner_cash_capacity, "insufficient_partner_cash_capacity", 422, "The club cannot yet cover the redemption."},
    CodeInfo{ErrorCode::partner_funding_restricted, "partner_funding_restricted", 422, "The club's funding is restricted."},
    CodeInfo{ErrorCode::minimum_redemption, "minimum_redemption", 422, "The redemption is below the club's minimum."},
    CodeInfo{ErrorCode::invalid_redemption_points, "invalid_redemption_points", 422, "Redemption points must be between 1 and 1000000000."},
    CodeInfo{ErrorCode::invalid_redemption_value, "invalid_redemption_value", 422, "The computed redemption value is invalid."},
    CodeInfo{ErrorCode::partner_configuration_incomplete, "partner_configuration_incomplete", 422, "The club's settings are incomplete."},
    CodeInfo{ErrorCode::reversal_exceeds_settled_amount, "reversal_exceeds_settled_amount", 422, "The reversed amount would exceed the settled amount."},
    CodeInfo{ErrorCode::rate_limited, "rate_limited", 429, "Too many requests for this key."},
    CodeInfo{ErrorCode::internal_error, "internal_error", 500, "Internal error."},
    CodeInfo{ErrorCode::not_implemented, "not_implemented", 501, "Not implemented."},
    CodeInfo{ErrorCode::service_unavailable, "service_unavailable", 503, "The service is temporarily unavailable; retry later."},
};

const CodeInfo& info(ErrorCode code) {
  for (const auto& c : kCodes) {
    if (c.code == code) return c;
  }
  return kCodes[static_cast<std::size_t>(ErrorCode::internal_error)];
}

}  // namespace

// render_error writes code names as they are.
static_assert(std::all_of(kCodes.begin(), kCodes.end(), [](const CodeInfo& c) {
  return std::all_of(c.name.begin(), c.name.end(), [](char ch) { return (ch >= 'a' && ch <= 'z') || ch == '_'; });
}));

constexpr auto kAllCodes = [] {
  std::array<ErrorCode, kCodes.size()> out{};
  for (std::size_t i = 0; i < kCodes.size(); ++i) out[i] = kCodes[i].code;
  return out;
}();

std::span<const ErrorCode> all_codes() { return kAllCodes; }
std::string_view code_name(ErrorCode code) { return info(code).name; }
int http_status(ErrorCode code) { return info(code).status; }
std::string_view default_message(ErrorCode code) { return info(code).message; }

std::optional<ErrorCode> code_from_name(std::string_view name) {
  for (const auto& c : kCodes) {
    if (c.name == name) return c.code;
  }
  return std::nullopt;
}

ErrorCode code_for_status(int status) {
  switch (status) {
    case 400: return ErrorCode::invalid_request;
    case 401: case 403: return ErrorCode::unauthorized;
    case 404: return ErrorCode::not_found;
    case 405: return ErrorCode::method_not_allowed;
    case 413: return ErrorCode::payload_too_large;
    case 414: case 494: return ErrorCode::invalid_request;  // URI or header too long
    case 505: return ErrorCode::invalid_request;            // a request line of HTTP/2.0 and up
    case 429: return ErrorCode::rate_limited;
    case 501: return ErrorCode::not_implemented;
    case 502: case 503: case 504: return ErrorCode::service_unavailable;
    default: return status >= 400 && status < 500 ? ErrorCode::invalid_request
                                                  : ErrorCode::internal_error;
  }
}

ErrorCode code_for_sqlstate(std::string_view sqlstate) {
  return sqlstate == kClubMovingSqlstate ? ErrorCode::service_unavailable : ErrorCode::internal_error;
}

namespace {

std::string render_envelope(ErrorCode code, std::string_view message, std::string_view request_id,
                            std::span<const FieldProblem> details, std::string_view redemption_id) {
  if (message.empty()) message = default_message(code);
  // The edge's refusals and most answers: no details, and text that needs
  // no escaping (code names and messages are the server's own, request ids
  // hex) goes out as it is. RapidJSON, which escapes a byte at a time,
  // took a third of a refusal's work at the edge (bench/RESULTS.md).
  const std::string_view name = code_name(code);
  if (details.empty() && redemption_id.empty() && is_json_plain(message) && is_json_plain(request_id) &&
      is_valid_utf8(message) && is_valid_utf8(request_id)) {
    constexpr std::string_view kOpen = R"({"ok":false,"error":{"code":")", kMessage = R"(","message":")",
                               kRequestId = R"(","requestId":")", kClose = R"("}})";
    std::string out;
    out.reserve(kOpen.size() + name.size() + kMessage.size() + message.size() + kRequestId.size() +
                request_id.size() + kClose.size());
    out.append(kOpen).append(name).append(kMessage).append(message).append(kRequestId).append(request_id).append(kClose);
    return out;
  }
  // Sized once for the envelope (no regrowth on every refusal the edge answers).
  std::size_t size = 128 + message.size() + request_id.size() + redemption_id.size();
  for (const auto& d : details) size += 32 + d.field.size() + d.problem.size();
  ledger::JsonText w(size);
  // Messages may quote client bytes: the answer stays valid UTF-8.
  const auto str = [&w](std::string_view s) {
    if (is_valid_utf8(s)) {
      w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    } else {
      const std::string valid = to_valid_utf8(s);
      w.String(valid.data(), static_cast<rapidjson::SizeType>(valid.size()));
    }
  };
  w.StartObject();
  w.Key("ok");
  w.Bool(false);
  w.Key("error");
  w.StartObject();
  w.Key("code");
  str(name);
  w.Key("message");
  str(message);
  w.Key("requestId");
  str(request_id);
  if (!redemption_id.empty()) {
    w.Key("redemptionId");
    str(redemption_id);
  }
  if (!details.empty()) {
    w.Key("details");
    w.StartArray();
    for (const auto& d : details) {
      w.StartObject();
      w.Key("field");
      str(d.field);
      w.Key("problem");
      str(d.problem);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  w.EndObject();
  return w.str();
}

}  // namespace

std::string render_error(ErrorCode code, std::string_view message, std::string_view request_id,
                         std::span<const FieldProblem> details) {
  return render_envelope(code, message, request_id, details, {});
}

std::string render_error(const Error& error, std::string_view request_id) {
  return render_envelope(error.code, error.message, request_id, error.details, error.redemption_id);
}

}  // namespace mr
