// The nginx-free rules of the auth edge (contract section 2): the
// timestamp window, the headers and the order of checks. The signature
// itself is signing/signature.hpp's, which the partner's client signs with.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "ledger/errors.hpp"
#include "ledger/timestamps.hpp"
#include "signing/hmac_key.hpp"

namespace mr::auth {

using mr::Timestamp;
// RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS[.1-9 digits](Z|+00:00), upper-case T
// and Z only. nullopt also outside 1678-2261, which Timestamp cannot hold;
// check_request itself judges any year 0000-9999 (far off: stale_timestamp).
std::optional<Timestamp> parse_timestamp(std::string_view text);

bool idempotency_key_valid(std::string_view key);  // 1..255 visible ASCII
bool is_json_content_type(std::string_view value);

struct KeyView {
  std::string_view secret;
  std::int64_t club_id;
  std::string_view partner_ref;
  const HmacKey* hmac = nullptr;  // the secret keyed at load time; else keyed per call
};
using KeyLookup = std::function<std::optional<KeyView>(std::string_view key_id)>;

struct RequestFacts {
  std::string_view method;
  std::string_view path;  // as on the request line, without the query
  std::optional<std::string_view> key_id, timestamp, signature, idempotency_key, content_type;
  std::string_view body_sha256_hex;
};

struct Verdict {
  std::optional<ErrorCode> error;
  std::string message;
  // Passed: the MAC the signature header names (its bytes, whatever the
  // hex's case) and the moment its timestamp leaves the window. A POST's
  // signature serves one idempotency key until then (contract section 2).
  HmacDigest signature{};
  Timestamp stale_at{};
};

// First failure wins: key -> headers -> window -> signature.
Verdict check_request(const RequestFacts& facts, const KeyLookup& lookup,
                      std::chrono::system_clock::time_point now,
                      std::chrono::seconds window = std::chrono::seconds(300));

}  // namespace mr::auth
