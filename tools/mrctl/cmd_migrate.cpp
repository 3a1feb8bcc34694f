// mrctl migrate: applies the missing numbered migrations, each in its own
// transaction, under an advisory lock so two operators cannot race.
#include <iostream>

#include "ledger/sql/migrations.hpp"
#include "tools/mrctl/command.hpp"

namespace mr::ctl {
namespace {

constexpr const char* kLock = "SELECT pg_advisory_xact_lock(727274)";

// The server's message without its trailing newline or CONTEXT lines.
std::string first_line(std::string s) {
  if (s.starts_with("ERROR:  ")) s.erase(0, 8);
  return s.substr(0, s.find('\n'));
}

int migrate(Context& ctx) {
  // Under the lock too: two first migrates racing on CREATE TABLE IF NOT
  // EXISTS can both miss the table and one then fails on its type name.
  ctx.in_transaction([&] {
    ctx.exec(kLock);
    ctx.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, "
             "applied_at timestamptz NOT NULL DEFAULT now())");
  });
  int applied = 0;
  for (const auto& m : migrations()) {
    ctx.in_transaction([&] {
      ctx.exec(kLock);
      auto done = ctx.exec("SELECT 1 FROM schema_migrations WHERE version = $1", {std::to_string(m.version)});
      if (PQntuples(done.get()) == 0) {
        // Several statements: the simple query protocol.
        pg::Result r(PQexec(ctx.db(), std::string(m.sql).c_str()));
        if (!r || (PQresultStatus(r.get()) != PGRES_COMMAND_OK && PQresultStatus(r.get()) != PGRES_TUPLES_OK)) {
          throw Failure{"migration " + std::string(m.name) + " failed: " +
                        first_line(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(ctx.db()))};
        }
        ctx.exec("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                 {std::to_string(m.version), std::string(m.name)});
        applied++;
      }
    });
  }
  auto v = ctx.exec("SELECT coalesce(max(version), 0) FROM schema_migrations");
  std::cout << "{\"applied\":" << applied << ",\"version\":" << pg::value(v.get(), 0, 0) << "}\n";
  return 0;
}

int master_key_create(Context& ctx) {
  std::string err;
  if (!create_master_key_file(ctx.required("out"), err)) throw Failure{err};
  return 0;
}

Register r1("migrate", "", migrate);
Register r2("master-key create", "--out FILE", master_key_create);

}  // namespace
}  // namespace mr::ctl
