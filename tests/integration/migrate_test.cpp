// mrctl migrate against the integration fixture's PostgreSQL, each test in a
// database of its own: upgrading a database with books in it from an older
// migration set (the books balance after, the idempotency lock is the 64-bit
// one), refusing a database whose recorded migrations differ from the
// embedded ones (nothing applied), adopting rows recorded before checksums
// only when their functions match, migrating twice changing nothing. Also
// the embedded set itself: checksums are SHA-256 of the embedded text, and
// every function comes after the functions it calls.
#include <criterion/criterion.h>

#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <string>
#include <vector>

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

std::string mr_write_source(Db& db) { return db.sql("SELECT prosrc FROM pg_proc WHERE proname = 'mr_write'"); }

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

std::string member_cmd(const std::string& ref, const std::string& member) {
  return R"({"partnerRef":")" + ref + R"(","externalMemberId":")" + member +
         R"(","firstName":"A","lastName":"B","email":"a@b.c","wallet":{"status":"active",)"
         R"("bankAccount":{"accountNumber":"12345678","sortCode":"123456","name":"A B"}}})";
}
std::string settle_cmd(const std::string& ref, const std::string& member, const std::string& tx, int amount) {
  return R"({"partnerRef":")" + ref + R"(","eventId":"e-)" + tx +
         R"(","occurredAt":"2026-11-20T10:00:00Z","externalMemberId":")" + member +
         R"(","externalTransactionId":")" + tx + R"(","merchantId":"m","merchantName":"M","amountMinor":)" +
         std::to_string(amount) + R"(,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"})";
}
std::string reverse_cmd(const std::string& ref, const std::string& member, const std::string& tx, int amount) {
  return R"({"partnerRef":")" + ref + R"(","eventId":"r-)" + tx +
         R"(","occurredAt":"2026-11-21T10:00:00Z","externalMemberId":")" + member +
         R"(","externalTransactionId":")" + tx + R"(","amountMinor":)" + std::to_string(amount) +
         R"(,"currency":"GBP","reason":"refund"})";
}
std::string redeem_cmd(const std::string& ref, const std::string& member, const std::string& request, int points) {
  return R"({"partnerRef":")" + ref + R"(","externalMemberId":")" + member + R"(","requestId":")" + request +
         R"(","points":)" + std::to_string(points) + R"(,"currency":"GBP"})";
}

std::string payout_of(const std::string& redeem_result) {
  auto d = mr::parse_json(redeem_result);
  cr_assert(d.IsObject() && d.HasMember("data"), "%s", redeem_result.c_str());
  return d["data"]["payout"]["payoutId"].GetString();
}

void create_club(Db& db, const std::string& ref) {
  json_of(db.mrctl({"club", "create", "--ref", ref, "--name", "Club " + ref, "--earn-rate-bp", "10000",
                    "--redemption-rate-minor", "2", "--payout-currency", "GBP", "--currencies", "GBP",
                    "--min-redemption", "10"}));
  json_of(db.mrctl({"pool", "topup", "--ref", ref, "--points", "100000"}));
  json_of(db.mrctl({"capacity", "topup", "--ref", ref, "--minor", "100000"}));
}

// The advisory lock an mr_write of (club, key) holds until its transaction
// ends, as pg_locks shows it: "objsubid classid objid".
std::string lock_of(Db& db, const std::string& club_id, const std::string& ref, const std::string& key,
                    const std::string& cmd) {
  db.sql("BEGIN");
  write(db, "member", club_id, ref, key, cmd);
  const std::string pid = db.sql("SELECT pg_backend_pid()");
  const std::string lock = db.sql_other(
      "SELECT string_agg(format('%s %s %s', objsubid, classid, objid), ',') FROM pg_locks "
      "WHERE locktype = 'advisory' AND pid = " + pid);
  db.sql("ROLLBACK");
  return lock;
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

// What a function calls must already exist where it is (finally) defined:
// a reader finds it above, and a LANGUAGE sql body needs it at CREATE. A
// callee may be redefined later (011 made mr_balances PL/pgSQL under the
// same signature); its first definition is what must come first.
Test(embedding, every_function_comes_after_the_functions_it_calls) {
  struct Final {
    std::size_t position;
    std::string body, where;
  };
  std::map<std::string, Final> last, first;
  std::size_t position = 0;
  for (const auto& m : mr::migrations()) {
    for (const auto& f : mr::created_functions(m.sql)) {
      last[f.name] = {position, std::string(f.body), std::string(m.name)};
      first.try_emplace(f.name, last[f.name]);
      position++;
    }
  }
  cr_assert_gt(last.size(), 30u, "the scanner sees the migrations' functions");
  cr_expect_eq(last.at("mr_write").where, "020_club_move");
  const std::regex call("\\b(mr_[a-z0-9_]+)\\s*\\(");
  int checked = 0;
  for (const auto& [name, f] : last) {
    for (std::sregex_iterator it(f.body.begin(), f.body.end(), call), end; it != end; ++it) {
      const std::string callee = (*it)[1];
      auto c = first.find(callee);
      if (c == first.end() || callee == name) continue;
      checked++;
      cr_expect_lt(c->second.position, f.position, "%s (%s) calls %s, defined after it (%s)", name.c_str(),
                   f.where.c_str(), callee.c_str(), c->second.where.c_str());
    }
  }
  cr_expect_gt(checked, 50, "calls were found: %d", checked);
}

// The upgrade a deployed database takes: books written under 003 (club,
// pool, members, awards, a reversal, an adjustment, redemptions paid, failed
// and pending), then every later migration applied over them.
Test(migrate, upgrading_a_database_with_books_keeps_them_and_takes_the_64_bit_lock) {
  Db db;
  Migrated m = migrate(db, {"--to", "3"});
  cr_assert_eq(m.version, 3);
  cr_assert_eq(m.applied, 3);
  cr_expect_eq(db.sql("SELECT count(*) FROM schema_migrations WHERE checksum IS NOT NULL"), "3");

  create_club(db, "club-a");
  // A club id past 2^31 - 1: 003's mr_write cast it to int.
  db.sql("SELECT setval('clubs_club_id_seq', 3000000000)");
  create_club(db, "club-big");
  const std::string a = db.sql("SELECT club_id FROM clubs WHERE partner_ref = 'club-a'");
  const std::string big = db.sql("SELECT club_id FROM clubs WHERE partner_ref = 'club-big'");
  cr_assert_eq(big, "3000000001");

  for (const std::string member : {"ann", "bob"}) {
    cr_assert_eq(outcome(write(db, "member", a, "club-a", "k-m-" + member, member_cmd("club-a", member))), "created");
  }
  cr_assert_eq(outcome(write(db, "settle", a, "club-a", "k-s1", settle_cmd("club-a", "ann", "tx-1", 500))), "ok");
  cr_assert_eq(outcome(write(db, "settle", a, "club-a", "k-s2", settle_cmd("club-a", "ann", "tx-2", 300))), "ok");
  cr_assert_eq(outcome(write(db, "settle", a, "club-a", "k-s3", settle_cmd("club-a", "bob", "tx-3", 200))), "ok");
  cr_assert_eq(outcome(write(db, "reverse", a, "club-a", "k-r1", reverse_cmd("club-a", "ann", "tx-2", 120))), "ok");
  json_of(db.mrctl({"member", "adjust", "--ref", "club-a", "--member", "bob", "--points", "7", "--reason", "goodwill"}));
  const std::string paid = write(db, "redeem", a, "club-a", "k-d1", redeem_cmd("club-a", "ann", "rq-1", 100));
  const std::string failed = write(db, "redeem", a, "club-a", "k-d2", redeem_cmd("club-a", "ann", "rq-2", 50));
  cr_assert_eq(outcome(write(db, "redeem", a, "club-a", "k-d3", redeem_cmd("club-a", "bob", "rq-3", 20))), "accepted");
  db.sql("SELECT mr_payout_move('" + payout_of(paid) + "', 'succeeded')");
  db.sql("SELECT mr_payout_move('" + payout_of(failed) + "', 'failed', 'test')");
  cr_assert_eq(json_of(db.mrctl({"audit"}))["ok"].GetBool(), true, "consistent before the upgrade");

  // 003's lock: two int4 keys, the club id cut to int, which fails past 2^31.
  cr_expect_eq(lock_of(db, a, "club-a", "k-lock", member_cmd("club-a", "cid")),
               "2 " + a + " " + db.sql("SELECT hashtext('k-lock')::oid"));
  cr_expect_eq(db.sql_error("SELECT mr_write('member', " + big + ", 'club-big', 'k-big', 'f', 'q', '" +
                            member_cmd("club-big", "ann") + "'::jsonb)"),
               "integer out of range");

  const std::string books = db.sql(
      "SELECT string_agg(format('%s %s %s %s %s', external_id, available, reserved, lifetime_earned, "
      "lifetime_redeemed), ',' ORDER BY external_id) FROM members");
  const std::string club_books = db.sql(
      "SELECT format('%s %s %s %s', funded_points, burned_points, cash_capacity_minor, mr_pool_total(club_id)) "
      "FROM clubs WHERE club_id = " + a);
  const std::string entries = db.sql("SELECT count(*) FROM ledger_entries");

  m = migrate(db);
  cr_expect_eq(m.applied, after(3));
  cr_expect_eq(m.adopted, 0);
  cr_expect_eq(m.version, newest());

  auto audit = json_of(db.mrctl({"audit"}));
  cr_expect(audit["ok"].GetBool());
  cr_expect_eq(audit["differences"].GetInt(), 0);
  cr_expect_eq(db.sql("SELECT count(*) FROM mr_audit()"), "0");
  cr_expect_eq(db.sql("SELECT string_agg(format('%s %s %s %s %s', external_id, available, reserved, "
                      "lifetime_earned, lifetime_redeemed), ',' ORDER BY external_id) FROM members"),
               books, "balances unchanged");
  cr_expect_eq(books, std::string("ann 580 0 680 100,bob 187 20 200 0"));
  cr_expect_eq(db.sql("SELECT format('%s %s %s %s', funded_points, burned_points, cash_capacity_minor, "
                      "mr_pool_total(club_id)) FROM clubs WHERE club_id = " + a),
               club_books);
  cr_expect_eq(db.sql("SELECT count(*) FROM ledger_entries"), entries, "no entry written by the migration");

  // 004's lock: one bigint key, a 64-bit hash of club id and key.
  const std::string key64 = db.sql("SELECT hashtextextended('" + a + ":k-lock', 0)");
  cr_expect_eq(lock_of(db, a, "club-a", "k-lock", member_cmd("club-a", "cid")),
               "1 " + db.sql("SELECT (" + key64 + " >> 32) & 4294967295") + " " +
                   db.sql("SELECT " + key64 + " & 4294967295"));
  cr_expect_eq(lock_of(db, big, "club-big", "k-lock", member_cmd("club-big", "ann")),
               "1 " + db.sql("SELECT (hashtextextended('" + big + ":k-lock', 0) >> 32) & 4294967295") + " " +
                   db.sql("SELECT hashtextextended('" + big + ":k-lock', 0) & 4294967295"));

  // Writes go on as before: a replay answers from the record written under
  // 003, a new award and the big club's first writes work.
  const std::string replay = write(db, "settle", a, "club-a", "k-s1", settle_cmd("club-a", "ann", "tx-1", 500));
  cr_expect(replay.find("\"replayed\": true") != std::string::npos, "%s", replay.c_str());
  cr_expect_eq(outcome(write(db, "settle", a, "club-a", "k-s1", settle_cmd("club-a", "ann", "tx-9", 500))),
               "duplicate_idempotency_conflict");
  cr_expect_eq(outcome(write(db, "settle", a, "club-a", "k-s4", settle_cmd("club-a", "bob", "tx-4", 100))), "ok");
  cr_expect_eq(outcome(write(db, "member", big, "club-big", "k-big", member_cmd("club-big", "ann"))), "created");
  cr_expect_eq(outcome(write(db, "settle", big, "club-big", "k-big-s", settle_cmd("club-big", "ann", "tx-1", 300))),
               "ok");
  cr_expect_eq(outcome(write(db, "close", a, "club-a", "k-c", R"({"partnerRef":"club-a","externalMemberId":"ann"})")),
               "ok");
  cr_expect_eq(json_of(db.mrctl({"audit"}))["ok"].GetBool(), true, "consistent after new writes");
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
  cr_expect_eq(db.sql("SELECT count(*) FROM pg_proc WHERE proname = 'mr_do_redeem'"), "0", "003 not applied");
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
  cr_expect(mr_write_source(db).find("p_club_id::int") != std::string::npos, "004 was not applied");
  // Refused again, not adopted or repaired on a second try.
  expect_refused(db.mrctl({"migrate", "--to", "3"}), "002_ledger has changed");
}

// 012 landed with another text at dbf6656 (4d0853a and cbf9c20 had edited
// it in place; migrations/SUPERSEDED): a database that recorded that text
// migrates on, and 013 restates both differences. The same checksum
// recorded for another migration, or any other text of 012, is still
// refused.
Test(migrate, an_earlier_text_a_later_migration_restates_is_accepted) {
  std::string earlier;
  for (const auto& e : mr::earlier_texts()) {
    if (e.version == 12) earlier = std::string(e.sha256);
  }
  cr_assert_eq(earlier.size(), 64u, "012's earlier text is not embedded");
  cr_assert_neq(earlier, std::string(migration(12).sha256));
  {
    Db db;
    migrate(db, {"--to", "12"});
    // The file's 012 leaves mr_pool_stripe() PARALLEL SAFE; 013 corrects it.
    cr_expect_eq(db.sql("SELECT proparallel FROM pg_proc WHERE proname = 'mr_pool_stripe'"), "s");
    db.sql("UPDATE schema_migrations SET checksum = '" + earlier + "' WHERE version = 12");
    const Migrated m = migrate(db);
    cr_expect_eq(m.version, newest());
    cr_expect_eq(m.applied, after(12));
    cr_expect_eq(db.sql("SELECT checksum FROM schema_migrations WHERE version = 12"), earlier, "kept as applied");
    // 013's corrections hold, whichever 012 ran.
    cr_expect_eq(db.sql("SELECT proparallel FROM pg_proc WHERE proname = 'mr_pool_stripe'"), "r");
    cr_expect_eq(migrate(db).applied, 0, "and again on the next run");
  }
  {
    Db db;
    migrate(db, {"--to", "12"});
    db.sql("UPDATE schema_migrations SET checksum = repeat('1', 64) WHERE version = 12");
    expect_refused(db.mrctl({"migrate"}), "migration 012_connection_stripes has changed");
    db.sql("UPDATE schema_migrations SET checksum = '" + std::string(migration(12).sha256) + "' WHERE version = 12");
    db.sql("UPDATE schema_migrations SET checksum = '" + earlier + "' WHERE version = 11");
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
// the column, as the older mrctl made it.
Test(migrate, rows_from_before_checksums_are_adopted_once_when_their_functions_match) {
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

// Before checksums, 002 and 003 were edited in place: a database migrated
// from an earlier text keeps the earlier function bodies. Adoption compares
// them and refuses instead of certifying them.
Test(migrate, rows_from_before_checksums_are_refused_when_a_function_differs) {
  {
    Db db;
    migrate(db, {"--to", "3"});
    db.sql("ALTER TABLE schema_migrations DROP COLUMN checksum");
    db.sql("CREATE OR REPLACE FUNCTION mr_award_points(p_amount bigint, p_rate_bp integer) RETURNS bigint "
           "LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT round(p_amount * p_rate_bp / 10000.0)::bigint $$");
    const std::string before = schema_state(db);
    expect_refused(db.mrctl({"migrate"}), "migration 002_ledger was applied before checksums were recorded and "
                                          "function mr_award_points differs from its text");
    cr_expect_eq(schema_state(db), before, "not adopted, nothing applied, no checksum column");
  }
  {
    Db db;
    migrate(db, {"--to", "3"});
    db.sql("UPDATE schema_migrations SET checksum = NULL");  // a column added, never filled
    db.sql("DROP FUNCTION mr_payouts(text, int)");
    const std::string before = schema_state(db);
    expect_refused(db.mrctl({"migrate"}), "migration 003_redemptions was applied before checksums were recorded "
                                          "and function mr_payouts is missing");
    cr_expect_eq(schema_state(db), before);
  }
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
  cr_expect_eq(schema_state(db), before);
  cr_expect_eq(db.sql("SELECT string_agg(proname || ' ' || xmin, ',' ORDER BY proname) FROM pg_proc "
                      "WHERE pronamespace = current_schema()::regnamespace"),
               xmins, "no function was redefined");
}

// The helpers every answer goes through are inlined by the planner: a SQL
// function that is not gets its body parsed and planned again at every
// execution of the statement calling it (010_inline_helpers.sql). A label
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
// every transaction (011_plan_cached_helpers.sql). PL/pgSQL keeps their
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
