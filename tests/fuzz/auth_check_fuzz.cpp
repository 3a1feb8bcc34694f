// auth::check_request, the edge's order of checks, over arbitrary header
// values: every refusal is one of the edge's codes, and a request refused
// only for its signature passes once signed with the key's secret.
#include <chrono>

#include "modules/auth/auth_core.hpp"
#include "signing/signature.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mr::auth;

namespace {

constexpr std::string_view kKeyId = "mrk_sbx_fuzz", kSecret = "fuzz-secret";

bool edge_code(mr::ErrorCode c) {
  return c == mr::ErrorCode::unauthorized || c == mr::ErrorCode::invalid_request ||
         c == mr::ErrorCode::stale_timestamp || c == mr::ErrorCode::invalid_signature;
}

}  // namespace

// Input: flags \n method \n path \n key id \n timestamp \n signature \n
// idempotency key \n content type \n body digest. Bit i of the flags' first
// byte drops header i (key id .. content type); bit 5 keys HMAC per call.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const mr::HmacKey hmac{kSecret};
  static const auto now = std::chrono::sys_days{std::chrono::year{2026} / 11 / 22} + std::chrono::hours{10};
  const auto f = mr::fuzz::fields(mr::fuzz::bytes(data, size), 9);
  const unsigned flags = f[0].empty() ? 0 : static_cast<unsigned char>(f[0][0]);
  const auto header = [&](unsigned i) -> std::optional<std::string_view> {
    if (flags & (1u << i)) return std::nullopt;
    return f[3 + i];
  };
  RequestFacts facts{f[1], f[2], header(0), header(1), header(2), header(3), header(4), f[8]};
  const KeyLookup lookup = [&](std::string_view id) -> std::optional<KeyView> {
    if (id != kKeyId) return std::nullopt;
    return KeyView{kSecret, 7, "club-a", (flags & 32u) ? nullptr : &hmac};
  };
  const Verdict v = check_request(facts, lookup, now);
  if (v.error) {
    FUZZ_CHECK(edge_code(*v.error) && !v.message.empty());
  }
  if (v.error == mr::ErrorCode::invalid_signature) {
    const std::string good = mr::signing::sign(kSecret, mr::signing::canonical_string(*facts.timestamp, facts.method, facts.path,
                                                            facts.body_sha256_hex));
    facts.signature = good;
    FUZZ_CHECK(!check_request(facts, lookup, now).error);
  }
  if (facts.timestamp) {
    if (const auto t = parse_timestamp(*facts.timestamp)) {
      const auto wire = mr::parse_rfc3339_utc(*facts.timestamp);
      FUZZ_CHECK(wire && Timestamp{wire->seconds} + wire->fraction == *t);
    }
  }
  return 0;
}
