// Which addresses a webhook may reach: public unicast only; every
// loopback, private, link-local, shared, multicast, documentation and
// reserved block refused, IPv4-mapped and NAT64 IPv6 judged as IPv4; and
// the endpoint's URL check at creation refuses every literal the
// connection would.
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>
#include <string>
#include <variant>

#include "ledger/address_policy.hpp"
#include "ledger/webhook_requests.hpp"

namespace {

namespace wh = mr::ledger;

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

// One rule at creation and at connect: each host below goes through the
// endpoint URL check (production) and, as the address the resolver makes
// of it, through the connect-time classification; both give one verdict.
namespace {

enum class Verdict { refused, allowed, by_dns };

struct HostCase {
  const char* host;  // as the URL spells it
  Verdict want;
};

constexpr HostCase kHosts[] = {
    // IPv6 forms that carry or stand for a non-public host.
    {"[::127.0.0.1]", Verdict::refused},      // IPv4-compatible
    {"[100::1]", Verdict::refused},           // discard-only
    {"[64:ff9b::7f00:1]", Verdict::refused},  // NAT64 of 127.0.0.1
    {"[2002:7f00:1::1]", Verdict::refused},   // 6to4 of 127.0.0.1
    {"[::ffff:127.0.0.1]", Verdict::refused},
    {"[::ffff:7f00:1]", Verdict::refused},
    {"[2001::1]", Verdict::refused},  // Teredo
    {"[fe80::1%25lo]", Verdict::refused},
    {"[fe80::1%251]", Verdict::refused},
    {"[::]", Verdict::refused},
    // IPv4 in every spelling inet_aton reads.
    {"0", Verdict::refused},
    {"0177.0.0.1", Verdict::refused},
    {"017700000001", Verdict::refused},
    {"0x7f.0.0.1", Verdict::refused},
    {"0X7F.1", Verdict::refused},
    {"127.000.000.001", Verdict::refused},
    {"127.0.1", Verdict::refused},
    {"127.0.0.1.", Verdict::refused},
    {"127.1", Verdict::refused},
    {"2130706433", Verdict::refused},
    {"0x7f000001", Verdict::refused},
    {"10.1", Verdict::refused},
    {"0xa9.0xfe.0xa9.0xfe", Verdict::refused},  // 169.254.169.254
    {"0300.0250.1.1", Verdict::refused},        // 192.168.1.1
    {"4294967295", Verdict::refused},           // 255.255.255.255
    // Public, however spelt.
    {"8.8.8.8", Verdict::allowed},
    {"8.8.8.8.", Verdict::allowed},
    {"134744072", Verdict::allowed},
    {"0x8.0x8.0x8.0x8", Verdict::allowed},
    {"010.010.010.010", Verdict::allowed},  // octal: 8.8.8.8, not 10/8
    {"[2606:4700::1]", Verdict::allowed},
    {"[2606:4700::1%251]", Verdict::allowed},
    {"[::ffff:8.8.8.8]", Verdict::allowed},
    {"[64:ff9b::808:808]", Verdict::allowed},
    // Names: not literals, judged on what they resolve to at each connect.
    {"hooks.example.com", Verdict::by_dns},
    {"1.2.3.4.5", Verdict::by_dns},
    {"0x7f.example", Verdict::by_dns},
    {"08.0.0.1", Verdict::by_dns},  // 08 is no octal number
    {"4294967296", Verdict::by_dns},
};

const char* verdict_name(Verdict v) {
  return v == Verdict::refused ? "refused" : v == Verdict::allowed ? "allowed" : "by DNS";
}

// What libcurl hands the resolver for the host: no brackets, the zone's
// "%25" as the "%" getaddrinfo reads, and no trailing dot (a fully
// qualified name is the same host). Then the sockaddr getaddrinfo makes of
// a literal (inet_aton's reading for IPv4), judged as a connection is.
Verdict at_connect(std::string_view host) {
  std::string text(host);
  if (text.starts_with('[')) {
    text = text.substr(1, text.size() - 2);
    if (const auto z = text.find("%25"); z != std::string::npos) text.erase(z + 1, 2);
  } else if (text.ends_with('.')) {
    text.pop_back();
  }
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(text.c_str(), "35051", &hints, &found) != 0) return Verdict::by_dns;
  const bool ok = wh::is_public(wh::classify(found->ai_addr, found->ai_addrlen));
  freeaddrinfo(found);
  return ok ? Verdict::allowed : Verdict::refused;
}

// The endpoint body as a partner sends it in production: refused means
// invalid_request whose details name url.
Verdict at_creation(std::string_view host) {
  const std::string url = "https://" + std::string(host) + ":35051/h";
  const std::string body = R"({"partnerRef":"club-a","url":")" + url + R"("})";
  const auto parsed = mr::ledger::parse_webhook_body(mr::ledger::WebhookOp::create, body, "production");
  if (const auto* e = std::get_if<mr::Error>(&parsed)) {
    cr_expect_eq(e->code, mr::ErrorCode::invalid_request, "%s", url.c_str());
    cr_expect(e->details.size() == 1 && e->details[0].field == "url", "%s: details name url", url.c_str());
    return Verdict::refused;
  }
  // A literal that passes is one the connection allows; a name, one DNS decides.
  return wh::classify_host(host).kind == wh::HostKind::ip ? Verdict::allowed : Verdict::by_dns;
}

}  // namespace

Test(address_policy, creation_and_connect_agree) {
  for (const HostCase& c : kHosts) {
    const Verdict connect = at_connect(c.host);
    const Verdict create = at_creation(c.host);
    cr_expect_eq(connect, c.want, "%s at connect: %s, want %s", c.host, verdict_name(connect), verdict_name(c.want));
    cr_expect_eq(create, connect, "%s at creation: %s, at connect: %s", c.host, verdict_name(create),
                 verdict_name(connect));
  }
}

Test(address_policy, sandbox_allows_every_literal) {
  for (const HostCase& c : kHosts) {
    const std::string url = "http://" + std::string(c.host) + ":35051/h";
    cr_expect(!mr::ledger::webhook_url_problem(url, true).has_value(), "%s: %s", url.c_str(),
              mr::ledger::webhook_url_problem(url, true).value_or("").c_str());
  }
}

Test(address_policy, host_literals) {
  using C = wh::AddressClass;
  const auto cls = [](const char* host) { return wh::classify_host(host); };
  cr_expect_eq(cls("127.1").cls, C::loopback);
  cr_expect_eq(cls("0").cls, C::unspecified);
  cr_expect_eq(cls("[64:ff9b::7f00:1]").cls, C::loopback);
  cr_expect_eq(cls("[::127.0.0.1]").cls, C::reserved);
  cr_expect_eq(cls("example.com").kind, wh::HostKind::name);
  cr_expect_eq(cls("").kind, wh::HostKind::name);
  cr_expect_eq(cls(".").kind, wh::HostKind::name);
  for (const char* bad : {"[", "[]", "[::1", "[nothex]", "[fe80::1%]", "[fe80::1%25]", "[fe80::1%eth0]",
                          "[fe80::1%25e/th0]", "[1.2.3.4]", "[::1]x"}) {
    cr_expect_eq(cls(bad).kind, wh::HostKind::invalid_ipv6, "%s", bad);
  }
  cr_expect(mr::ledger::webhook_url_problem("https://[fe80::1%eth0]/", false).has_value());
  cr_expect_eq(mr::ledger::webhook_url_problem("https://127.1/", false).value_or(""),
               std::string("must name a public address, and this one is loopback (loopback and private "
                           "addresses are allowed in sandbox only)"),
               "the message names the class, not the spelling");
}
