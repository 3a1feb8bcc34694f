// The SQL functions' step of mrctl migrate: every file of
// ledger/sql/functions/ made current in the caller's transaction, once the
// numbered migrations are applied. A function whose recorded checksum and
// body match its file is left alone, so a migrate that changes nothing
// redefines nothing (running sessions keep their plans).
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "ledger/sql/functions.hpp"
#include "ledger/sql/migrations.hpp"
#include "tools/mrctl/schema.hpp"

namespace mr::ctl {
namespace {

// The body PostgreSQL keeps (pg_proc.prosrc) for the file's function.
std::string_view body_of(const SqlFunction& f) {
  for (const auto& c : created_functions(f.sql)) {
    if (c.name == f.name) return c.body;
  }
  throw Failure{"ledger/sql/functions/" + std::string(f.name) + ".sql defines no function " + std::string(f.name)};
}

bool is(const pg::Result& r, const char* sqlstate) {
  const char* s = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
  return s != nullptr && std::string_view(s) == sqlstate;
}

// The oids of every function named `name` in the schema.
std::set<std::string> oids_of(Context& ctx, PGconn* conn, std::string_view name) {
  auto r = ctx.exec(conn, "SELECT oid FROM pg_proc WHERE proname = $1 AND pronamespace = current_schema()::regnamespace",
                    {std::string(name)});
  std::set<std::string> out;
  for (int i = 0; i < PQntuples(r.get()); ++i) out.insert(pg::value(r.get(), i, 0));
  return out;
}

void drop(Context& ctx, PGconn* conn, const std::string& oid, bool cascade) {
  auto sig = ctx.exec(conn, "SELECT $1::oid::regprocedure::text", {oid});
  ctx.exec(conn, "DROP FUNCTION " + pg::value(sig.get(), 0, 0) + (cascade ? " CASCADE" : ""));
}

bool ran(const pg::Result& r) {
  const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  // A file of comments and statements ends with the last statement's result.
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

// Runs the file. A function whose result type or parameter names changed
// cannot be replaced in place (42P13): it is dropped first, with its
// trigger (a trigger function's file makes its trigger again). Another
// signature of the same name is an earlier text's: it goes.
void create(Context& ctx, PGconn* conn, const SqlFunction& f) {
  const std::set<std::string> before = oids_of(ctx, conn, f.name);
  ctx.exec(conn, "SAVEPOINT mr_function");
  pg::Result r(PQexec(conn, std::string(f.sql).c_str()));
  if (!ran(r)) {
    if (!is(r, "42P13")) {
      throw Failure{"function " + std::string(f.name) + " failed: " +
                    first_error_line(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn))};
    }
    ctx.exec(conn, "ROLLBACK TO SAVEPOINT mr_function");
    for (const auto& oid : before) drop(ctx, conn, oid, true);
    pg::Result again(PQexec(conn, std::string(f.sql).c_str()));
    if (!ran(again)) {
      throw Failure{"function " + std::string(f.name) + " failed: " +
                    first_error_line(again ? PQresultErrorMessage(again.get()) : PQerrorMessage(conn))};
    }
  }
  ctx.exec(conn, "RELEASE SAVEPOINT mr_function");
  const std::set<std::string> after = oids_of(ctx, conn, f.name);
  const bool made_new = std::any_of(after.begin(), after.end(), [&](const auto& o) { return !before.contains(o); });
  for (const auto& oid : after) {
    const bool stale = made_new ? before.contains(oid)
                                : pg::value(ctx.exec(conn, "SELECT prosrc FROM pg_proc WHERE oid = $1", {oid}).get(), 0,
                                            0) != body_of(f);
    if (stale) drop(ctx, conn, oid, false);
  }
}

}  // namespace

int apply_functions(Context& ctx, PGconn* conn) {
  ctx.exec(conn, "CREATE TABLE IF NOT EXISTS schema_functions (name text PRIMARY KEY, checksum text NOT NULL "
                 "CHECK (checksum ~ '^[0-9a-f]{64}$'), applied_at timestamptz NOT NULL DEFAULT now())");
  std::map<std::string, std::string, std::less<>> recorded;
  auto rows = ctx.exec(conn, "SELECT name, checksum FROM schema_functions");
  for (int i = 0; i < PQntuples(rows.get()); ++i) recorded[pg::value(rows.get(), i, 0)] = pg::value(rows.get(), i, 1);
  std::multimap<std::string, std::string, std::less<>> bodies;  // name -> prosrc, every overload
  auto procs = ctx.exec(conn, "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = current_schema()::regnamespace");
  for (int i = 0; i < PQntuples(procs.get()); ++i) bodies.emplace(pg::value(procs.get(), i, 0), pg::value(procs.get(), i, 1));

  const auto all = sql_functions();
  int replaced = 0;
  for (const SqlFunction* f : in_dependency_order(all)) {
    const auto [first, last] = bodies.equal_range(f->name);
    const bool one_and_same = std::distance(first, last) == 1 && first->second == body_of(*f);
    const auto rec = recorded.find(f->name);
    if (one_and_same && rec != recorded.end() && rec->second == f->sha256) continue;
    create(ctx, conn, *f);
    ctx.exec(conn,
             "INSERT INTO schema_functions (name, checksum) VALUES ($1, $2) "
             "ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()",
             {std::string(f->name), std::string(f->sha256)});
    replaced++;
  }
  // A function of ours that no file defines any more was dropped from the
  // code: it goes from the database too (RESTRICT: anything that still
  // depends on it makes migrate fail and say so).
  std::set<std::string_view> files;
  for (const auto& f : all) files.insert(f.name);
  auto ours = ctx.exec(conn,
                       "SELECT p.oid::regprocedure::text, p.proname FROM pg_proc p WHERE p.pronamespace = "
                       "current_schema()::regnamespace AND p.proname LIKE 'mr\\_%' AND NOT EXISTS (SELECT 1 FROM "
                       "pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')");
  for (int i = 0; i < PQntuples(ours.get()); ++i) {
    if (files.contains(pg::value(ours.get(), i, 1))) continue;
    ctx.exec(conn, "DROP FUNCTION " + pg::value(ours.get(), i, 0));  // regprocedure's text: quoted as needed
    ctx.exec(conn, "DELETE FROM schema_functions WHERE name = $1", {pg::value(ours.get(), i, 1)});
    replaced++;
  }
  return replaced;
}

}  // namespace mr::ctl
