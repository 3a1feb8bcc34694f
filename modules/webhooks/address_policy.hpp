// Where a webhook may connect (contract section 10, URL): only to public
// addresses, judged on the address the connection is about to use (libcurl's
// open-socket callback), so a name that resolves to a private address, at
// creation or later (DNS rebinding), is refused all the same. A sandbox may
// allow every address (mr_webhook_insecure_targets). No nginx header.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include <sys/socket.h>

namespace mr::webhooks {

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

}  // namespace mr::webhooks
