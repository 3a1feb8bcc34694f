// Standard Webhooks verification over any headers and body, as a receiver
// (and the integration tests) run it: never a crash; a signature the
// signer makes verifies, and stops verifying when the body, the id or the
// timestamp change; whatever verifies carries the signer's exact
// signature. The first 16 bytes also go through the SSRF address policy:
// an IPv4-mapped address is judged as its IPv4 address.
#include <cstring>
#include <string>
#include <vector>

#include <netinet/in.h>

#include "ledger/address_policy.hpp"
#include "modules/webhooks/standard_webhooks.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

namespace wh = mr::webhooks;
namespace ap = mr::ledger;

void addresses(std::string_view in) {
  unsigned char v6[16] = {};
  std::memcpy(v6, in.data(), std::min<std::size_t>(in.size(), 16));
  const ap::AddressClass six = ap::classify_ipv6(std::span<const unsigned char, 16>(v6, 16));
  const std::uint32_t v4 = (std::uint32_t{v6[12]} << 24) | (std::uint32_t{v6[13]} << 16) |
                           (std::uint32_t{v6[14]} << 8) | v6[15];
  unsigned char mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, v6[12], v6[13], v6[14], v6[15]};
  FUZZ_CHECK(ap::classify_ipv6(std::span<const unsigned char, 16>(mapped, 16)) == ap::classify_ipv4(v4));
  // Public IPv6 is global unicast (2000::/3), or an IPv4 address mapped or
  // behind the NAT64 well-known prefix.
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  static constexpr unsigned char kNat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (ap::is_public(six)) {
    FUZZ_CHECK((v6[0] & 0xe0) == 0x20 || std::memcmp(v6, kMapped, 12) == 0 || std::memcmp(v6, kNat64, 12) == 0);
  }
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  std::memcpy(&sa.sin6_addr, v6, 16);
  FUZZ_CHECK(ap::classify(reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) == six);
  FUZZ_CHECK(ap::classify(reinterpret_cast<const sockaddr*>(&sa), 8) == ap::AddressClass::unknown);
}

}  // namespace

// Input: key \n id \n timestamp \n signature header \n body.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in = mr::fuzz::bytes(data, size);
  addresses(in);
  const auto f = mr::fuzz::fields(in, 5);
  const std::vector<std::string> keys = {std::string(f[0])};
  const std::string_view id = f[1], ts = f[2], header = f[3], body = f[4];
  constexpr std::int64_t now = 1700000000;

  // Whatever came: a verdict, and a valid one only with the exact signature.
  const wh::Verdict v = wh::verify(keys, {id, ts, header, body}, now);
  if (v == wh::Verdict::valid) {
    const std::string expected = wh::sign(keys[0], id, std::stoll(std::string(ts)), body);
    FUZZ_CHECK(!expected.empty());
    FUZZ_CHECK((" " + std::string(header) + " ").find(" " + expected + " ") != std::string::npos);
  }

  // What the signer makes verifies, and nothing changed does.
  if (id.empty()) return 0;
  const std::string sig = wh::sign(keys[0], id, now, body);
  FUZZ_CHECK(sig.starts_with("v1,") && sig.size() == 3 + 44);
  FUZZ_CHECK(wh::verify(keys, {id, "1700000000", sig, body}, now) == wh::Verdict::valid);
  FUZZ_CHECK(wh::verify(keys, {id, "1700000000", std::string(header) + " " + sig, body}, now) == wh::Verdict::valid);
  FUZZ_CHECK(wh::verify(keys, {id, "1700000000", sig, std::string(body) + "x"}, now) == wh::Verdict::mismatch);
  FUZZ_CHECK(wh::verify(keys, {std::string(id) + "x", "1700000000", sig, body}, now) == wh::Verdict::mismatch);
  FUZZ_CHECK(wh::verify(keys, {id, "1700000001", sig, body}, now) == wh::Verdict::mismatch);
  FUZZ_CHECK(wh::verify(keys, {id, "1700000000", sig, body}, now + 301) == wh::Verdict::too_old);
  return 0;
}
