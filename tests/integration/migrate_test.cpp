// mrctl migrate against the integration fixture's PostgreSQL, each test in a
// database of its own: a database with books as the schema was before every
// function moved to ledger/sql/functions/ (tests/integration/fixtures),
// upgraded: its books and answers unchanged, its functions those of a new
// database and of the files; refusing a database whose recorded migrations
// differ from the embedded ones (nothing applied); adopting rows recorded
// before checksums; migrating twice changing nothing. Also the embedded set
// itself: checksums are SHA-256 of the embedded text, and every function
// comes after the functions it calls.
#include <criterion/criterion.h>

#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ledger/sql/functions.hpp"
#include "ledger/sql/migrations.hpp"
#include "tests/integration/scratch_db.hpp"

namespace {

using mr::test::json_of;
using mr::test::MasterKey;
using mr::test::Run;

// A scratch database, not migrated. mrctl runs without the master key
// (migrate, audit and the books need none); Run::err is its standard error.
class Db : public mr::test::ScratchDb {
 public:
  Db() : ScratchDb("mr_mig") {}
  Run mrctl(const std::vector<std::string>& args) const { return mr::test::run(mrctl_line(args, MasterKey::without)); }
};

struct Migrated {
  int applied, adopted, version;
};

Migrated migrate(Db& db, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"migrate"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto d = json_of(db.mrctl(args));
  return {d["applied"].GetInt(), d["adopted"].GetInt(), d["version"].GetInt()};
}

int newest() { return mr::migrations().back().version; }
// How many migrations come after `version` (an upgrade applies them all).
int after(int version) {
  const auto& all = mr::migrations();
  return static_cast<int>(std::count_if(all.begin(), all.end(), [&](const auto& m) { return m.version > version; }));
}

const mr::Migration& migration(int version) {
  for (const auto& m : mr::migrations()) {
    if (m.version == version) return m;
  }
  cr_assert_fail("no migration %d", version);
  std::abort();
}

// Refused: exit 1, one line on stderr with `words`, nothing on stdout.
void expect_refused(const Run& r, const std::string& words) {
  cr_expect_eq(r.code, 1, "exit %d: %s%s", r.code, r.out.c_str(), r.err.c_str());
  cr_expect(r.err.starts_with("mrctl: ") && r.err.find(words) != std::string::npos, "\"%s\" not in: %s",
            words.c_str(), r.err.c_str());
  cr_expect_eq(std::count(r.err.begin(), r.err.end(), '\n'), 1, "one line: %s", r.err.c_str());
  cr_expect(r.out.empty(), "%s", r.out.c_str());
}

// Everything mrctl migrate may touch, to show that a refusal touched nothing.
std::string schema_state(Db& db) {
  return db.sql(
      "SELECT string_agg(x, E'\\n' ORDER BY x) FROM ("
      "  SELECT format('%s %s %s %s', version, name, applied_at, "
      "         (SELECT to_jsonb(s) ->> 'checksum')) AS x FROM schema_migrations s"
      "  UNION ALL SELECT format('column %s', column_name) FROM information_schema.columns"
      "   WHERE table_name = 'schema_migrations'"
      "  UNION ALL SELECT format('%s %s', proname, md5(prosrc)) FROM pg_proc"
      "   WHERE pronamespace = current_schema()::regnamespace) a");
}

// One write through the ledger's own entry point.
std::string write(Db& db, const std::string& op, const std::string& club_id, const std::string& ref,
                  const std::string& key, const std::string& cmd_json) {
  // The fingerprint is the command's: the same key with another command conflicts.
  return db.sql("SELECT mr_write('" + op + "', " + club_id + ", '" + ref + "', '" + key + "', md5('" + cmd_json +
                "'), 'req-" + key + "', '" + cmd_json + "'::jsonb)");
}

std::string outcome(const std::string& result) {
  auto d = mr::parse_json(result);
  cr_assert(!d.HasParseError() && d.IsObject() && d.HasMember("outcome"), "%s", result.c_str());
  return d["outcome"].GetString();
}

std::string settle_cmd(const std::string& ref, const std::string& member, const std::string& tx, int amount) {
  return R"({"partnerRef":")" + ref + R"(","eventId":"e-)" + tx +
         R"(","occurredAt":"2026-11-20T10:00:00Z","externalMemberId":")" + member +
         R"(","externalTransactionId":")" + tx + R"(","merchantId":"m","merchantName":"M","amountMinor":)" +
         std::to_string(amount) + R"(,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"})";
}

// A database as the fixture's file holds it: the schema of 025 as its
// migrations' texts defined it, with books (make_books_025.sh).
void restore_books_025(Db& db) {
  const Run r = mr::test::run("zcat " + mr::test::shell_quote(MR_FIXTURES_DIR "/books_025.sql.gz") + " | psql -q -X " +
                                  "-v ON_ERROR_STOP=1 " + mr::test::shell_quote(db.dsn()) + " >/dev/null",
                              mr::test::Stderr::into_out);
  cr_assert_eq(r.code, 0, "restore: %s", r.out.c_str());
}

// Every function of the schema: name, definition and privileges.
std::map<std::string, std::string> definitions(Db& db) {
  std::map<std::string, std::string> out;
  const std::string all = db.sql(
      "SELECT string_agg(p.oid::regprocedure::text || E'\\x1f' || pg_get_functiondef(p.oid) || E'\\x1f' || "
      "coalesce(p.proacl::text, '-'), E'\\x1e' ORDER BY p.oid::regprocedure::text) FROM pg_proc p "
      "WHERE p.pronamespace = current_schema()::regnamespace");
  std::size_t at = 0;
  while (at < all.size()) {
    std::size_t end = all.find('\x1e', at);
    if (end == std::string::npos) end = all.size();
    const std::string row = all.substr(at, end - at);
    const auto cut = row.find('\x1f');
    out[row.substr(0, cut)] = row.substr(cut + 1);
    at = end + 1;
  }
  return out;
}

// The file's CREATE OR REPLACE FUNCTION statement as pg_get_functiondef
// prints it (the schema left out): from its first word to the closing quote.
std::string statement_in(const mr::SqlFunction& f) {
  const std::string sql(f.sql);
  const auto start = sql.find("CREATE OR REPLACE FUNCTION ");
  const auto as = sql.find("\nAS $function$", start);
  if (start == std::string::npos || as == std::string::npos) return "";
  const auto close = sql.find("$function$", as + 14);
  return close == std::string::npos ? "" : sql.substr(start, close + 10 - start);
}

}  // namespace

Test(embedding, checksums_are_the_sha256_of_the_embedded_text) {
  int previous = 0;
  for (const auto& m : mr::migrations()) {
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(m.sql.data()), m.sql.size(), digest);
    char hex[2 * SHA256_DIGEST_LENGTH + 1];
    for (int i = 0; i < SHA256_DIGEST_LENGTH; ++i) std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    cr_expect_eq(m.sha256, std::string_view(hex), "%.*s", static_cast<int>(m.name.size()), m.name.data());
    cr_expect_gt(m.version, previous, "ascending versions");
    previous = m.version;
  }
}

Test(embedding, the_scanner_finds_functions_and_their_bodies) {
  const auto f = mr::created_functions(
      "-- CREATE FUNCTION in_a_comment() AS $$ no $$\n"
      "/* CREATE FUNCTION /* nested */ still_a_comment() */\n"
      "SELECT 'CREATE FUNCTION in_a_string() $$', E'it\\'s', 'it''s';\n"
      "CREATE FUNCTION One(a int) RETURNS int LANGUAGE sql AS $$ SELECT a $$;\n"
      "create or replace function public.two() returns void language plpgsql as $body$\n"
      "BEGIN PERFORM 'x$$y'; END $body$;\n"
      "CREATE TRIGGER t AFTER INSERT ON x FOR EACH ROW EXECUTE FUNCTION one();\n"
      "DO $$ BEGIN EXECUTE 'CREATE FUNCTION dynamic() ...'; END $$;\n"
      "CREATE FUNCTION three() RETURNS int LANGUAGE sql AS 'SELECT 3'; SELECT $$ not a body $$;\n");
  cr_assert_eq(f.size(), 2u);
  cr_expect_eq(f[0].name, "one");
  cr_expect_eq(f[0].body, " SELECT a ");
  cr_expect_eq(f[1].name, "two");
  cr_expect_eq(f[1].body, "\nBEGIN PERFORM 'x$$y'; END ");
}

Test(embedding, calls_are_names_called_outside_comments) {
  const mr::SqlFunction fs[] = {
      {"mr_a", "-- mr_b(1) in a comment\nCREATE OR REPLACE FUNCTION mr_a()\nAS $function$ SELECT mr_b (1), "
               "x.mr_c(2), mr_cc(3), $mr_c$ /* mr_c(4) */ $function$;\n", ""},
      {"mr_b", "CREATE OR REPLACE FUNCTION mr_b(int) AS $function$ SELECT mr_a() $function$;", ""},
      {"mr_c", "CREATE OR REPLACE FUNCTION mr_c(int) AS $function$ SELECT 1 $function$;", ""},
  };
  const auto calls = mr::calls_of(fs[0], fs);
  cr_assert_eq(calls.size(), 1u);
  cr_expect_eq(calls[0], "mr_b");
  // A cycle (mr_a and mr_b call each other) is ordered by name; mr_c first.
  const auto order = mr::in_dependency_order(fs);
  cr_assert_eq(order.size(), 3u);
  cr_expect_eq(order[0]->name, "mr_c");
  cr_expect_eq(order[1]->name, "mr_a");
}

// Each file defines the function it is named after, in the form the server
// prints it, and no numbered migration defines one. In the order migrate
// applies them, a LANGUAGE sql function (PostgreSQL checks its body at
// CREATE) comes after every function it calls.
Test(embedding, every_function_file_defines_its_function_after_what_it_calls) {
  const auto all = mr::sql_functions();
  cr_assert_gt(all.size(), 90u);
  for (const auto& f : all) {
    const auto made = mr::created_functions(f.sql);
    cr_expect_eq(made.size(), 1u, "%.*s defines %zu functions", static_cast<int>(f.name.size()), f.name.data(),
                 made.size());
    if (!made.empty()) cr_expect_eq(made[0].name, std::string(f.name));
    cr_expect(!statement_in(f).empty(), "%.*s: no CREATE OR REPLACE FUNCTION ... AS $function$...$function$",
              static_cast<int>(f.name.size()), f.name.data());
  }
  for (const auto& m : mr::migrations()) {
    cr_expect(mr::created_functions(m.sql).empty(), "migration %.*s defines a function: it belongs in "
              "ledger/sql/functions/", static_cast<int>(m.name.size()), m.name.data());
  }
  std::map<std::string_view, std::size_t> position;
  const auto order = mr::in_dependency_order(all);
  for (std::size_t i = 0; i < order.size(); ++i) position[order[i]->name] = i;
  int checked = 0;
  for (const auto* f : order) {
    if (std::string(f->sql).find("\n LANGUAGE sql\n") == std::string::npos) continue;
    for (const auto callee : mr::calls_of(*f, all)) {
      checked++;
      cr_expect_lt(position[callee], position[f->name], "%.*s calls %.*s, created after it",
                   static_cast<int>(f->name.size()), f->name.data(), static_cast<int>(callee.size()), callee.data());
    }
  }
  cr_expect_gt(checked, 20, "calls were found: %d", checked);
}

// The upgrade a deployed database takes: books written by the schema as it
// was before every function moved to its file (clubs, pool, members,
// awards, reversals, adjustments, a debt, redemptions paid, failed and
// pending, a closed member, events and deliveries), then this mrctl's
// migrate. The books and every read's answer stay as they were, a replay
// answers from the record written before, and the functions end exactly as
// a new database's and as their files say.
Test(migrate, todays_books_upgrade_to_the_functions_of_the_files) {
  Db db;
  restore_books_025(db);
  cr_assert_eq(db.sql("SELECT max(version) FROM schema_migrations"), "25");
  const std::string books_sql =
      "SELECT string_agg(format('%s %s %s %s %s %s %s', club_id, external_id, available, reserved, lifetime_earned, "
      "lifetime_redeemed, status), ',' ORDER BY club_id, external_id) FROM members";
  const std::string clubs_sql =
      "SELECT string_agg(format('%s %s %s %s', funded_points, burned_points, cash_capacity_minor, "
      "mr_pool_total(club_id)), ',' ORDER BY club_id) FROM clubs";
  // Every read the API makes of a member, as the module gets it.
  const std::string reads_sql =
      "SELECT string_agg(format('%s|%s|%s|%s', m.external_id, "
      "(SELECT array_agg(b::text) FROM mr_balance_row(m.club_id, m.external_id) b), "
      "(SELECT array_agg(p::text) FROM mr_points_rows(m.club_id, m.external_id, 50, NULL) p), "
      "(SELECT array_agg(t::text) FROM mr_transactions_rows(m.club_id, m.external_id, 50, NULL) t)), "
      "E'\\n' ORDER BY m.club_id, m.external_id) FROM members m";
  const std::string books = db.sql(books_sql), clubs = db.sql(clubs_sql), reads = db.sql(reads_sql);
  const std::string entries = db.sql("SELECT count(*) FROM ledger_entries");
  const std::string events = db.sql("SELECT count(*) FROM events");
  const std::string a = db.sql("SELECT club_id FROM clubs WHERE partner_ref = 'club-a'");
  const std::string first = db.sql("SELECT result FROM idempotency_records WHERE idem_key = 'k-s1' AND club_id = " + a);

  Migrated m = migrate(db);
  cr_expect_eq(m.applied, after(25));
  cr_expect_eq(m.adopted, 0);
  cr_expect_eq(m.version, newest());

  auto audit = json_of(db.mrctl({"audit"}));
  cr_expect(audit["ok"].GetBool());
  cr_expect_eq(audit["differences"].GetInt(), 0);
  cr_expect_eq(db.sql(books_sql), books, "balances unchanged");
  cr_expect_eq(db.sql(clubs_sql), clubs, "pools and capacity unchanged");
  cr_expect_eq(db.sql(reads_sql), reads, "every read answers as before");
  cr_expect_eq(db.sql("SELECT count(*) FROM ledger_entries"), entries, "no entry written by the migration");
  cr_expect_eq(db.sql("SELECT count(*) FROM events"), events, "no event written by the migration");

  // Writes go on: a replay answers from the record written before, a new
  // award and a close work, the books still audit.
  // The same key and fingerprint (a retry): the record's answer.
  const std::string replay = db.sql("SELECT mr_write('settle', club_id, 'club-a', idem_key, fingerprint, 'req-retry', "
                                    "'{}'::jsonb)::text FROM idempotency_records WHERE idem_key = 'k-s1' AND club_id = " +
                                    a);
  cr_expect_eq(replay, db.sql("SELECT ('" + first + "'::jsonb || '{\"replayed\": true}')::text"));
  cr_expect_eq(outcome(write(db, "settle", a, "club-a", "k-s1", settle_cmd("club-a", "ann", "tx-9", 500))),
               "duplicate_idempotency_conflict");
  cr_expect_eq(outcome(write(db, "settle", a, "club-a", "k-s9", settle_cmd("club-a", "bob", "tx-9", 100))), "ok");
  cr_expect_eq(outcome(write(db, "close", a, "club-a", "k-c9", R"({"partnerRef":"club-a","externalMemberId":"cat"})")),
               "ok");
  cr_expect_eq(json_of(db.mrctl({"audit"}))["ok"].GetBool(), true, "consistent after new writes");

  // The same functions as a new database's, privileges included, and as
  // their files.
  Db fresh;
  migrate(fresh);
  const auto upgraded = definitions(db), made = definitions(fresh);
  cr_expect_eq(upgraded.size(), made.size(), "%zu functions upgraded, %zu in a new database", upgraded.size(),
               made.size());
  for (const auto& [sig, def] : made) {
    auto u = upgraded.find(sig);
    cr_expect(u != upgraded.end(), "%s is missing from the upgraded database", sig.c_str());
    if (u != upgraded.end()) cr_expect_eq(u->second, def, "%s differs after the upgrade", sig.c_str());
  }
  std::set<std::string> names;
  for (const auto& [sig, def] : made) names.insert(sig.substr(0, sig.find('(')));
  cr_expect_eq(names.size(), mr::sql_functions().size(), "one function a file");
  for (const auto& f : mr::sql_functions()) {
    const std::string name(f.name);
    cr_expect(names.contains(name), "%s's file made no function", name.c_str());
    std::string def = fresh.sql("SELECT pg_get_functiondef(oid) FROM pg_proc WHERE proname = '" + name +
                                "' AND pronamespace = current_schema()::regnamespace");
    const std::string schema = "FUNCTION " + fresh.sql("SELECT current_schema()") + ".";
    if (def.starts_with("CREATE OR REPLACE " + schema)) def.replace(18, schema.size(), "FUNCTION ");
    while (!def.empty() && def.back() == '\n') def.pop_back();
    cr_expect_eq(def, statement_in(f), "%s differs from its file; the server prints it as:\n%s", name.c_str(),
                 def.c_str());
  }
}

// docs/operator-guide.md, "Migration 005 on large books": the indexes built
// beforehand without blocking writes, then the migration finds them and
// does not build them again.
Test(migrate, indexes_built_concurrently_before_005_are_kept) {
  Db db;
  cr_assert_eq(migrate(db, {"--to", "4"}).version, 4);
  db.sql("CREATE INDEX CONCURRENTLY IF NOT EXISTS ledger_entries_member_type "
         "ON ledger_entries (member_id, entry_type, created_ms DESC)");
  db.sql("CREATE INDEX CONCURRENTLY IF NOT EXISTS reversals_tx ON reversals (tx_id)");
  const std::string before = db.sql(
      "SELECT string_agg(format('%s %s', c.relname, c.oid), ',' ORDER BY c.relname) FROM pg_class c "
      "WHERE c.relname IN ('ledger_entries_member_type', 'reversals_tx')");
  Migrated m = migrate(db, {"--to", "5"});
  cr_expect_eq(m.applied, 1);
  cr_expect_eq(db.sql("SELECT string_agg(format('%s %s', c.relname, c.oid), ',' ORDER BY c.relname) FROM pg_class c "
                      "WHERE c.relname IN ('ledger_entries_member_type', 'reversals_tx')"),
               before, "the same two indexes, not rebuilt");
  cr_expect_eq(db.sql("SELECT count(*) FROM pg_index WHERE indexrelid IN "
                      "('ledger_entries_member_type'::regclass, 'reversals_tx'::regclass) AND indisvalid"),
               "2");
  cr_expect_eq(db.sql("SELECT count(*) FROM pg_class WHERE relname = 'ledger_entries_member'"), "0",
               "the duplicate of UNIQUE (member_id, created_ms) is gone");
}

Test(migrate, to_stops_at_a_version_and_never_goes_back) {
  Db db;
  Migrated m = migrate(db, {"--to", "2"});
  cr_expect_eq(m.applied, 2);
  cr_expect_eq(m.version, 2);
  cr_expect_eq(db.sql("SELECT to_regclass('redemptions') IS NULL"), "t", "003 not applied");
  cr_expect_eq(db.sql("SELECT count(*) FROM pg_proc WHERE pronamespace = current_schema()::regnamespace"), "0",
               "the functions are the newest schema's: none below it");
  m = migrate(db, {"--to", "3"});
  cr_expect_eq(m.applied, 1);
  cr_expect_eq(m.version, 3);
  m = migrate(db, {"--to", "1"});
  cr_expect_eq(m.applied, 0);
  cr_expect_eq(m.version, 3, "no downgrade");
  const Run bad = db.mrctl({"migrate", "--to", std::to_string(newest() + 1)});
  cr_expect_eq(bad.code, 2, "%s", bad.err.c_str());
  cr_expect(bad.err.find("no such migration") != std::string::npos, "%s", bad.err.c_str());
  cr_expect_eq(db.mrctl({"migrate", "--to", "0"}).code, 2);
  cr_expect_eq(db.sql("SELECT max(version) FROM schema_migrations"), "3");
}

Test(migrate, a_changed_checksum_is_refused_and_nothing_is_applied) {
  Db db;
  migrate(db, {"--to", "3"});
  db.sql("UPDATE schema_migrations SET checksum = repeat('0', 64) WHERE version = 2");
  const std::string before = schema_state(db);
  const Run r = db.mrctl({"migrate"});
  expect_refused(r, "migration 002_ledger has changed since it was applied (recorded sha256 000000000000..., "
                    "this mrctl's " + std::string(migration(2).sha256.substr(0, 12)) + "...)");
  cr_expect_eq(schema_state(db), before, "nothing applied, nothing recorded");
  cr_expect_eq(db.sql("SELECT count(*) FROM pg_proc WHERE proname = 'mr_write'"), "0", "no function was made");
  // Refused again, not adopted or repaired on a second try.
  expect_refused(db.mrctl({"migrate", "--to", "3"}), "002_ledger has changed");
}

// A database may have recorded an earlier text of a migration
// (migrations/SUPERSEDED): every text before the functions moved to their
// files, and 012 as it landed at dbf6656. It migrates on as that
// migration. The same checksum recorded for another migration, or any other
// text, is still refused.
Test(migrate, an_earlier_text_in_superseded_is_accepted) {
  std::vector<std::string> earlier;
  for (const auto& e : mr::earlier_texts()) {
    if (e.version == 12) earlier.emplace_back(e.sha256);
  }
  cr_assert_eq(earlier.size(), 2u, "012's two earlier texts are embedded");
  for (const auto& text : earlier) {
    cr_assert_neq(text, std::string(migration(12).sha256));
    Db db;
    migrate(db, {"--to", "12"});
    db.sql("UPDATE schema_migrations SET checksum = '" + text + "' WHERE version = 12");
    const Migrated m = migrate(db);
    cr_expect_eq(m.version, newest());
    cr_expect_eq(m.applied, after(12));
    cr_expect_eq(db.sql("SELECT checksum FROM schema_migrations WHERE version = 12"), text, "kept as applied");
    cr_expect_eq(db.sql("SELECT proparallel FROM pg_proc WHERE proname = 'mr_pool_stripe'"), "r");
    cr_expect_eq(migrate(db).applied, 0, "and again on the next run");
  }
  {
    Db db;
    migrate(db, {"--to", "12"});
    db.sql("UPDATE schema_migrations SET checksum = repeat('1', 64) WHERE version = 12");
    expect_refused(db.mrctl({"migrate"}), "migration 012_connection_stripes has changed");
    db.sql("UPDATE schema_migrations SET checksum = '" + std::string(migration(12).sha256) + "' WHERE version = 12");
    db.sql("UPDATE schema_migrations SET checksum = '" + earlier[0] + "' WHERE version = 11");
    expect_refused(db.mrctl({"migrate"}), "migration 011_plan_cached_helpers has changed");
  }
}

Test(migrate, a_database_from_another_build_is_refused) {
  {
    Db db;
    migrate(db, {"--to", "3"});
    db.sql("UPDATE schema_migrations SET name = '003_something_else' WHERE version = 3");
    const std::string before = schema_state(db);
    expect_refused(db.mrctl({"migrate"}), "migration 3 is applied as 003_something_else but this mrctl's is 003_redemptions");
    cr_expect_eq(schema_state(db), before);
  }
  {
    // A migration this mrctl does not have: a newer build migrated it, or
    // one that was removed (004_ledger_audit was, before checksums).
    Db db;
    migrate(db, {"--to", "3"});
    db.sql("INSERT INTO schema_migrations (version, name) VALUES (" + std::to_string(newest() + 1) + ", '999_future')");
    const std::string before = schema_state(db);
    expect_refused(db.mrctl({"migrate"}), "(999_future) is applied but this mrctl does not have it");
    cr_expect_eq(schema_state(db), before);
  }
}

// A database migrated before checksums existed: schema_migrations without
// the column, as the older mrctl made it. Its rows are adopted once; its
// functions, whatever text made them, are replaced by their files.
Test(migrate, rows_from_before_checksums_are_adopted_once) {
  Db db;
  migrate(db, {"--to", "3"});
  db.sql("ALTER TABLE schema_migrations DROP COLUMN checksum");
  const Run r = db.mrctl({"migrate"});
  cr_assert_eq(r.code, 0, "%s", r.err.c_str());
  cr_expect(r.err.starts_with("mrctl migrate: adopted 001_clubs_and_keys, 002_ledger, 003_redemptions (applied "
                              "before checksums were recorded"),
            "%s", r.err.c_str());
  cr_expect_eq(std::count(r.err.begin(), r.err.end(), '\n'), 1, "one notice line: %s", r.err.c_str());
  auto d = json_of(r);
  cr_expect_eq(d["adopted"].GetInt(), 3);
  cr_expect_eq(d["applied"].GetInt(), after(3));
  cr_expect_eq(d["version"].GetInt(), newest());
  for (const auto& m : mr::migrations()) {
    cr_expect_eq(db.sql("SELECT checksum FROM schema_migrations WHERE version = " + std::to_string(m.version)),
                 std::string(m.sha256));
  }
  const Run again = db.mrctl({"migrate"});
  cr_expect_eq(again.err, "", "adopted once: no notice the second time");
  cr_expect_eq(json_of(again)["adopted"].GetInt(), 0);
}

// A function that differs from its file (changed by hand, or left by
// another text) is replaced by the file's on the next migrate; one that no
// file defines any more is dropped; one that is missing is made. Nothing
// else is redefined.
Test(migrate, functions_that_differ_from_their_files_are_replaced) {
  Db db;
  migrate(db);
  db.sql("CREATE OR REPLACE FUNCTION mr_award_points(p_amount bigint, p_rate_bp integer) RETURNS bigint "
         "LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT round(p_amount * p_rate_bp / 10000.0)::bigint $$");
  db.sql("DROP FUNCTION mr_payouts(text, int)");
  db.sql("CREATE FUNCTION mr_gone(int) RETURNS int LANGUAGE sql AS $$ SELECT 1 $$");
  db.sql("CREATE FUNCTION mr_fail(int) RETURNS int LANGUAGE sql AS $$ SELECT 1 $$");  // another signature
  const std::string kept = db.sql("SELECT xmin FROM pg_proc WHERE proname = 'mr_write'");
  const Run r = db.mrctl({"migrate"});
  cr_assert_eq(r.code, 0, "%s", r.err.c_str());
  cr_expect_eq(json_of(r)["functions"].GetInt(), 4, "%s", r.out.c_str());
  cr_expect_eq(db.sql("SELECT mr_award_points(15, 5000)"), "7", "floor, as the file says, not round");
  cr_expect_eq(db.sql("SELECT count(*) FROM pg_proc WHERE proname = 'mr_payouts'"), "1");
  cr_expect_eq(db.sql("SELECT count(*) FROM pg_proc WHERE proname = 'mr_gone'"), "0");
  cr_expect_eq(db.sql("SELECT string_agg(oid::regprocedure::text, ',') FROM pg_proc WHERE proname = 'mr_fail'"),
               "mr_fail(text,text,text)");
  cr_expect_eq(db.sql("SELECT xmin FROM pg_proc WHERE proname = 'mr_write'"), kept, "mr_write was not redefined");
}

// A function whose result type changed cannot be replaced in place: it is
// dropped and made again, with its trigger, in the same transaction.
Test(migrate, a_function_whose_result_changed_is_made_again_with_its_trigger) {
  Db db;
  migrate(db);
  db.sql("DROP FUNCTION mr_award_points(bigint, integer)");
  db.sql("CREATE FUNCTION mr_award_points(p_amount bigint, p_rate_bp integer) RETURNS numeric "
         "LANGUAGE sql AS $$ SELECT 0::numeric $$");
  db.sql("DROP FUNCTION mr_entries_append_only() CASCADE");
  db.sql("CREATE FUNCTION mr_entries_append_only() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$");
  const Run r = db.mrctl({"migrate"});
  cr_assert_eq(r.code, 0, "%s", r.err.c_str());
  cr_expect_eq(db.sql("SELECT pg_get_function_result('mr_award_points'::regproc)"), "bigint");
  cr_expect_eq(db.sql("SELECT count(*) FROM pg_trigger WHERE tgname = 'ledger_entries_append_only'"), "1",
               "the trigger is back");
}

Test(migrate, twice_is_a_no_op) {
  Db db;
  Migrated m = migrate(db);
  cr_expect_eq(m.applied, static_cast<int>(mr::migrations().size()));
  cr_expect_eq(m.version, newest());
  const std::string before = schema_state(db);
  const std::string xmins = db.sql("SELECT string_agg(proname || ' ' || xmin, ',' ORDER BY proname) FROM pg_proc "
                                   "WHERE pronamespace = current_schema()::regnamespace");
  const Run r = db.mrctl({"migrate"});
  cr_expect_eq(r.err, "");
  auto d = json_of(r);
  cr_expect_eq(d["applied"].GetInt(), 0);
  cr_expect_eq(d["adopted"].GetInt(), 0);
  cr_expect_eq(d["version"].GetInt(), newest());
  cr_expect_eq(d["functions"].GetInt(), 0);
  cr_expect_eq(schema_state(db), before);
  cr_expect_eq(db.sql("SELECT string_agg(proname || ' ' || xmin, ',' ORDER BY proname) FROM pg_proc "
                      "WHERE pronamespace = current_schema()::regnamespace"),
               xmins, "no function was redefined");
}

// The helpers every answer goes through are inlined by the planner: a SQL
// function that is not gets its body parsed and planned again at every
// execution of the statement calling it (they are STABLE). A label
// stricter than the body (IMMUTABLE over to_char or jsonb_build_object,
// which are STABLE) silently stops the inlining.
Test(migrate, the_answer_helpers_are_inlined) {
  Db db;
  migrate(db);
  db.sql("CREATE TEMP TABLE a (ms bigint, ts timestamptz, t text, j jsonb, arr bigint[], n int)");
  // EXPLAIN's lines as one text (the helper here reads one value).
  db.sql("CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text LANGUAGE plpgsql AS $$ DECLARE r text; "
         "o text := ''; BEGIN FOR r IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP o := o || r || E'\\n'; "
         "END LOOP; RETURN o; END $$");
  const std::vector<std::pair<std::string, std::string>> calls = {
      {"mr_ms_text", "mr_ms_text(ms)"},
      {"mr_ts_text", "mr_ts_text(ts)"},
      {"mr_ok", "mr_ok(t, t, j)"},
      {"mr_fail", "mr_fail(t, t, t)"},
      {"mr_fail", "mr_fail(t, t)"},
      {"mr_page", "mr_page(j, arr, n, t)"},
  };
  for (const auto& [name, call] : calls) {
    const std::string plan = db.sql("SELECT pg_temp.plan_of('SELECT " + call + " FROM a')");
    cr_expect(plan.find("mr_") == std::string::npos, "%s is not inlined: %s", name.c_str(), plan.c_str());
    cr_expect(plan.find("to_char") != std::string::npos || plan.find("jsonb_build_object") != std::string::npos,
              "%s: the plan shows its body: %s", name.c_str(), plan.c_str());
  }
}

// The helpers a settle or a reversal calls that read or write a table
// cannot be inlined; as LANGUAGE sql they were parsed and planned again in
// every transaction (so they are PL/pgSQL). PL/pgSQL keeps their
// plans for the session. The same results are checked by the ledger's
// tests; this holds the language.
Test(migrate, the_table_reading_helpers_keep_their_plans) {
  Db db;
  migrate(db);
  cr_expect_eq(db.sql("SELECT string_agg(p.proname || ':' || l.lanname, ',' ORDER BY p.proname) FROM pg_proc p "
                      "JOIN pg_language l ON l.oid = p.prolang WHERE p.pronamespace = current_schema()::regnamespace "
                      "AND p.proname IN ('mr_balances', 'mr_pool_total', 'mr_pool_give')"),
               std::string("mr_balances:plpgsql,mr_pool_give:plpgsql,mr_pool_total:plpgsql"));
}
