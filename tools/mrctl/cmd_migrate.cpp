// mrctl migrate [--to N]: applies the missing numbered migrations (up to
// version N), each in its own transaction, under an advisory lock so two
// operators cannot race. Each applied migration is recorded with the
// SHA-256 of its text; a database whose recorded checksum, name or set of
// migrations differs from this mrctl's is refused before anything is
// applied: a migration never changes once applied, so a difference means
// the database holds other SQL than the text this mrctl would build on
// (unless it is an earlier text a later migration restates whole).
#include <climits>
#include <iostream>
#include <map>
#include <string_view>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ledger/sql/migrations.hpp"
#include "tools/mrctl/command.hpp"
#include "tools/mrctl/pod_name.hpp"
#include "tools/mrctl/privileges.hpp"
#include "tools/mrctl/schema.hpp"

namespace mr::ctl {
namespace {

constexpr const char* kLock = "SELECT pg_advisory_xact_lock(727274)";

// The server's message without its trailing newline or CONTEXT lines.
std::string first_line(std::string s) {
  if (s.starts_with("ERROR:  ")) s.erase(0, 8);
  return s.substr(0, s.find('\n'));
}

const Migration* embedded(int version) {
  for (const auto& m : migrations()) {
    if (m.version == version) return &m;
  }
  return nullptr;
}

// Runs `body` in a transaction of `conn` under its migration lock.
template <typename F>
void locked(Context& ctx, PGconn* conn, F&& body) {
  ctx.in_transaction(conn, [&] {
    ctx.exec(conn, kLock);
    body();
  });
}

bool same_text(const Migration& m, std::string_view recorded) { return ctl::same_text(m, recorded, earlier_texts()); }

Failure changed(const Migration& m, const std::string& recorded) {
  return Failure{"migration " + std::string(m.name) + " has changed since it was applied (recorded sha256 " +
                 recorded.substr(0, 12) + "..., this mrctl's " + std::string(m.sha256.substr(0, 12)) +
                 "...): applied migrations never change, a change is a new migration; nothing applied"};
}

// Rows applied before checksums were recorded carry none. Their text cannot
// be compared any more, but what it left behind can: every function those
// migrations define (as last defined among the applied ones) must have, in
// the database, exactly the body this mrctl's text gives it. Then the
// current text is recorded and checked from now on (adopted once, with a
// notice). A database migrated from an earlier text of 002 or 003 (they were
// edited in place before checksums existed) keeps the old bodies and is
// refused here, naming the first function that differs, rather than
// certified. Only development databases predate checksums; see
// docs/operator-guide.md.
void check_functions(Context& ctx, PGconn* conn, const std::vector<const Migration*>& applied,
                     const std::vector<const Migration*>& adopting) {
  struct Definition {
    std::string_view body;
    const Migration* by;
  };
  std::map<std::string, Definition> last;
  for (const Migration* m : applied) {
    for (auto& f : created_functions(m->sql)) last[f.name] = {f.body, m};
  }
  auto r = ctx.exec(conn, "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = current_schema()::regnamespace");
  std::multimap<std::string, std::string> in_db;
  for (int i = 0; i < PQntuples(r.get()); ++i) in_db.emplace(pg::value(r.get(), i, 0), pg::value(r.get(), i, 1));
  for (const Migration* m : adopting) {
    for (const auto& [name, def] : last) {
      if (def.by != m) continue;
      bool same = false;
      for (auto [it, end] = in_db.equal_range(name); it != end && !same; ++it) same = it->second == def.body;
      if (!same) {
        throw Failure{"migration " + std::string(m->name) +
                      " was applied before checksums were recorded and function " + name +
                      (in_db.contains(name) ? " differs from its text" : " is missing") +
                      ": the database was migrated from another text of it; nothing applied"};
      }
    }
  }
}

// Checks every recorded migration against this mrctl's and adopts those
// recorded without a checksum. Returns how many were adopted.
int verify(Context& ctx, PGconn* conn, std::string_view label) {
  auto rows = ctx.exec(conn, "SELECT version, name, checksum FROM schema_migrations ORDER BY version");
  std::vector<const Migration*> applied, adopting;
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
    applied.push_back(m);
    if (PQgetisnull(rows.get(), i, 2)) {
      adopting.push_back(m);
    } else if (const std::string sum = pg::value(rows.get(), i, 2); !same_text(*m, sum)) {
      throw changed(*m, sum);
    }
  }
  if (adopting.empty()) return 0;
  check_functions(ctx, conn, applied, adopting);
  std::string names;
  for (const Migration* m : adopting) {
    ctx.exec(conn, "UPDATE schema_migrations SET checksum = $2 WHERE version = $1 AND checksum IS NULL",
             {std::to_string(m->version), std::string(m->sha256)});
    names += (names.empty() ? "" : ", ") + std::string(m->name);
  }
  std::cerr << "mrctl migrate: " << label << "adopted " << names
            << " (applied before checksums were recorded; their functions match this mrctl's text): "
               "their checksums are recorded and checked from now on\n";
  return static_cast<int>(adopting.size());
}

}  // namespace

MigrateOutcome migrate_database(Context& ctx, PGconn* conn, int to, std::string_view label) {
  const auto all = migrations();
  int adopted = 0;
  // Under the lock too: two first migrates racing on CREATE TABLE IF NOT
  // EXISTS can both miss the table and one then fails on its type name.
  locked(ctx, conn, [&] {
    ctx.exec(conn, "CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, "
             "applied_at timestamptz NOT NULL DEFAULT now())");
    // Added after databases had been migrated without it: IF NOT EXISTS
    // gives those the column too. NULL only on rows applied before it.
    ctx.exec(conn, "ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text "
             "CHECK (checksum ~ '^[0-9a-f]{64}$')");
    adopted = verify(ctx, conn, label);
  });
  int applied = 0;
  for (const auto& m : all) {
    if (m.version > to) break;
    locked(ctx, conn, [&] {
      auto done = ctx.exec(conn, "SELECT name, checksum FROM schema_migrations WHERE version = $1",
                           {std::to_string(m.version)});
      if (PQntuples(done.get()) > 0) {
        // Applied since verify() by another mrctl: it must have been ours.
        if (pg::value(done.get(), 0, 0) != m.name || !same_text(m, pg::value(done.get(), 0, 1))) {
          throw changed(m, pg::value(done.get(), 0, 1));
        }
        return;
      }
      // Several statements: the simple query protocol.
      pg::Result r(PQexec(conn, std::string(m.sql).c_str()));
      if (!r || (PQresultStatus(r.get()) != PGRES_COMMAND_OK && PQresultStatus(r.get()) != PGRES_TUPLES_OK)) {
        throw Failure{"migration " + std::string(m.name) + " failed: " +
                      first_line(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn))};
      }
      ctx.exec(conn, "INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
               {std::to_string(m.version), std::string(m.name), std::string(m.sha256)});
      applied++;
    });
  }
  // What the migrations made or replaced keeps the roles' privileges.
  apply_privileges(ctx, conn);
  auto v = ctx.exec(conn, "SELECT coalesce(max(version), 0) FROM schema_migrations");
  return {applied, adopted, std::stoi(pg::value(v.get(), 0, 0))};
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
  w.Key("applied");
  w.Int(m.applied);
  w.Key("adopted");
  w.Int(m.adopted);
  w.Key("version");
  w.Int(m.version);
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
    w.Key("pod");
    w.String(one->c_str());
    write_outcome(w, migrate_database(ctx, ctx.pod_db(*one), to, *one == kHomePod ? "" : "pod " + *one + " "));
  } else {
    write_outcome(w, migrate_database(ctx, ctx.db(), to, ""));
    w.Key("pods");
    w.StartArray();
    // Read after the catalogue's migration: 018 may have just made it.
    for (const PodAddress& pod : ctx.directory()) {
      w.StartObject();
      w.Key("pod");
      w.String(pod.name.c_str());
      try {
        write_outcome(w, migrate_database(ctx, ctx.pod_db(pod.name), to, "pod " + pod.name + " "));
      } catch (const Failure& f) {
        std::cerr << "mrctl: pod " << pod.name << ": " << f.message << "\n";
        w.Key("error");
        w.String(f.message.c_str());
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
