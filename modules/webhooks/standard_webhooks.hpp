// Standard Webhooks v1 (contract section 10, Delivery): the signature every
// delivery carries, and the check a receiver makes. No nginx header: the
// delivery engine signs with it; the integration tests and the fuzzer
// verify with it.
//
//   webhook-signature: v1,<base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}"))>
//
// `key` is the signing key, the base64-decoded part of a "whsec_" secret
// (mr::webhook_signing_key in keys/webhook_secret.hpp); during a rotation a
// delivery is signed with both keys, the signatures separated by a space.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mr::webhooks {

// How far a receiver lets webhook-timestamp be from its clock, either way
// (the specification's reference libraries use five minutes).
inline constexpr std::int64_t kDefaultToleranceSeconds = 300;

// "v1," + base64 of the HMAC; "" when OpenSSL fails.
std::string sign(std::string_view key, std::string_view id, std::int64_t timestamp, std::string_view body);

// One signature per key, in the keys' order, separated by one space; ""
// when there is no key or OpenSSL fails for one.
std::string signature_header(std::span<const std::string> keys, std::string_view id, std::int64_t timestamp,
                             std::string_view body);

// What a receiver got: the three headers as sent, and the body.
struct Received {
  std::string_view id;
  std::string_view timestamp;
  std::string_view signature;
  std::string_view body;
};

enum class Verdict {
  valid,       // some v1 signature matches some key
  malformed,   // a header missing or empty, the timestamp not a Unix time in seconds
  too_old,     // timestamp further than the tolerance in the past
  too_new,     // ... or in the future
  mismatch,    // no v1 signature matches any key
};
std::string_view verdict_name(Verdict v);

// Checks the timestamp against `now` (Unix seconds) and every "v1,"
// signature of the space-separated list against every key, comparing in
// constant time (CRYPTO_memcmp). Signatures of other versions are skipped.
Verdict verify(std::span<const std::string> keys, const Received& message, std::int64_t now,
               std::int64_t tolerance_seconds = kDefaultToleranceSeconds);

}  // namespace mr::webhooks
