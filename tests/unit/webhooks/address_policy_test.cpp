// Which addresses a delivery may connect to: public unicast only; every
// loopback, private, link-local, shared, multicast, documentation and
// reserved block refused, IPv4-mapped and NAT64 IPv6 judged as IPv4.
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <string>

#include "modules/webhooks/address_policy.hpp"

namespace {

namespace wh = mr::webhooks;

wh::AddressClass of(const char* text) {
  sockaddr_storage ss{};
  if (std::strchr(text, ':') != nullptr) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    in6->sin6_family = AF_INET6;
    cr_assert_eq(inet_pton(AF_INET6, text, &in6->sin6_addr), 1, "%s", text);
    return wh::classify(reinterpret_cast<sockaddr*>(&ss), sizeof(sockaddr_in6));
  }
  auto* in = reinterpret_cast<sockaddr_in*>(&ss);
  in->sin_family = AF_INET;
  cr_assert_eq(inet_pton(AF_INET, text, &in->sin_addr), 1, "%s", text);
  return wh::classify(reinterpret_cast<sockaddr*>(&ss), sizeof(sockaddr_in));
}

void expect(const char* text, wh::AddressClass want) {
  const wh::AddressClass got = of(text);
  cr_expect_eq(got, want, "%s: %s, want %s", text, std::string(wh::class_name(got)).c_str(),
               std::string(wh::class_name(want)).c_str());
}

}  // namespace

Test(address_policy, public_ipv4) {
  for (const char* a : {"1.1.1.1", "8.8.8.8", "93.184.216.34", "9.255.255.255", "11.0.0.0", "100.63.255.255",
                        "100.128.0.0", "126.255.255.255", "128.0.0.0", "169.253.255.255", "172.15.255.255",
                        "172.32.0.0", "192.167.255.255", "192.169.0.0", "198.17.255.255", "198.20.0.0",
                        "223.255.255.255"}) {
    expect(a, wh::AddressClass::global);
  }
}

Test(address_policy, refused_ipv4) {
  using C = wh::AddressClass;
  expect("0.0.0.0", C::unspecified);
  expect("0.1.2.3", C::unspecified);
  expect("127.0.0.1", C::loopback);
  expect("127.255.255.254", C::loopback);
  expect("10.0.0.1", C::private_use);
  expect("10.255.255.255", C::private_use);
  expect("172.16.0.1", C::private_use);
  expect("172.31.255.255", C::private_use);
  expect("192.168.1.1", C::private_use);
  expect("100.64.0.1", C::shared);
  expect("100.127.255.255", C::shared);
  expect("169.254.169.254", C::link_local);  // cloud metadata
  expect("224.0.0.1", C::multicast);
  expect("239.255.255.255", C::multicast);
  expect("240.0.0.1", C::reserved);
  expect("255.255.255.255", C::reserved);
  expect("192.0.0.8", C::reserved);
  expect("192.88.99.1", C::reserved);
  expect("192.0.2.1", C::documentation);
  expect("198.51.100.7", C::documentation);
  expect("203.0.113.200", C::documentation);
  expect("198.18.0.1", C::benchmarking);
  expect("198.19.255.255", C::benchmarking);
}

Test(address_policy, ipv6) {
  using C = wh::AddressClass;
  expect("2606:4700:4700::1111", C::global);
  expect("2a00:1450:4001:82b::200e", C::global);
  expect("::", C::unspecified);
  expect("::1", C::loopback);
  expect("fc00::1", C::private_use);
  expect("fd12:3456:789a::1", C::private_use);
  expect("fec0::1", C::private_use);
  expect("fe80::1", C::link_local);
  expect("febf:ffff::1", C::link_local);
  expect("ff02::1", C::multicast);
  expect("ff0e::1", C::multicast);
  expect("2001:db8::1", C::documentation);
  expect("3fff::1", C::documentation);
  expect("2001:2::1", C::benchmarking);
  expect("2001::1", C::reserved);    // Teredo
  expect("2002:c000:0204::1", C::reserved);  // 6to4
  expect("100::1", C::reserved);     // discard-only
  expect("64:ff9b:1::1", C::reserved);  // NAT64 local use
  expect("::2", C::reserved);        // IPv4-compatible, deprecated
  expect("4000::1", C::reserved);    // outside 2000::/3
  expect("::ffff:0:1.2.3.4", C::reserved);  // IPv4-translated
}

Test(address_policy, embedded_ipv4_judged_as_ipv4) {
  using C = wh::AddressClass;
  expect("::ffff:127.0.0.1", C::loopback);
  expect("::ffff:10.1.2.3", C::private_use);
  expect("::ffff:169.254.169.254", C::link_local);
  expect("::ffff:8.8.8.8", C::global);
  expect("64:ff9b::127.0.0.1", C::loopback);
  expect("64:ff9b::192.168.0.1", C::private_use);
  expect("64:ff9b::8.8.8.8", C::global);
}

Test(address_policy, not_ip) {
  sockaddr_in short_one{};
  short_one.sin_family = AF_INET;
  cr_expect_eq(wh::classify(reinterpret_cast<sockaddr*>(&short_one), 4), wh::AddressClass::unknown);
  sockaddr unix_one{};
  unix_one.sa_family = AF_UNIX;
  cr_expect_eq(wh::classify(&unix_one, sizeof(unix_one)), wh::AddressClass::unknown);
  cr_expect_eq(wh::classify(nullptr, 0), wh::AddressClass::unknown);
  cr_expect(!wh::is_public(wh::AddressClass::unknown));
  cr_expect(wh::is_public(wh::AddressClass::global));
}
