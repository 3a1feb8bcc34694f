#include "modules/auth/auth_core.hpp"

#include <algorithm>

#include "ledger/text_rules.hpp"
#include "signing/signature.hpp"

namespace mr::auth {

namespace {

// |stamp - now| > window, exact to the nanosecond, for any stamp.
bool outside_window(const Rfc3339& stamp, std::chrono::system_clock::time_point now,
                    std::chrono::seconds window) {
  using namespace std::chrono;
  const auto now_s = floor<seconds>(now);
  const seconds whole = stamp.seconds - now_s;
  // Beyond window + 1 s the fractions cannot bring it back inside.
  if (abs(whole) > window + seconds(1)) return true;
  const nanoseconds diff = whole + stamp.fraction - duration_cast<nanoseconds>(now - now_s);
  return abs(diff) > window;
}

}  // namespace

std::optional<Timestamp> parse_timestamp(std::string_view text) {
  using namespace std::chrono;
  const auto wire = parse_rfc3339_utc(text);
  // Timestamp counts nanoseconds in 64 bits: years 1678-2261 fit.
  constexpr auto kMin = floor<seconds>(Timestamp::min()) + seconds(1);
  constexpr auto kMax = floor<seconds>(Timestamp::max()) - seconds(1);
  if (!wire || wire->seconds < kMin || wire->seconds > kMax) return std::nullopt;
  return Timestamp{wire->seconds} + wire->fraction;
}

bool idempotency_key_valid(std::string_view key) {
  return !key.empty() && key.size() <= 255 && is_visible_ascii(key);
}

bool is_json_content_type(std::string_view value) {
  constexpr std::string_view kJson = "application/json";
  if (value == kJson) return true;  // what nearly every client sends
  std::string_view media = value.substr(0, value.find(';'));
  while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
  while (!media.empty() && (media.front() == ' ' || media.front() == '\t')) media.remove_prefix(1);
  if (media.size() != kJson.size()) return false;
  for (std::size_t i = 0; i < media.size(); ++i) {
    if (ascii_lower(media[i]) != kJson[i]) return false;
  }
  return true;
}

Verdict check_request(const RequestFacts& f, const KeyLookup& lookup,
                      std::chrono::system_clock::time_point now, std::chrono::seconds window) {
  const auto fail = [](ErrorCode code, std::string message) {
    return Verdict{code, std::move(message)};
  };
  if (!f.key_id || f.key_id->empty()) return fail(ErrorCode::unauthorized, "X-MR-Key-Id is missing.");
  const std::optional<KeyView> key = lookup(*f.key_id);
  if (!key) {
    return fail(ErrorCode::unauthorized, "X-MR-Key-Id names no active key of this environment.");
  }
  if (!f.timestamp) return fail(ErrorCode::invalid_request, "X-MR-Timestamp is missing.");
  if (!f.signature) return fail(ErrorCode::invalid_request, "X-MR-Signature is missing.");
  const auto ts = parse_rfc3339_utc(*f.timestamp);
  if (!ts) {
    return fail(ErrorCode::invalid_request, "X-MR-Timestamp must be RFC 3339 in UTC, e.g. 2026-11-22T10:00:00Z.");
  }
  if (f.method == "POST") {
    if (!f.idempotency_key) return fail(ErrorCode::invalid_request, "X-MR-Idempotency-Key is missing.");
    if (!idempotency_key_valid(*f.idempotency_key)) {
      return fail(ErrorCode::invalid_request, "X-MR-Idempotency-Key must be 1 to 255 visible ASCII characters.");
    }
    if (!f.content_type || !is_json_content_type(*f.content_type)) {
      return fail(ErrorCode::invalid_request, "Content-Type must be application/json.");
    }
  }
  if (outside_window(*ts, now, window)) {
    return fail(ErrorCode::stale_timestamp, "X-MR-Timestamp is more than " + std::to_string(window.count()) +
                                                " s from server time; send the current UTC time.");
  }
  // nginx admits upper-case methods only; a copy for any other caller.
  std::string method_copy;
  std::string_view method = f.method;
  if (std::any_of(method.begin(), method.end(), [](char c) { return ascii_upper(c) != c; })) {
    method_copy.assign(method);
    for (char& c : method_copy) c = ascii_upper(c);
    method = method_copy;
  }
  const signing::CanonicalPieces canonical = signing::canonical_pieces(*f.timestamp, method, f.path, f.body_sha256_hex);
  // Parsed once: the MAC checked is the one handed on.
  const auto given = signing::parse_signature(*f.signature);
  const signing::SignatureCheck signature =
      !given               ? signing::SignatureCheck::differs
      : key->hmac != nullptr ? signing::check_signature(*key->hmac, canonical, *given)
                             : signing::check_signature(HmacKey(key->secret), canonical, *given);
  if (signature == signing::SignatureCheck::mac_failed) {
    return fail(ErrorCode::internal_error, "The server could not compute the signature; retry later.");
  }
  if (signature != signing::SignatureCheck::matches) {
    return fail(ErrorCode::invalid_signature,
                "X-MR-Signature does not match; sign exactly the timestamp, method, path and body sent.");
  }
  Verdict passed{std::nullopt, {}};
  passed.signature = *given;
  // Within the window, so inside what Timestamp holds.
  passed.stale_at = Timestamp{ts->seconds} + ts->fraction + window;
  return passed;
}

}  // namespace mr::auth
