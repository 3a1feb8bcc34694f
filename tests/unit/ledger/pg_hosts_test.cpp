// Which server of a multi-host DSN a connect starts at (modules/ledger/pg_hosts).
#include <map>
#include <string>

#include <criterion/criterion.h>

#include "modules/ledger/pg_hosts.hpp"

namespace {
std::map<std::string, std::string> as_map(const mr::pg::ConnectParams& p) {
  std::map<std::string, std::string> m;
  for (std::size_t i = 0; i < p.keywords.size(); ++i) m[p.keywords[i]] = p.values[i];
  return m;
}
const char* kThree =
    "host=a,b,c hostaddr=10.0.0.1,10.0.0.2,10.0.0.3 port=1,2,3 target_session_attrs=read-write dbname=mr";
}  // namespace

Test(pg_hosts, first_host_rotates_every_list_together) {
  std::string err;
  for (int first : {0, 1, 2, 3, 4, -1}) {
    auto p = mr::pg::params_from_host(kThree, first, err);
    cr_assert(p.has_value(), "%s", err.c_str());
    cr_expect_eq(p->hosts, 3);
    auto m = as_map(*p);
    const int s = ((first % 3) + 3) % 3;
    const std::string hosts[] = {"a,b,c", "b,c,a", "c,a,b"};
    const std::string addrs[] = {"10.0.0.1,10.0.0.2,10.0.0.3", "10.0.0.2,10.0.0.3,10.0.0.1",
                                 "10.0.0.3,10.0.0.1,10.0.0.2"};
    const std::string ports[] = {"1,2,3", "2,3,1", "3,1,2"};
    cr_expect_eq(m["host"], hosts[s], "first %d: host %s", first, m["host"].c_str());
    cr_expect_eq(m["hostaddr"], addrs[s]);
    cr_expect_eq(m["port"], ports[s]);
    cr_expect_eq(m["target_session_attrs"], std::string("read-write"));
    cr_expect_eq(m["dbname"], std::string("mr"));
  }
}

Test(pg_hosts, one_port_for_all_hosts_and_single_host_stay) {
  std::string err;
  auto p = mr::pg::params_from_host("host=a,b hostaddr=10.0.0.1,10.0.0.2 port=5432", 1, err);
  cr_assert(p.has_value(), "%s", err.c_str());
  cr_expect_eq(p->hosts, 2);
  cr_expect_eq(as_map(*p)["host"], std::string("b,a"));
  cr_expect_eq(as_map(*p)["port"], std::string("5432"));
  auto one = mr::pg::params_from_host("host=127.0.0.1 hostaddr=127.0.0.1 port=5432 dbname=mr", 5, err);
  cr_assert(one.has_value(), "%s", err.c_str());
  cr_expect_eq(one->hosts, 1);
  cr_expect_eq(as_map(*one)["hostaddr"], std::string("127.0.0.1"));
  // The lists end with a null for PQconnectStartParams.
  cr_expect_eq(one->keyword_ptrs().back(), nullptr);
  cr_expect_eq(one->keyword_ptrs().size(), one->keywords.size() + 1);
  cr_expect_eq(one->value_ptrs().size(), one->values.size() + 1);
}

Test(pg_hosts, refuses_what_libpq_cannot_use) {
  std::string err;
  cr_expect(!mr::pg::params_from_host("host=a,b port=1,2,3", 0, err).has_value());
  cr_expect(!err.empty());
  err.clear();
  cr_expect(!mr::pg::params_from_host("host='unterminated", 0, err).has_value());
  cr_expect(!err.empty());
}
