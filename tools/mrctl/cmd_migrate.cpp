// mrctl migrate [--to N]: applies the missing numbered migrations (up to
// version N) and then every SQL function's file (ledger/sql/functions/),
// all in one transaction under an advisory lock, so two operators cannot
// race and a failure leaves the database as it was. Each applied migration
// is recorded with the SHA-256 of its text; a database whose recorded
// checksum, name or set of migrations differs from this mrctl's is refused
// before anything is applied: a migration never changes once applied, so a
// difference means the database holds other tables than this mrctl would
// build on (unless it is an earlier text listed in SUPERSEDED).
#include <climits>
#include <set>
#include <utility>
#include <iostream>
#include <string_view>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ledger/sql/migrations.hpp"
#include "tools/mrctl/command.hpp"
#include "tools/mrctl/json_fields.hpp"
#include "tools/mrctl/pod_name.hpp"
#include "tools/mrctl/privileges.hpp"
#include "tools/mrctl/schema.hpp"

namespace mr::ctl {

std::string first_error_line(std::string s) {
  if (s.starts_with("ERROR:  ")) s.erase(0, 8);
  return s.substr(0, s.find('\n'));
}

namespace {

constexpr const char* kLock = "SELECT pg_advisory_xact_lock(727274)";

const Migration* embedded(int version) {
  for (const auto& m : migrations()) {
    if (m.version == version) return &m;
  }
  return nullptr;
}

bool same_text(const Migration& m, std::string_view recorded) { return ctl::same_text(m, recorded, earlier_texts()); }

Failure changed(const Migration& m, const std::string& recorded) {
  return Failure{"migration " + std::string(m.name) + " has changed since it was applied (recorded sha256 " +
                 recorded.substr(0, 12) + "..., this mrctl's " + std::string(m.sha256.substr(0, 12)) +
                 "...): applied migrations never change, a change is a new migration; nothing applied"};
}

// Checks every recorded migration against this mrctl's. Rows applied before
// checksums were recorded carry none: their tables are taken as this
// mrctl's text made them (only development databases predate checksums),
// their checksum is recorded, and the functions step replaces every
// function they left. Returns the versions applied and how many rows it
// adopted.
std::pair<std::set<int>, int> verify(Context& ctx, PGconn* conn, std::string_view label) {
  auto rows = ctx.exec(conn, "SELECT version, name, checksum FROM schema_migrations ORDER BY version");
  std::set<int> applied;
  std::string adopted;
  int count = 0;
  for (int i = 0; i < PQntuples(rows.get()); ++i) {
    const std::string version = pg::value(rows.get(), i, 0), name = pg::value(rows.get(), i, 1);
    const Migration* m = embedded(std::stoi(version));
    if (m == nullptr) {
      throw Failure{"migration " + version + " (" + name +
                    ") is applied but this mrctl does not have it: the database was migrated by another build; "
                    "nothing applied"};
    }
    if (m->name != name) {
      throw Failure{"migration " + version + " is applied as " + name + " but this mrctl's is " +
                    std::string(m->name) + ": the database was migrated by another build; nothing applied"};
    }
    applied.insert(m->version);
    if (PQgetisnull(rows.get(), i, 2)) {
      ctx.exec(conn, "UPDATE schema_migrations SET checksum = $2 WHERE version = $1 AND checksum IS NULL",
               {version, std::string(m->sha256)});
      adopted += (adopted.empty() ? "" : ", ") + std::string(m->name);
      count++;
    } else if (const std::string sum = pg::value(rows.get(), i, 2); !same_text(*m, sum)) {
      throw changed(*m, sum);
    }
  }
  if (count > 0) {
    std::cerr << "mrctl migrate: " << label << "adopted " << adopted
              << " (applied before checksums were recorded): their checksums are recorded and checked from now "
                 "on, and every function is replaced by its file\n";
  }
  return {applied, count};
}

}  // namespace

MigrateOutcome migrate_database(Context& ctx, PGconn* conn, int to, std::string_view label) {
  const auto all = migrations();
  MigrateOutcome out;
  ctx.in_transaction(conn, [&] {
    ctx.exec(conn, kLock);
    ctx.exec(conn, "CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, "
             "applied_at timestamptz NOT NULL DEFAULT now())");
    // Added after databases had been migrated without it: IF NOT EXISTS
    // gives those the column too. NULL only on rows applied before it.
    ctx.exec(conn, "ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text "
             "CHECK (checksum ~ '^[0-9a-f]{64}$')");
    auto [applied, adopted] = verify(ctx, conn, label);
    out.adopted = adopted;
    for (const auto& m : all) {
      if (m.version > to || applied.contains(m.version)) continue;
      // Several statements: the simple query protocol. A migration of
      // comments alone answers an empty query.
      pg::Result r(PQexec(conn, std::string(m.sql).c_str()));
      const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && status != PGRES_EMPTY_QUERY) {
        throw Failure{"migration " + std::string(m.name) + " failed: " +
                      first_error_line(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn))};
      }
      ctx.exec(conn, "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
               {std::to_string(m.version), std::string(m.name), std::string(m.sha256)});
      out.applied++;
    }
    // The functions are the newest schema's: a database stopped at an
    // older version (--to) gets none of them.
    if (to >= all.back().version) out.functions = apply_functions(ctx, conn);
    // What the migrations and functions made or replaced keeps the roles'
    // privileges, in the same transaction: no writer is ever callable
    // without them.
    keep_privileges(ctx, conn);
    auto v = ctx.exec(conn, "SELECT coalesce(max(version), 0) FROM schema_migrations");
    out.version = std::stoi(pg::value(v.get(), 0, 0));
  });
  return out;
}

SchemaCheck read_schema(Context& ctx, PGconn* conn) {
  std::vector<AppliedMigration> applied;
  if (pg::value(ctx.exec(conn, "SELECT to_regclass('schema_migrations') IS NOT NULL").get(), 0, 0) == "t") {
    // checksum came later: to_jsonb reads it whether or not the column exists.
    auto r = ctx.exec(conn, "SELECT version, name, to_jsonb(s) ->> 'checksum' FROM schema_migrations s ORDER BY version");
    for (int i = 0; i < PQntuples(r.get()); ++i) {
      AppliedMigration a{std::stoi(pg::value(r.get(), i, 0)), pg::value(r.get(), i, 1), std::nullopt};
      if (!PQgetisnull(r.get(), i, 2)) a.checksum = pg::value(r.get(), i, 2);
      applied.push_back(std::move(a));
    }
  }
  return check_schema(applied, migrations(), earlier_texts());
}

namespace {

void write_outcome(rapidjson::Writer<rapidjson::StringBuffer>& w, const MigrateOutcome& m) {
  write_ints(w, {{"applied", m.applied}, {"adopted", m.adopted}, {"version", m.version}, {"functions", m.functions}});
}

// The catalogue's database, then every pod of the directory (each in its
// own database, under its own lock), or with --pod one of them. A pod that
// fails is reported and the others still migrate; the exit status is 1.
int migrate(Context& ctx) {
  const auto all = migrations();
  int to = all.empty() ? 0 : all.back().version;
  if (ctx.has("to")) {
    to = static_cast<int>(ctx.integer("to", 1, INT_MAX));
    if (embedded(to) == nullptr) throw Failure{"--to " + std::to_string(to) + ": this mrctl has no such migration", 2};
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  int failed = 0;
  if (auto one = ctx.opt("pod")) {
    if (*one != kHomePod) {
      if (auto problem = pod_name_problem(*one)) throw Failure{"--pod: " + *problem, 2};
    }
    write_strings(w, {{"pod", *one}});
    write_outcome(w, migrate_database(ctx, ctx.pod_db(*one), to, *one == kHomePod ? "" : "pod " + *one + " "));
  } else {
    write_outcome(w, migrate_database(ctx, ctx.db(), to, ""));
    w.Key("pods");
    w.StartArray();
    // Read after the catalogue's migration: 018 may have just made it.
    for (const PodAddress& pod : ctx.directory()) {
      w.StartObject();
      write_strings(w, {{"pod", pod.name}});
      try {
        write_outcome(w, migrate_database(ctx, ctx.pod_db(pod.name), to, "pod " + pod.name + " "));
      } catch (const Failure& f) {
        std::cerr << "mrctl: pod " << pod.name << ": " << f.message << "\n";
        write_strings(w, {{"error", f.message}});
        failed++;
      }
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  std::cout << out.GetString() << "\n";
  return failed == 0 ? 0 : 1;
}

int master_key_create(Context& ctx) {
  std::string err;
  if (!create_master_key_file(ctx.required("out"), err)) throw Failure{err};
  return 0;
}

Register r1("migrate", "[--to N] [--pod NAME]",
            "apply the embedded schema migrations the catalogue's database and then every pod's lack, in order "
            "(--pod: one pod only, home for the catalogue's)",
            migrate);
Register r2("master-key create", "--out FILE", "write a new random master key to FILE (mode 0600; never overwrites)",
            master_key_create);

}  // namespace
}  // namespace mr::ctl
