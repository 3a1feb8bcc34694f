// Redis and Sentinel addresses as the configuration names them and as a
// Sentinel reports a master: IP literals only, since hiredis's connect
// would resolve a name blocking the worker. No nginx header: unit-tested
// on its own (tests/unit/common/redis_address_test.cpp).
#pragma once

#include <arpa/inet.h>

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace mr::redis {

struct Address {
  std::string host;  // an IPv4 or IPv6 literal
  int port = 0;
  bool operator==(const Address&) const = default;
};

// 1..65535 in decimal, nothing else.
inline std::optional<int> parse_port(std::string_view s) {
  int port = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || port < 1 || port > 65535) {
    return std::nullopt;
  }
  return port;
}

// An IP literal (IPv4 dotted quad, or IPv6 when `allow_ipv6`) and a port.
inline std::optional<Address> address(std::string_view ip, std::string_view port, bool allow_ipv6 = true) {
  if (ip.empty() || ip.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  const std::string host(ip);
  unsigned char buf[sizeof(struct in6_addr)];
  const bool v4 = inet_pton(AF_INET, host.c_str(), buf) == 1;
  const bool v6 = !v4 && allow_ipv6 && inet_pton(AF_INET6, host.c_str(), buf) == 1;
  const auto p = parse_port(port);
  if ((!v4 && !v6) || !p) return std::nullopt;
  return Address{host, *p};
}

// "ipv4:port", as mr_redis and mr_redis_sentinel take them.
inline std::optional<Address> parse_ipv4_port(std::string_view s) {
  const auto colon = s.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return address(s.substr(0, colon), s.substr(colon + 1), false);
}

// A Sentinel master name: what `sentinel monitor` accepts and a command
// argument can carry unquoted (printable ASCII, no space), 1 to 255 bytes.
inline bool valid_master_name(std::string_view name) {
  if (name.empty() || name.size() > 255) return false;
  for (const char ch : name) {
    if (ch <= ' ' || ch > '~') return false;
  }
  return true;
}

}  // namespace mr::redis
