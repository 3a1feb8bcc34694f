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

const Migration* embedded(int version) {
  for (const auto& m : migrations()) {
    if (m.version == version) return &m;
  }
  return nullptr;
}

// Runs `body` in a transaction under the migration lock.
template <typename F>
void locked(Context& ctx, F&& body) {
  ctx.in_transaction([&] {
    ctx.exec(kLock);
    body();
  });
}

// The recorded text is the file's, or an earlier one that a later
// migration restates whole (migrations/SUPERSEDED).
bool same_text(const Migration& m, std::string_view recorded) {
  if (recorded == m.sha256) return true;
  for (const auto& e : earlier_texts()) {
    if (e.version == m.version && e.sha256 == recorded) return true;
  }
  return false;
}

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
void check_functions(Context& ctx, const std::vector<const Migration*>& applied,
                     const std::vector<const Migration*>& adopting) {
  struct Definition {
    std::string_view body;
    const Migration* by;
  };
  std::map<std::string, Definition> last;
  for (const Migration* m : applied) {
    for (auto& f : created_functions(m->sql)) last[f.name] = {f.body, m};
  }
  auto r = ctx.exec("SELECT proname, prosrc FROM pg_proc WHERE pronamespace = current_schema()::regnamespace");
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
int verify(Context& ctx) {
  auto rows = ctx.exec("SELECT version, name, checksum FROM schema_migrations ORDER BY version");
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
  check_functions(ctx, applied, adopting);
  std::string names;
  for (const Migration* m : adopting) {
    ctx.exec("UPDATE schema_migrations SET checksum = $2 WHERE version = $1 AND checksum IS NULL",
             {std::to_string(m->version), std::string(m->sha256)});
    names += (names.empty() ? "" : ", ") + std::string(m->name);
  }
  std::cerr << "mrctl migrate: adopted " << names
            << " (applied before checksums were recorded; their functions match this mrctl's text): "
               "their checksums are recorded and checked from now on\n";
  return static_cast<int>(adopting.size());
}

int migrate(Context& ctx) {
  const auto all = migrations();
  int to = all.empty() ? 0 : all.back().version;
  if (ctx.has("to")) {
    to = static_cast<int>(ctx.integer("to", 1, INT_MAX));
    if (embedded(to) == nullptr) throw Failure{"--to " + std::to_string(to) + ": this mrctl has no such migration", 2};
  }
  int adopted = 0;
  // Under the lock too: two first migrates racing on CREATE TABLE IF NOT
  // EXISTS can both miss the table and one then fails on its type name.
  locked(ctx, [&] {
    ctx.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version int PRIMARY KEY, name text NOT NULL, "
             "applied_at timestamptz NOT NULL DEFAULT now())");
    // Added after databases had been migrated without it: IF NOT EXISTS
    // gives those the column too. NULL only on rows applied before it.
    ctx.exec("ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS checksum text "
             "CHECK (checksum ~ '^[0-9a-f]{64}$')");
    adopted = verify(ctx);
  });
  int applied = 0;
  for (const auto& m : all) {
    if (m.version > to) break;
    locked(ctx, [&] {
      auto done = ctx.exec("SELECT name, checksum FROM schema_migrations WHERE version = $1",
                           {std::to_string(m.version)});
      if (PQntuples(done.get()) > 0) {
        // Applied since verify() by another mrctl: it must have been ours.
        if (pg::value(done.get(), 0, 0) != m.name || !same_text(m, pg::value(done.get(), 0, 1))) {
          throw changed(m, pg::value(done.get(), 0, 1));
        }
        return;
      }
      // Several statements: the simple query protocol.
      pg::Result r(PQexec(ctx.db(), std::string(m.sql).c_str()));
      if (!r || (PQresultStatus(r.get()) != PGRES_COMMAND_OK && PQresultStatus(r.get()) != PGRES_TUPLES_OK)) {
        throw Failure{"migration " + std::string(m.name) + " failed: " +
                      first_line(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(ctx.db()))};
      }
      ctx.exec("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
               {std::to_string(m.version), std::string(m.name), std::string(m.sha256)});
      applied++;
    });
  }
  auto v = ctx.exec("SELECT coalesce(max(version), 0) FROM schema_migrations");
  std::cout << "{\"applied\":" << applied << ",\"adopted\":" << adopted << ",\"version\":" << pg::value(v.get(), 0, 0)
            << "}\n";
  return 0;
}

int master_key_create(Context& ctx) {
  std::string err;
  if (!create_master_key_file(ctx.required("out"), err)) throw Failure{err};
  return 0;
}

Register r1("migrate", "[--to N]", "apply the embedded schema migrations the database lacks, in order", migrate);
Register r2("master-key create", "--out FILE", "write a new random master key to FILE (mode 0600; never overwrites)",
            master_key_create);

}  // namespace
}  // namespace mr::ctl
