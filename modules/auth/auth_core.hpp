// The nginx-free rules of the auth edge (contract section 2): canonical
// string, HMAC-SHA256 signature, RFC 3339 timestamps and the order of
// checks. The module, mr-sign and the tests all use this one copy.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "keys/hmac_key.hpp"
#include "ledger/errors.hpp"
#include "ledger/timestamps.hpp"
#include "modules/common/digest.hpp"

namespace mr::auth {

using mr::sha256_hex;

// timestamp \n METHOD \n path \n body_sha256_hex
std::string canonical_string(std::string_view timestamp, std::string_view method,
                             std::string_view path, std::string_view body_sha256_hex);

// "v1=" + lower-case hex HMAC-SHA256 keyed with the secret's bytes. Throws
// std::runtime_error when OpenSSL fails: never an empty or wrong signature.
std::string sign(const HmacKey& key, std::string_view canonical);
std::string sign(std::string_view secret, std::string_view canonical);
// The MAC a header names: "v1=" + 64 hex digits, either case; else nullopt.
std::optional<HmacDigest> parse_signature(std::string_view header);
// mac_failed: OpenSSL could not compute the MAC, which is the server's
// fault (internal_error), not the client's (invalid_signature).
enum class SignatureCheck { matches, differs, mac_failed };
SignatureCheck check_signature(const HmacKey& key, std::string_view canonical, std::string_view header);
// The same over the canonical string's pieces, never joined (the edge's path).
SignatureCheck check_signature(const HmacKey& key, std::span<const std::string_view> canonical,
                               std::string_view header);

using mr::Timestamp;
// RFC 3339 in UTC: YYYY-MM-DDTHH:MM:SS[.1-9 digits](Z|+00:00), upper-case T
// and Z only. nullopt also outside 1678-2261, which Timestamp cannot hold;
// check_request itself judges any year 0000-9999 (far off: stale_timestamp).
std::optional<Timestamp> parse_timestamp(std::string_view text);
std::string format_timestamp(std::chrono::system_clock::time_point t);  // ...T..:..:..Z

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
};

// First failure wins: key -> headers -> window -> signature.
Verdict check_request(const RequestFacts& facts, const KeyLookup& lookup,
                      std::chrono::system_clock::time_point now,
                      std::chrono::seconds window = std::chrono::seconds(300));

}  // namespace mr::auth
