// Redis and Sentinel addresses: only IP literals reach hiredis (a name
// would be resolved blocking the worker), ports in range, master names a
// command can carry.
#include <criterion/criterion.h>

#include <string>
#include <string_view>

#include "lua-free-config/redis_address.hpp"

using mr::redis::Address;

Test(redis_address, ipv4_and_port_from_the_configuration) {
  const auto a = mr::redis::parse_ipv4_port("127.0.0.1:26379");
  cr_assert(a.has_value());
  cr_expect_eq(a->host, std::string("127.0.0.1"));
  cr_expect_eq(a->port, 26379);
  cr_expect(mr::redis::parse_ipv4_port("10.0.0.11:1").has_value());
  cr_expect(mr::redis::parse_ipv4_port("10.0.0.11:65535").has_value());
}

Test(redis_address, names_and_malformed_refused) {
  for (std::string_view bad : {"", ":6379", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                               "127.0.0.1:6379x", "127.0.0.1:-1", "127.0.0.1: 6379", "localhost:6379",
                               "redis.internal:6379", "127.0.0.256:6379", "::1:6379", "[::1]:6379",
                               "127.0.0.1:6379:1", "1.2.3:6379"}) {
    cr_expect(!mr::redis::parse_ipv4_port(bad).has_value(), "accepted '%.*s'", static_cast<int>(bad.size()),
              bad.data());
  }
}

Test(redis_address, a_sentinel_reply_may_name_ipv6) {
  cr_expect(mr::redis::address("::1", "6380") == (Address{"::1", 6380}));
  cr_expect(mr::redis::address("10.1.2.3", "6380") == (Address{"10.1.2.3", 6380}));
  cr_expect(!mr::redis::address("::1", "6380", false).has_value());
  // A Sentinel configured with resolve-hostnames reports names: refused,
  // never handed to hiredis.
  cr_expect(!mr::redis::address("redis-1.example", "6379").has_value());
  cr_expect(!mr::redis::address("10.1.2.3", "").has_value());
  cr_expect(!mr::redis::address("", "6379").has_value());
  cr_expect(!mr::redis::address(std::string(100, '1'), "6379").has_value());
}

Test(redis_address, master_names) {
  cr_expect(mr::redis::valid_master_name("mr"));
  cr_expect(mr::redis::valid_master_name("mymaster-1.a_b"));
  cr_expect(mr::redis::valid_master_name(std::string(255, 'm')));
  cr_expect(!mr::redis::valid_master_name(""));
  cr_expect(!mr::redis::valid_master_name(std::string(256, 'm')));
  cr_expect(!mr::redis::valid_master_name("my master"));
  cr_expect(!mr::redis::valid_master_name("m\r\n"));
  cr_expect(!mr::redis::valid_master_name("caf\xc3\xa9"));
}
