// mrctl (migrate, clubs, keys) and load_key_catalogue against the
// integration fixture's PostgreSQL. Each test works in a database of its own,
// so its keys (and the broken rows it plants) never reach the shared stack.
#include <criterion/criterion.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "keys/key_catalogue.hpp"
#include "ledger/sql/migrations.hpp"
#include "tests/integration/scratch_db.hpp"

namespace {

using mr::test::env;
using mr::test::json_of;
using mr::test::MasterKey;
using mr::test::Run;
using mr::test::shell_quote;
using mr::test::Started;
using mr::test::Stderr;

// A scratch database, migrated unless told not to; start() runs mrctl as
// ScratchDb::mrctl does, without waiting.
class Db : public mr::test::ScratchDb {
 public:
  explicit Db(bool migrate = true) : ScratchDb("mr_cat", migrate) {}
  Started start(const std::vector<std::string>& args) const {
    return Started(mrctl_line(args, MasterKey::with), Stderr::into_out);
  }
};

void create_club(Db& db, const std::string& ref) {
  json_of(db.mrctl({"club", "create", "--ref", ref, "--name", "Club " + ref, "--earn-rate-bp", "150",
                    "--redemption-rate-minor", "2", "--payout-currency", "GBP", "--currencies", "GBP,EUR",
                    "--min-redemption", "100"}));
}

struct Issued {
  std::string key_id, secret;
};

Issued issue(Db& db, const std::string& ref, const std::string& environment) {
  auto d = json_of(db.mrctl({"key", "issue", "--ref", ref, "--env", environment}));
  return {d["keyId"].GetString(), d["secret"].GetString()};
}

mr::MasterKey master() {
  std::string err;
  auto k = mr::load_master_key(env("MR_MASTER_KEY_FILE"), err);
  cr_assert(k.has_value(), "%s", err.c_str());
  return *k;
}

// Exit code 2 or 1 and one line on stderr naming the problem.
void expect_refused(const Run& r, int code, const std::string& words) {
  cr_expect_eq(r.code, code, "exit %d, wanted %d: %s", r.code, code, r.out.c_str());
  cr_expect(r.out.find(words) != std::string::npos, "\"%s\" not in: %s", words.c_str(), r.out.c_str());
  cr_expect_eq(std::count(r.out.begin(), r.out.end(), '\n'), 1, "one line: %s", r.out.c_str());
}

}  // namespace

Test(mrctl, migrate_applies_each_migration_once) {
  Db db(false);
  const auto& all = mr::migrations();
  auto first = json_of(db.mrctl({"migrate"}));
  cr_expect_eq(first["applied"].GetInt(), static_cast<int>(all.size()));
  cr_expect_eq(first["version"].GetInt(), all.back().version);
  auto again = json_of(db.mrctl({"migrate"}));
  cr_expect_eq(again["applied"].GetInt(), 0);
  cr_expect_eq(again["version"].GetInt(), all.back().version);
  cr_expect_eq(db.sql("SELECT count(*) FROM schema_migrations"), std::to_string(all.size()));
  cr_expect_eq(db.sql("SELECT name FROM schema_migrations WHERE version = 1"), std::string("001_clubs_and_keys"));
}

Test(mrctl, concurrent_migrates_apply_everything_once) {
  Db db(false);
  std::vector<Started> runs;
  for (int i = 0; i < 4; ++i) runs.push_back(db.start({"migrate"}));
  int applied = 0;
  for (Started& p : runs) applied += json_of(p.finish())["applied"].GetInt();
  cr_expect_eq(applied, static_cast<int>(mr::migrations().size()));
}

Test(mrctl, club_create_update_show) {
  Db db;
  auto c = json_of(db.mrctl({"club", "create", "--ref", "acme-1", "--name", "Acme \"One\"", "--earn-rate-bp", "150",
                             "--redemption-rate-minor", "2", "--payout-currency", "GBP", "--currencies",
                             "GBP,EUR", "--min-redemption", "100"}));
  cr_expect_str_eq(c["partnerRef"].GetString(), "acme-1");
  cr_expect_str_eq(c["name"].GetString(), "Acme \"One\"");
  cr_expect_eq(c["earnRateBasisPoints"].GetInt(), 150);
  cr_expect_eq(c["redemptionRateMinorPerPoint"].GetInt(), 2);
  cr_expect_str_eq(c["payoutCurrency"].GetString(), "GBP");
  cr_assert_eq(c["currencies"].Size(), 2u);
  cr_expect_str_eq(c["currencies"][1].GetString(), "EUR");
  cr_expect_eq(c["minRedemptionPoints"].GetInt(), 100);
  cr_expect(c["fundingRestricted"].IsFalse());
  cr_expect_str_eq(c["status"].GetString(), "active");
  cr_assert(c["clubId"].IsString());

  auto u = json_of(db.mrctl({"club", "update", "--ref", "acme-1", "--earn-rate-bp", "0", "--funding-restricted",
                             "true", "--status", "suspended"}));
  cr_expect_eq(u["earnRateBasisPoints"].GetInt(), 0);
  cr_expect(u["fundingRestricted"].IsTrue());
  cr_expect_str_eq(u["status"].GetString(), "suspended");
  cr_expect_str_eq(u["name"].GetString(), "Acme \"One\"", "unchanged settings stay");
  cr_expect_str_eq(u["clubId"].GetString(), c["clubId"].GetString());

  auto s = json_of(db.mrctl({"club", "show", "--ref", "acme-1"}));
  cr_expect_str_eq(s["status"].GetString(), "suspended");
}

Test(mrctl, club_inputs_are_checked) {
  Db db;
  const std::vector<std::string> base = {"club", "create", "--ref", "r", "--name", "N", "--earn-rate-bp", "1"};
  auto with = [&](std::vector<std::string> extra) {
    auto args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return db.mrctl(args);
  };
  expect_refused(with({"--currencies", "gbp"}), 2, "three upper-case letters");
  expect_refused(with({"--currencies", "GBP,,EUR"}), 2, "three upper-case letters");
  expect_refused(with({"--currencies", "GBP,GBP"}), 2, "twice");
  expect_refused(with({"--currencies", "GBP", "--payout-currency", "GBPX"}), 2, "three upper-case letters");
  expect_refused(with({"--currencies", "GBP", "--min-redemption", "0"}), 2, "--min-redemption");
  expect_refused(with({"--currencies", "GBP", "--redemption-rate-minor", " 5"}), 2, "--redemption-rate-minor");
  expect_refused(with({"--currencies", "GBP", "--earn-rate"}), 2, "needs a value");
  expect_refused(with({"--currencies", "GBP", "--earn-rate", "5"}), 2, "takes no --earn-rate");
  expect_refused(with({"--currencies", "GBP", "--name", "Again"}), 2, "given twice");
  expect_refused(db.mrctl({"club", "create", "--ref", std::string(129, 'r'), "--name", "N", "--earn-rate-bp", "1",
                           "--currencies", "GBP"}),
                 2, "1 to 128");
  expect_refused(db.mrctl({"club", "create", "--ref", "tab\there", "--name", "N", "--earn-rate-bp", "1",
                           "--currencies", "GBP"}),
                 2, "printable ASCII");
  expect_refused(db.mrctl({"club", "create", "--ref", "r", "--name", "N", "--earn-rate-bp", "1000001",
                           "--currencies", "GBP"}),
                 2, "--earn-rate-bp");
  cr_expect_eq(db.sql("SELECT count(*) FROM clubs"), std::string("0"), "nothing refused was written");

  json_of(with({"--currencies", "GBP"}));
  expect_refused(with({"--currencies", "GBP"}), 1, "already exists");
  expect_refused(db.mrctl({"club", "update", "--ref", "r"}), 2, "nothing to change");
  expect_refused(db.mrctl({"club", "update", "--ref", "nope", "--name", "X"}), 1, "no club nope");
  expect_refused(db.mrctl({"club", "update", "--ref", "r", "--status", "closed"}), 2, "--status");
  expect_refused(db.mrctl({"club", "show", "--ref", "nope"}), 1, "no club nope");
}

// audit --club reads one club's books only: a difference in club a is
// named there and by the whole audit, never by club b's.
Test(mrctl, audit_of_one_club) {
  Db db;
  create_club(db, "club-a");
  create_club(db, "club-b");
  for (const char* ref : {"club-a", "club-b"}) {
    json_of(db.mrctl({"pool", "topup", "--ref", ref, "--points", "1000"}));
    db.sql(std::string("SELECT mr_write('member', club_id, partner_ref, 'k', 'f', 'r', jsonb_build_object("
                       "'partnerRef', partner_ref, 'externalMemberId', 'ann', 'firstName', 'A', 'lastName', 'B', "
                       "'email', 'a@b.c')) FROM clubs WHERE partner_ref = '") + ref + "'");
    json_of(db.mrctl({"member", "adjust", "--ref", ref, "--member", "ann", "--points", "25", "--reason", "welcome"}));
  }
  auto a = json_of(db.mrctl({"audit", "--club", "club-a"}));
  cr_expect(a["ok"].GetBool());
  cr_expect_eq(a["differences"].GetInt(), 0);
  cr_expect_str_eq(a["partnerRef"].GetString(), "club-a");
  cr_expect_eq(a["members"].GetInt(), 1);
  cr_expect_eq(a["entries"].GetInt(), 1);

  db.sql("UPDATE members m SET available = available + 1 FROM clubs c "
         "WHERE c.club_id = m.club_id AND c.partner_ref = 'club-a'");
  const Run broken = db.mrctl({"audit", "--club", "club-a"});
  cr_expect_eq(broken.code, 1, "%s", broken.out.c_str());
  cr_expect(broken.out.find("mrctl audit: member ann of club club-a: balances 26/0, entries sum to 25/0") !=
                std::string::npos,
            "%s", broken.out.c_str());
  cr_expect_eq(db.mrctl({"audit"}).code, 1, "the whole books include club a");
  cr_expect_eq(json_of(db.mrctl({"audit", "--club", "club-b"}))["differences"].GetInt(), 0);
  expect_refused(db.mrctl({"audit", "--club", "nope"}), 1, "no club nope");
}

Test(mrctl, at_most_two_active_keys_per_club_and_environment) {
  Db db;
  create_club(db, "club-k");
  const Issued a = issue(db, "club-k", "sandbox"), b = issue(db, "club-k", "sandbox");
  cr_expect(a.key_id.starts_with("mrk_sbx_"));
  cr_expect_eq(a.secret.size(), 43u);
  expect_refused(db.mrctl({"key", "issue", "--ref", "club-k", "--env", "sandbox"}), 1, "two active sandbox keys");
  const Issued p = issue(db, "club-k", "production");
  cr_expect(p.key_id.starts_with("mrk_prd_"), "the other environment counts apart");
  expect_refused(db.mrctl({"key", "issue", "--ref", "club-k", "--env", "staging"}), 2, "--env");
  expect_refused(db.mrctl({"key", "issue", "--ref", "nope", "--env", "sandbox"}), 1, "no club nope");

  auto revoked = json_of(db.mrctl({"key", "revoke", "--key-id", a.key_id}));
  cr_expect_str_eq(revoked["keyId"].GetString(), a.key_id.c_str());
  cr_expect_str_eq(revoked["status"].GetString(), "revoked");
  expect_refused(db.mrctl({"key", "revoke", "--key-id", "mrk_sbx_none"}), 1, "no key mrk_sbx_none");
  const Issued c = issue(db, "club-k", "sandbox");  // room again after a revoke

  const Run listed = db.mrctl({"key", "list", "--ref", "club-k"});
  auto l = json_of(listed, rapidjson::kArrayType);
  cr_assert_eq(l.Size(), 4u);
  for (const std::string& secret : {a.secret, b.secret, c.secret, p.secret}) {
    cr_expect(listed.out.find(secret) == std::string::npos, "key list never shows a secret");
  }
  int active = 0;
  for (const auto& k : l.GetArray()) {
    cr_expect(!k.HasMember("secret"));
    const bool is_a = k["keyId"].GetString() == a.key_id;
    cr_expect_str_eq(k["status"].GetString(), is_a ? "revoked" : "active");
    cr_expect(is_a ? k["revokedAt"].IsString() : k["revokedAt"].IsNull());
    cr_expect(k["createdAt"].IsString());
    active += !is_a;
  }
  cr_expect_eq(active, 3);
  cr_expect_eq(db.sql("SELECT count(*) FROM api_keys WHERE position('" + b.secret +
                      "' in encode(secret_sealed, 'escape')) > 0"),
               std::string("0"), "stored sealed, not clear");
}

Test(catalogue, loads_exactly_the_active_keys_of_the_environment) {
  Db db;
  create_club(db, "club-a");
  create_club(db, "club-s");
  const Issued a1 = issue(db, "club-a", "sandbox"), a2 = issue(db, "club-a", "sandbox");
  const Issued ap = issue(db, "club-a", "production");
  const Issued s1 = issue(db, "club-s", "sandbox");
  cr_assert_eq(db.mrctl({"key", "revoke", "--key-id", a2.key_id}).code, 0);
  json_of(db.mrctl({"club", "update", "--ref", "club-s", "--status", "suspended"}));

  std::string err;
  auto sandbox = mr::load_key_catalogue(db.dsn(), master(), "sandbox", err);
  cr_assert(sandbox.has_value(), "%s", err.c_str());
  cr_expect_eq(sandbox->size(), 1u);
  const mr::KeyEntry* e = sandbox->find(a1.key_id);
  cr_assert(e != nullptr);
  cr_expect_eq(e->secret, a1.secret);
  cr_expect_eq(e->partner_ref, std::string("club-a"));
  cr_expect_eq(std::to_string(e->club_id), db.sql("SELECT club_id FROM clubs WHERE partner_ref = 'club-a'"));
  cr_expect_eq(e->club_id_text, std::to_string(e->club_id));
  cr_expect(sandbox->find(a2.key_id) == nullptr, "revoked");
  cr_expect(sandbox->find(ap.key_id) == nullptr, "production key");
  cr_expect(sandbox->find(s1.key_id) == nullptr, "suspended club");

  auto production = mr::load_key_catalogue(db.uri(), master(), "production", err);  // a URI works too
  cr_assert(production.has_value(), "%s", err.c_str());
  cr_expect_eq(production->size(), 1u);
  cr_assert(production->find(ap.key_id) != nullptr);
  cr_expect_eq(production->find(ap.key_id)->secret, ap.secret);

  json_of(db.mrctl({"club", "update", "--ref", "club-s", "--status", "active"}));
  sandbox = mr::load_key_catalogue(db.dsn(), master(), "sandbox", err);
  cr_assert(sandbox.has_value(), "%s", err.c_str());
  cr_expect_eq(sandbox->size(), 2u, "the club is active again");
  cr_expect(sandbox->find(s1.key_id) != nullptr);
}

Test(catalogue, a_secret_that_does_not_open_fails_the_whole_load) {
  Db db;
  create_club(db, "club-a");
  const Issued a1 = issue(db, "club-a", "sandbox"), a2 = issue(db, "club-a", "sandbox");
  std::string err;

  mr::MasterKey other = master();
  other.bytes[0] ^= 1;
  cr_expect(!mr::load_key_catalogue(db.dsn(), other, "sandbox", err).has_value());
  cr_expect(err.find("does not open") != std::string::npos, "%s", err.c_str());

  // A sealed secret copied onto another key's row: the AAD (key id) differs.
  db.sql("UPDATE api_keys SET secret_sealed = (SELECT secret_sealed FROM api_keys WHERE key_id = '" + a1.key_id +
         "') WHERE key_id = '" + a2.key_id + "'");
  err.clear();
  cr_expect(!mr::load_key_catalogue(db.dsn(), master(), "sandbox", err).has_value());
  cr_expect(err.find(a2.key_id) != std::string::npos, "%s", err.c_str());
}

Test(catalogue, bad_environment_and_unreachable_database_are_errors) {
  Db db;
  std::string err;
  cr_expect(!mr::load_key_catalogue(db.dsn(), master(), "staging", err).has_value());
  cr_expect(err.find("sandbox or production") != std::string::npos, "%s", err.c_str());
  err.clear();
  cr_expect(!mr::load_key_catalogue("host=127.0.0.1 port=1 dbname=x", master(), "sandbox", err).has_value());
  cr_expect(!err.empty());
  auto empty = mr::load_key_catalogue(db.dsn(), master(), "sandbox", err);
  cr_assert(empty.has_value(), "%s", err.c_str());
  cr_expect_eq(empty->size(), 0u);
}

// mrctl needed --dsn (a password on the command line, visible to anyone
// listing processes): --dsn-file and MR_DSN keep it off. It refuses a
// master key file group or others can read.
Test(mrctl, dsn_from_a_file_or_the_environment_and_the_key_file_mode) {
  Db db;
  create_club(db, "club-f1");
  char dir[] = "/tmp/mr-dsnXXXXXX";
  cr_assert(mkdtemp(dir) != nullptr);
  const std::string dsn_file = std::string(dir) + "/dsn";
  std::ofstream(dsn_file) << db.dsn() << "\n";
  // It holds a password: mrctl refuses it unless only its owner may read it
  // (the master key's rule; tests/unit/tools/dsn_file_test.sh).
  cr_assert_eq(::chmod(dsn_file.c_str(), 0600), 0);
  const std::string mrctl = shell_quote(env("MR_MRCTL"));
  const std::string show = " club show --ref club-f1";
  const auto run = [](const std::string& cmd) { return mr::test::run(cmd, Stderr::into_out); };
  const Run from_file = run(mrctl + " --dsn-file " + shell_quote(dsn_file) + show);
  cr_expect_eq(from_file.code, 0, "%s", from_file.out.c_str());
  cr_expect(from_file.out.find("club-f1") != std::string::npos, "%s", from_file.out.c_str());
  const Run from_env = run("MR_DSN=" + shell_quote(db.dsn()) + " " + mrctl + show);
  cr_expect_eq(from_env.code, 0, "%s", from_env.out.c_str());
  cr_expect(from_env.out.find("club-f1") != std::string::npos, "%s", from_env.out.c_str());
  const Run missing = run(mrctl + " --dsn-file " + shell_quote(std::string(dir) + "/none") + show);
  cr_expect_eq(missing.code, 2, "%s", missing.out.c_str());

  const std::string open_key = std::string(dir) + "/open.key";
  const std::string copy = "cp " + shell_quote(env("MR_MASTER_KEY_FILE")) + " " + shell_quote(open_key) +
                           " && chmod 644 " + shell_quote(open_key);
  cr_assert_eq(std::system(copy.c_str()), 0);
  const Run refused = run(mrctl + " --dsn-file " + shell_quote(dsn_file) + " --master-key " + shell_quote(open_key) +
                          " key issue --ref club-f1 --env sandbox");
  cr_expect_neq(refused.code, 0, "%s", refused.out.c_str());
  cr_expect(refused.out.find("chmod 600") != std::string::npos, "%s", refused.out.c_str());
  cr_expect_eq(db.sql("SELECT count(*) FROM api_keys"), std::string("0"), "no key issued");
  std::system(("rm -rf " + shell_quote(dir)).c_str());
}
