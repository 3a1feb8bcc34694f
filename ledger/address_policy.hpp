// Where a webhook may connect (contract section 10, URL): only to public
// addresses. The one rule for both places that judge it: the delivery
// engine, on the address a connection is about to use (libcurl's open-socket
// callback), so a name that resolves to a private address, at creation or
// later (DNS rebinding), is refused all the same; and the endpoint's URL
// check at creation, on an IP literal in the host, read as the resolver and
// libcurl read it, so that no URL is accepted whose literal every delivery
// would then refuse. A sandbox may allow every address
// (mr_webhook_insecure_targets). No nginx header.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <sys/socket.h>

namespace mr::ledger {

enum class AddressClass {
  global,         // public unicast: allowed
  unspecified,    // 0.0.0.0/8, ::
  loopback,       // 127.0.0.0/8, ::1
  private_use,    // 10/8, 172.16/12, 192.168/16, fc00::/7, fec0::/10
  shared,         // 100.64.0.0/10 (carrier-grade NAT)
  link_local,     // 169.254/16, fe80::/10
  multicast,      // 224/4, ff00::/8
  documentation,  // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20
  benchmarking,   // 198.18/15, 2001:2::/48
  reserved,       // 240/4, broadcast, 192.0.0/24, 6to4 and Teredo, NAT64 local use,
                  // discard-only, and IPv6 outside 2000::/3
  unknown,        // not IPv4 or IPv6 (a unix socket, a short sockaddr)
};

std::string_view class_name(AddressClass c);
inline bool is_public(AddressClass c) { return c == AddressClass::global; }

// The IPv4 address in host byte order (ntohl of in_addr's s_addr).
AddressClass classify_ipv4(std::uint32_t address_host_order);
// The 16 bytes of an in6_addr. ::ffff:a.b.c.d (mapped) and 64:ff9b::a.b.c.d
// (NAT64, well-known prefix) are judged by their IPv4 address.
AddressClass classify_ipv6(std::span<const unsigned char, 16> address);
AddressClass classify(const sockaddr* address, socklen_t length);

// What a URL's host (the authority less user information and port) names.
enum class HostKind {
  name,          // a DNS name: judged at connect time, on what it resolves to
  ip,            // an IP literal: `cls` is its class
  invalid_ipv6,  // [ ] around something that is not an IPv6 address
};
struct HostVerdict {
  HostKind kind = HostKind::name;
  AddressClass cls = AddressClass::unknown;
};
// `host` as the URL spells it, IPv6 in its brackets. IPv4 is every spelling
// inet_aton reads, as the resolver behind libcurl does: 1 to 4 parts, each
// decimal, octal (leading 0) or hex (0x), the last filling the remaining
// bytes ("127.1", "2130706433", "0x7f.0.0.1"), and one trailing dot (the
// fully qualified spelling of the same host). IPv6 is what inet_pton reads,
// with an RFC 6874 zone id ("%25eth0") dropped, as the address connected to
// carries none in its bytes. Only the syntax of a name is not checked here.
HostVerdict classify_host(std::string_view host);

}  // namespace mr::ledger
