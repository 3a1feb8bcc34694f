// A PostgreSQL session of the test's own that holds members' rows locked,
// so that settles for them wait inside PostgreSQL for as long as the test
// wants: how the batch and database tests make a queue, or a batch in
// flight, certain instead of likely.
#pragma once

#include <criterion/criterion.h>
#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/integration/stack_env.hpp"

namespace mr::test {

struct PgFree {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using Pg = std::unique_ptr<PGconn, PgFree>;

inline Pg connect_db() {
  Pg c(PQconnectdb(env("MR_DSN").c_str()));
  cr_assert(c && PQstatus(c.get()) == CONNECTION_OK, "cannot connect: %s", PQerrorMessage(c.get()));
  return c;
}

// The first value of the first row ("" for none); asserts success.
inline std::string one(PGconn* c, const std::string& sql) {
  std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(c, sql.c_str()), PQclear);
  const auto st = PQresultStatus(r.get());
  cr_assert(st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK, "%s: %s", sql.c_str(), PQerrorMessage(c));
  return st == PGRES_TUPLES_OK && PQntuples(r.get()) > 0 ? PQgetvalue(r.get(), 0, 0) : "";
}

// The largest number of idempotency records keyed `key_prefix`... that one
// transaction wrote (they share its created_at): how the batch tests see
// that writes went to PostgreSQL together.
inline int largest_batch(PGconn* pg, const std::string& key_prefix) {
  return std::stoi(one(pg, "SELECT coalesce(max(n), 0) FROM (SELECT count(*) n FROM idempotency_records "
                           "WHERE idem_key LIKE '" + key_prefix + "%' GROUP BY created_at) g"));
}

// Holds the rows of `members` (by external id) locked until release(), or
// until the session ends (destroyed, or PostgreSQL gone).
class Gate {
 public:
  explicit Gate(const std::vector<std::string>& members) : pg_(connect_db()) {
    std::string list;
    for (const auto& m : members) list += (list.empty() ? "'" : ",'") + m + "'";
    one(pg_.get(), "BEGIN");
    one(pg_.get(), "SELECT 1 FROM members WHERE external_id IN (" + list + ") FOR UPDATE");
  }
  void release() { one(pg_.get(), "COMMIT"); }
  // The gate's server process: what sessions waiting on its locks wait for.
  int pid() const { return PQbackendPID(pg_.get()); }

 private:
  Pg pg_;
};

}  // namespace mr::test
