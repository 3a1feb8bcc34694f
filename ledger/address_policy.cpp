#include "ledger/address_policy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace mr::ledger {
namespace {

struct V4Block {
  std::uint32_t network;
  int prefix;
  AddressClass cls;
};

constexpr std::uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// IANA's IPv4 special-purpose registry, less what is globally reachable on
// purpose (none of those is a place to send webhooks to).
constexpr V4Block kV4Blocks[] = {
    {v4(0, 0, 0, 0), 8, AddressClass::unspecified},
    {v4(10, 0, 0, 0), 8, AddressClass::private_use},
    {v4(100, 64, 0, 0), 10, AddressClass::shared},
    {v4(127, 0, 0, 0), 8, AddressClass::loopback},
    {v4(169, 254, 0, 0), 16, AddressClass::link_local},
    {v4(172, 16, 0, 0), 12, AddressClass::private_use},
    {v4(192, 0, 0, 0), 24, AddressClass::reserved},
    {v4(192, 0, 2, 0), 24, AddressClass::documentation},
    {v4(192, 88, 99, 0), 24, AddressClass::reserved},  // 6to4 relay anycast
    {v4(192, 168, 0, 0), 16, AddressClass::private_use},
    {v4(198, 18, 0, 0), 15, AddressClass::benchmarking},
    {v4(198, 51, 100, 0), 24, AddressClass::documentation},
    {v4(203, 0, 113, 0), 24, AddressClass::documentation},
    {v4(224, 0, 0, 0), 4, AddressClass::multicast},
    {v4(240, 0, 0, 0), 4, AddressClass::reserved},  // 255.255.255.255 included
};

bool in_v4(std::uint32_t address, const V4Block& b) {
  const std::uint32_t mask = b.prefix == 0 ? 0 : ~std::uint32_t{0} << (32 - b.prefix);
  return (address & mask) == b.network;
}

// The first `bits` bits of `address` equal those of `prefix`.
bool in_v6(std::span<const unsigned char, 16> address, std::initializer_list<unsigned char> prefix, int bits) {
  const unsigned char* p = prefix.begin();
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const unsigned char want = i < static_cast<int>(prefix.size()) ? p[i] : 0;
    const unsigned mask = bits >= 8 ? 0xffu : (0xffu << (8 - bits)) & 0xffu;
    if ((address[static_cast<std::size_t>(i)] & mask) != (want & mask)) return false;
  }
  return true;
}

std::uint32_t last_four(std::span<const unsigned char, 16> a) { return v4(a[12], a[13], a[14], a[15]); }

}  // namespace

std::string_view class_name(AddressClass c) {
  switch (c) {
    case AddressClass::global:
      return "public";
    case AddressClass::unspecified:
      return "unspecified";
    case AddressClass::loopback:
      return "loopback";
    case AddressClass::private_use:
      return "private";
    case AddressClass::shared:
      return "shared (carrier-grade NAT)";
    case AddressClass::link_local:
      return "link-local";
    case AddressClass::multicast:
      return "multicast";
    case AddressClass::documentation:
      return "documentation";
    case AddressClass::benchmarking:
      return "benchmarking";
    case AddressClass::reserved:
      return "reserved";
    case AddressClass::unknown:
      break;
  }
  return "not an IP address";
}

AddressClass classify_ipv4(std::uint32_t address) {
  for (const V4Block& b : kV4Blocks) {
    if (in_v4(address, b)) return b.cls;
  }
  return AddressClass::global;
}

AddressClass classify_ipv6(std::span<const unsigned char, 16> a) {
  static constexpr unsigned char kZero[16] = {};
  if (std::memcmp(a.data(), kZero, 16) == 0) return AddressClass::unspecified;
  if (std::memcmp(a.data(), kZero, 15) == 0 && a[15] == 1) return AddressClass::loopback;
  // ::ffff:0:0/96 (IPv4-mapped) and 64:ff9b::/96 (NAT64 to that IPv4 address).
  if (in_v6(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96)) return classify_ipv4(last_four(a));
  if (in_v6(a, {0x00, 0x64, 0xff, 0x9b}, 96)) return classify_ipv4(last_four(a));
  if (in_v6(a, {0xff}, 8)) return AddressClass::multicast;
  if (in_v6(a, {0xfe, 0x80}, 10)) return AddressClass::link_local;
  if (in_v6(a, {0xfe, 0xc0}, 10)) return AddressClass::private_use;  // site-local, deprecated
  if (in_v6(a, {0xfc}, 7)) return AddressClass::private_use;         // unique local
  // Global unicast is 2000::/3 only; inside it, the special blocks.
  if (!in_v6(a, {0x20}, 3)) return AddressClass::reserved;
  if (in_v6(a, {0x20, 0x01, 0x0d, 0xb8}, 32)) return AddressClass::documentation;
  if (in_v6(a, {0x3f, 0xff}, 20)) return AddressClass::documentation;
  if (in_v6(a, {0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48)) return AddressClass::benchmarking;
  // 2001::/23: IETF protocol assignments, Teredo (2001::/32) included, whose
  // addresses lead to an IPv4 host behind a relay.
  if (in_v6(a, {0x20, 0x01, 0x00}, 23)) return AddressClass::reserved;
  if (in_v6(a, {0x20, 0x02}, 16)) return AddressClass::reserved;  // 6to4: an embedded IPv4 host
  return AddressClass::global;
}

AddressClass classify(const sockaddr* address, socklen_t length) {
  if (address == nullptr) return AddressClass::unknown;
  if (address->sa_family == AF_INET && length >= static_cast<socklen_t>(sizeof(sockaddr_in))) {
    sockaddr_in in{};
    std::memcpy(&in, address, sizeof(in));
    return classify_ipv4(ntohl(in.sin_addr.s_addr));
  }
  if (address->sa_family == AF_INET6 && length >= static_cast<socklen_t>(sizeof(sockaddr_in6))) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, address, sizeof(in6));
    return classify_ipv6(std::span<const unsigned char, 16>(in6.sin6_addr.s6_addr, 16));
  }
  return AddressClass::unknown;
}

HostVerdict classify_host(std::string_view host) {
  if (host.starts_with('[')) {
    if (host.size() < 2 || !host.ends_with(']')) return {HostKind::invalid_ipv6, AddressClass::unknown};
    std::string_view inside = host.substr(1, host.size() - 2);
    if (const auto percent = inside.find('%'); percent != std::string_view::npos) {
      // RFC 6874: "%25" then the zone, unreserved characters as libcurl
      // takes them. The zone picks an interface, not another address.
      const std::string_view zone = inside.substr(percent);
      const bool unreserved = std::all_of(zone.begin() + std::min<std::size_t>(zone.size(), 3), zone.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
               c == '_' || c == '~';
      });
      if (!zone.starts_with("%25") || zone.size() == 3 || !unreserved) {
        return {HostKind::invalid_ipv6, AddressClass::unknown};
      }
      inside = inside.substr(0, percent);
    }
    const std::string text(inside);
    in6_addr a6{};
    if (inet_pton(AF_INET6, text.c_str(), &a6) != 1) return {HostKind::invalid_ipv6, AddressClass::unknown};
    return {HostKind::ip, classify_ipv6(std::span<const unsigned char, 16>(a6.s6_addr, 16))};
  }
  std::string_view bare = host;
  if (bare.ends_with('.')) bare.remove_suffix(1);
  // inet_aton reads a number's digits, dots and 0x; it also stops at
  // whitespace and ignores what follows, which no host here may contain.
  const bool numeric_chars = !bare.empty() && std::all_of(bare.begin(), bare.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x' || c == 'X' ||
           c == '.';
  });
  if (!numeric_chars) return {};
  const std::string text(bare);
  in_addr a4{};
  if (inet_aton(text.c_str(), &a4) == 0) return {};
  return {HostKind::ip, classify_ipv4(ntohl(a4.s_addr))};
}

}  // namespace mr::ledger
