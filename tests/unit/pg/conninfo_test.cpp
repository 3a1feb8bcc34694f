// Which DSNs would make libpq resolve a name (the ledger's workers must
// never block on getaddrinfo): host names without hostaddr.
#include <criterion/criterion.h>

#include "pg/blocking_pg.hpp"

using mr::pg::host_needing_resolution;

Test(conninfo, names_without_hostaddr_are_found) {
  auto p = host_needing_resolution("host=db.internal port=5432 dbname=mr");
  cr_assert(p.has_value());
  cr_expect_eq(*p, std::string("host \"db.internal\" is a name"));
  p = host_needing_resolution("host=10.0.0.1,localhost port=5432,5433");
  cr_assert(p.has_value());
  cr_expect_eq(*p, std::string("host \"localhost\" is a name"));
  p = host_needing_resolution("postgresql://pg.example:5432/mr");
  cr_assert(p.has_value());
  cr_expect_eq(*p, std::string("host \"pg.example\" is a name"));
  p = host_needing_resolution("host='unterminated");
  cr_assert(p.has_value());
  cr_expect(p->starts_with("it does not parse: "), "%s", p->c_str());
}

Test(conninfo, addresses_sockets_and_hostaddr_pass) {
  for (const char* dsn : {"host=127.0.0.1 port=5432", "host=::1", "host=10.0.0.1,10.0.0.2 port=1,2",
                          "host=/var/run/postgresql dbname=mr", "dbname=mr", "",
                          "host=db.internal hostaddr=10.0.0.1 sslmode=verify-full",
                          "host=a,b hostaddr=10.0.0.1,10.0.0.2 port=1,2 target_session_attrs=read-write",
                          "postgresql://127.0.0.1:5432/mr", "postgresql://%2Fvar%2Frun%2Fpostgresql/mr"}) {
    const auto p = host_needing_resolution(dsn);
    cr_expect(!p.has_value(), "%s: %s", dsn, p ? p->c_str() : "");
  }
}
