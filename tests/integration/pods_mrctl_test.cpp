// mrctl over pods: the directory (pod add|list|set and their
// refusals), clubs created in a pod (one club_id in both databases, nothing
// half made when the pod fails), every club-scoped command in the club's
// pod, migrate and audit over every pod, lists merged over pods, keys in
// the catalogue. Each test works in databases of its own on the fixture's
// PostgreSQL: one catalogue (also the home pod) and two pods.
#include <criterion/criterion.h>

#include <algorithm>
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
using mr::test::Stderr;

// A scratch database, migrated unless told not to. mrctl_apart() keeps
// mrctl's standard error in Run::err (notices beside a JSON answer).
class Db : public mr::test::ScratchDb {
 public:
  explicit Db(const std::string& prefix, bool migrate = true) : ScratchDb(prefix, migrate) {}
  Run mrctl_apart(const std::vector<std::string>& args) const { return mr::test::run(mrctl_line(args, MasterKey::with)); }
  // The DSN with another host part (a name, say).
  std::string dsn_with_host(const std::string& host) const {
    std::string d = dsn();
    const auto at = d.find("host=127.0.0.1 ");
    cr_assert(at != std::string::npos, "%s", d.c_str());
    return d.replace(at, 15, "host=" + host + " ");
  }
};

// Refused: exit `code` and one line naming the problem.
void expect_refused(const Run& r, int code, const std::string& words) {
  cr_expect_eq(r.code, code, "exit %d, wanted %d: %s", r.code, code, r.out.c_str());
  cr_expect(r.out.find(words) != std::string::npos, "\"%s\" not in: %s", words.c_str(), r.out.c_str());
  cr_expect_eq(std::count(r.out.begin(), r.out.end(), '\n'), 1, "one line: %s", r.out.c_str());
}

int newest() { return mr::migrations().back().version; }

// The catalogue (the home pod) and pods p1 and p2, added with mrctl.
struct Pods {
  Db cat{"mr_podcat"}, p1{"mr_pod1"}, p2{"mr_pod2"};
  Pods() {
    json_of(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", p1.dsn()}));
    json_of(cat.mrctl({"pod", "add", "--pod", "p2", "--conninfo", p2.dsn()}));
  }
};

rapidjson::Document create_club(Db& cat, const std::string& ref, const std::string& pod = "") {
  std::vector<std::string> args = {"club", "create", "--ref", ref, "--name", "Club " + ref, "--earn-rate-bp", "10000",
                                   "--redemption-rate-minor", "2", "--payout-currency", "GBP", "--currencies", "GBP",
                                   "--min-redemption", "10"};
  if (!pod.empty()) args.insert(args.end(), {"--pod", pod});
  return json_of(cat.mrctl(args));
}

std::string member_cmd(const std::string& ref, const std::string& member) {
  return R"({"partnerRef":")" + ref + R"(","externalMemberId":")" + member +
         R"(","firstName":"A","lastName":"B","email":"a@b.c","wallet":{"status":"active",)"
         R"("bankAccount":{"accountNumber":"12345678","sortCode":"123456","name":"A B"}}})";
}

// One write through the ledger's own entry point in `db`, as nginx's
// workers make it in the club's pod: its outcome.
std::string write(Db& db, const std::string& op, const std::string& ref, const std::string& key, const std::string& cmd) {
  const std::string result =
      db.sql("SELECT mr_write('" + op + "', club_id, partner_ref, '" + key + "', md5('" + cmd + "'), 'req-" + key +
             "', '" + cmd + "'::jsonb) FROM clubs WHERE partner_ref = '" + ref + "'");
  auto d = mr::parse_json(result);
  cr_assert(!d.HasParseError() && d.IsObject() && d.HasMember("outcome"), "%s: %s", op.c_str(), result.c_str());
  return result;
}

std::string outcome(const std::string& result) { return mr::parse_json(result)["outcome"].GetString(); }

// A member `ann` with `points` from a settle, in the club's pod `db`.
void member_with_points(Db& db, const std::string& ref, int points) {
  cr_assert_eq(outcome(write(db, "member", ref, "m-" + ref, member_cmd(ref, "ann"))), "created");
  const std::string settle = R"({"partnerRef":")" + ref +
                             R"(","eventId":"e-1","occurredAt":"2026-11-20T10:00:00Z","externalMemberId":"ann",)"
                             R"("externalTransactionId":"tx-1","merchantId":"m","merchantName":"M","amountMinor":)" +
                             std::to_string(points) + R"(,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"})";
  cr_assert_eq(outcome(write(db, "settle", ref, "s-" + ref, settle)), "ok");
}

std::string redeem(Db& db, const std::string& ref, const std::string& request, int points) {
  const std::string cmd = R"({"partnerRef":")" + ref + R"(","externalMemberId":"ann","requestId":")" + request +
                          R"(","points":)" + std::to_string(points) + R"(,"currency":"GBP"})";
  const std::string result = write(db, "redeem", ref, "r-" + request, cmd);
  cr_assert_eq(outcome(result), "accepted", "%s", result.c_str());
  return mr::parse_json(result)["data"]["payout"]["payoutId"].GetString();
}

const rapidjson::Value* pod_entry(const rapidjson::Value& list, const std::string& pod) {
  for (const auto& p : list.GetArray()) {
    if (p["pod"].GetString() == pod) return &p;
  }
  return nullptr;
}

}  // namespace

Test(pods_mrctl, pod_add_list_set_and_their_refusals) {
  Db cat("mr_podcat"), p1("mr_pod1"), p2("mr_pod2", false), p3("mr_pod3"), other("mr_podx");
  // Refused before anything is written: names, conninfos nginx's workers
  // could not use, pods that do not answer or lack migrations.
  expect_refused(cat.mrctl({"pod", "add", "--pod", "home", "--conninfo", p1.dsn()}), 2, "catalogue's own database");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "Pod-1", "--conninfo", p1.dsn()}), 2, "1 to 31");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", p1.dsn() + " password=secret"}), 2,
                 "carries a password");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", p1.dsn_with_host("localhost")}), 2,
                 "host \"localhost\" is a name");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", "host=127.0.0.1 port=1 dbname=x user=postgres"}),
                 1, "pod p1 is unreachable");
  // MR_POD_USER: mrctl's role in pods instead of the conninfo's.
  expect_refused(mr::test::run("MR_POD_USER=mr_no_such_role " +
                                   cat.mrctl_line({"pod", "add", "--pod", "p1", "--conninfo", p1.dsn()}, MasterKey::with),
                               Stderr::into_out),
                 1, "role \"mr_no_such_role\" does not exist");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p2", "--conninfo", p2.dsn()}), 1, "--migrate true");
  cr_assert_eq(p2.mrctl({"migrate", "--to", "16"}).code, 0);
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p2", "--conninfo", p2.dsn()}), 1,
                 "at 16, this mrctl's newest is " + std::to_string(newest()));
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", p1.dsn(), "--migrate", "yes"}), 2,
                 "--migrate is true or false");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", cat.dsn()}), 1, "catalogue's own database");
  // A database that already keeps clubs is not a new pod.
  create_club(other, "elsewhere");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", other.dsn()}), 1, "already holds 1 clubs");
  cr_expect_eq(cat.sql("SELECT count(*) FROM pods"), std::string("0"), "nothing refused was written");

  auto a = json_of(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", p1.dsn()}));
  cr_expect_str_eq(a["pod"].GetString(), "p1");
  cr_expect_str_eq(a["conninfo"].GetString(), p1.dsn().c_str());
  cr_expect_eq(a["clubs"].GetInt(), 0);
  cr_expect(a["reachable"].IsTrue());
  cr_expect(a["schemaCurrent"].IsTrue());
  cr_expect_eq(a["version"].GetInt(), newest());
  cr_expect(a["problem"].IsNull());
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", p3.dsn()}), 1, "pod p1 already exists");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p3", "--conninfo", p1.dsn()}), 1, "pod p1 already has this conninfo");
  expect_refused(cat.mrctl({"pod", "add", "--pod", "p3", "--conninfo", p1.dsn() + " connect_timeout=5"}), 1,
                 "reaches the database of pod p1");
  // --migrate true brings a pod's schema up first.
  auto b = json_of(cat.mrctl({"pod", "add", "--pod", "p2", "--conninfo", p2.dsn(), "--migrate", "true"}));
  cr_expect_eq(b["version"].GetInt(), newest());
  cr_expect_eq(p2.sql("SELECT max(version) FROM schema_migrations"), std::to_string(newest()));
  cr_expect_eq(cat.sql("SELECT string_agg(pod || ' ' || conninfo, ',' ORDER BY pod) FROM pods"),
               "p1 " + p1.dsn() + ",p2 " + p2.dsn());

  create_club(cat, "in-home");
  create_club(cat, "in-p1", "p1");
  create_club(cat, "in-p1-too", "p1");
  auto list = json_of(cat.mrctl({"pod", "list"}), rapidjson::kArrayType);
  cr_assert_eq(list.Size(), 3u);
  cr_expect_str_eq(list[0]["pod"].GetString(), "home");
  cr_expect(list[0]["conninfo"].IsNull(), "mrctl does not know nginx's mr_ledger_dsn");
  cr_expect_eq(list[0]["clubs"].GetInt(), 1);
  cr_expect_str_eq(list[1]["pod"].GetString(), "p1");
  cr_expect_eq(list[1]["clubs"].GetInt(), 2);
  cr_expect_str_eq(list[2]["pod"].GetString(), "p2");
  cr_expect_eq(list[2]["clubs"].GetInt(), 0);
  for (const auto& p : list.GetArray()) {
    cr_expect(p["reachable"].IsTrue() && p["schemaCurrent"].IsTrue(), "%s", p["pod"].GetString());
    cr_expect_eq(p["version"].GetInt(), newest());
  }

  // pod set: the same database at another address. One that does not
  // hold the pod's clubs, another pod's database, a bad conninfo and the
  // home pod are refused.
  expect_refused(cat.mrctl({"pod", "set", "--pod", "p1", "--conninfo", p3.dsn()}), 1,
                 "lacks club in-p1 (club_id " + cat.sql("SELECT club_id FROM clubs WHERE partner_ref = 'in-p1'") + ")");
  expect_refused(cat.mrctl({"pod", "set", "--pod", "p1", "--conninfo", p2.dsn()}), 1, "pod p2 already has this conninfo");
  expect_refused(cat.mrctl({"pod", "set", "--pod", "p1", "--conninfo", p2.dsn() + " connect_timeout=5"}), 1,
                 "reaches the database of pod p2");
  expect_refused(cat.mrctl({"pod", "set", "--pod", "p2", "--conninfo", other.dsn()}), 1, "not this pod's database");
  expect_refused(cat.mrctl({"pod", "set", "--pod", "p1", "--conninfo", p1.dsn_with_host("localhost")}), 2, "is a name");
  expect_refused(cat.mrctl({"pod", "set", "--pod", "home", "--conninfo", p1.dsn()}), 2, "mr_ledger_dsn");
  expect_refused(cat.mrctl({"pod", "set", "--pod", "p9", "--conninfo", p3.dsn()}), 1, "no pod p9");
  cr_expect_eq(cat.sql("SELECT conninfo FROM pods WHERE pod = 'p1'"), p1.dsn());
  const std::string moved = p1.dsn() + " connect_timeout=7";
  auto s = json_of(cat.mrctl({"pod", "set", "--pod", "p1", "--conninfo", moved}));
  cr_expect_str_eq(s["conninfo"].GetString(), moved.c_str());
  cr_expect_eq(s["clubs"].GetInt(), 2);
  cr_expect_eq(cat.sql("SELECT conninfo FROM pods WHERE pod = 'p1'"), moved);
  cr_expect_eq(json_of(cat.mrctl({"pool", "topup", "--ref", "in-p1", "--points", "5"}))["availablePointsPool"].GetInt(), 5);
  cr_expect_eq(p1.sql("SELECT funded_points FROM clubs WHERE partner_ref = 'in-p1'"), std::string("5"));

  // A pod that stopped answering is listed as such, not hidden.
  cat.sql("UPDATE pods SET conninfo = 'host=127.0.0.1 port=1 dbname=x user=postgres' WHERE pod = 'p2'");
  list = json_of(cat.mrctl({"pod", "list"}), rapidjson::kArrayType);
  const rapidjson::Value* down = pod_entry(list, "p2");
  cr_assert(down != nullptr);
  cr_expect(down->operator[]("reachable").IsFalse());
  cr_expect(down->operator[]("version").IsNull());
  cr_expect(std::string(down->operator[]("problem").GetString()).find("unreachable") != std::string::npos);
  cr_expect(pod_entry(list, "p1")->operator[]("reachable").IsTrue());
}

Test(pods_mrctl, club_create_in_a_pod_and_its_books_there) {
  Pods pods;
  Db& cat = pods.cat;
  auto c = create_club(cat, "club-p1", "p1");
  cr_expect_str_eq(c["pod"].GetString(), "p1");
  auto h = create_club(cat, "club-home");
  cr_expect_str_eq(h["pod"].GetString(), "home");
  // One row in the catalogue (naming the pod) and one in the pod, with the
  // same id and settings; none in the other pod.
  const std::string id = cat.sql("SELECT club_id FROM clubs WHERE partner_ref = 'club-p1'");
  cr_expect_str_eq(c["clubId"].GetString(), id.c_str());
  cr_expect_eq(cat.sql("SELECT pod FROM clubs WHERE club_id = " + id), std::string("p1"));
  const std::string columns = "SELECT format('%s %s %s %s %s %s %s %s %s', club_id, partner_ref, name, earn_rate_bp, "
                              "redemption_rate_minor, payout_currency, currencies, min_redemption_points, status) "
                              "FROM clubs WHERE partner_ref = 'club-p1'";
  cr_expect_eq(pods.p1.sql(columns), cat.sql(columns));
  cr_expect_eq(pods.p1.sql("SELECT count(*) FROM clubs WHERE pod IS NULL AND club_id = " + id), std::string("1"));
  cr_expect_eq(pods.p1.sql("SELECT count(*) FROM club_pool_stripes WHERE club_id = " + id), std::string("16"));
  cr_expect_eq(pods.p2.sql("SELECT count(*) FROM clubs"), std::string("0"));
  cr_expect_eq(pods.p1.sql("SELECT count(*) FROM clubs WHERE partner_ref = 'club-home'"), std::string("0"));

  // The pool and cash capacity land in the club's pod only.
  json_of(cat.mrctl({"pool", "topup", "--ref", "club-p1", "--points", "1000"}));
  json_of(cat.mrctl({"capacity", "topup", "--ref", "club-p1", "--minor", "700"}));
  cr_expect_eq(pods.p1.sql("SELECT format('%s %s', funded_points, cash_capacity_minor) FROM clubs WHERE club_id = " + id),
               std::string("1000 700"));
  cr_expect_eq(cat.sql("SELECT format('%s %s', funded_points, cash_capacity_minor) FROM clubs WHERE club_id = " + id),
               std::string("0 0"));
  cr_expect_eq(pods.p1.sql("SELECT mr_pool_total(" + id + ")"), std::string("1000"));
  cr_expect_eq(cat.sql("SELECT mr_pool_total(" + id + ")"), std::string("0"));
  auto shown = json_of(cat.mrctl({"club", "show", "--ref", "club-p1"}));
  cr_expect_eq(shown["fundedPoints"].GetInt(), 1000, "club show reads the pod");
  cr_expect_str_eq(shown["pod"].GetString(), "p1");

  // A member (as nginx writes it, in the pod) adjusted by the operator.
  cr_assert_eq(outcome(write(pods.p1, "member", "club-p1", "m1", member_cmd("club-p1", "ann"))), "created");
  json_of(cat.mrctl({"member", "adjust", "--ref", "club-p1", "--member", "ann", "--points", "25",
                                     "--reason", "welcome"}));
  cr_expect_eq(pods.p1.sql("SELECT available FROM members WHERE external_id = 'ann'"), std::string("25"));
  cr_expect_eq(cat.sql("SELECT count(*) FROM members"), std::string("0"));
  cr_expect_eq(cat.sql("SELECT count(*) FROM ledger_entries"), std::string("0"));
  cr_expect_eq(pods.p1.sql("SELECT count(*) FROM events WHERE type = 'points.adjusted'"), std::string("1"));
  auto audit = json_of(cat.mrctl({"audit", "--club", "club-p1"}));
  cr_expect(audit["ok"].IsTrue());
  cr_expect_eq(audit["members"].GetInt(), 1);
  cr_expect_str_eq(audit["pod"].GetString(), "p1");
  expect_refused(cat.mrctl({"member", "adjust", "--ref", "club-p9", "--member", "ann", "--points", "1", "--reason",
                            "x"}),
                 1, "no club club-p9");

  // club update writes both rows; the pod's pool stays the pod's.
  auto u = json_of(cat.mrctl({"club", "update", "--ref", "club-p1", "--earn-rate-bp", "300", "--status", "suspended"}));
  cr_expect_eq(u["earnRateBasisPoints"].GetInt(), 300);
  cr_expect_eq(u["fundedPoints"].GetInt(), 1000);
  cr_expect_eq(pods.p1.sql(columns), cat.sql(columns));
  cr_expect_eq(pods.p1.sql("SELECT status FROM clubs WHERE club_id = " + id), std::string("suspended"));
  // A pod that no longer holds the club's row: refused, the catalogue unchanged.
  pods.p1.sql("UPDATE clubs SET partner_ref = 'renamed' WHERE club_id = " + id);
  expect_refused(cat.mrctl({"club", "update", "--ref", "club-p1", "--earn-rate-bp", "400"}), 1,
                 "is not in pod p1's database");
  cr_expect_eq(cat.sql("SELECT earn_rate_bp FROM clubs WHERE club_id = " + id), std::string("300"));
  expect_refused(cat.mrctl({"pool", "topup", "--ref", "club-p1", "--points", "1"}), 1, "the directory and the pod disagree");
}

Test(pods_mrctl, a_create_that_fails_in_the_pod_leaves_no_club) {
  Pods pods;
  Db& cat = pods.cat;
  expect_refused(cat.mrctl({"club", "create", "--ref", "x", "--name", "X", "--earn-rate-bp", "1", "--currencies", "GBP",
                            "--pod", "nope"}),
                 1, "no pod nope");
  expect_refused(cat.mrctl({"club", "create", "--ref", "x", "--name", "X", "--earn-rate-bp", "1", "--currencies", "GBP",
                            "--pod", "Bad"}),
                 2, "1 to 31");
  // The pod refuses the row: the catalogue's insert is rolled back.
  pods.p1.sql("ALTER TABLE clubs ADD CONSTRAINT refuse_x CHECK (partner_ref <> 'club-x')");
  const Run refused = cat.mrctl({"club", "create", "--ref", "club-x", "--name", "X", "--earn-rate-bp", "1",
                                 "--currencies", "GBP", "--pod", "p1"});
  expect_refused(refused, 1, "refuse_x");
  cr_expect_eq(cat.sql("SELECT count(*) FROM clubs WHERE partner_ref = 'club-x'"), std::string("0"));
  cr_expect_eq(pods.p1.sql("SELECT count(*) FROM clubs"), std::string("0"));
  // The pod does not answer: nothing either.
  cat.sql("UPDATE pods SET conninfo = 'host=127.0.0.1 port=1 dbname=x user=postgres' WHERE pod = 'p2'");
  expect_refused(cat.mrctl({"club", "create", "--ref", "club-y", "--name", "Y", "--earn-rate-bp", "1", "--currencies",
                            "GBP", "--pod", "p2"}),
                 1, "pod p2 is unreachable");
  cr_expect_eq(cat.sql("SELECT count(*) FROM clubs"), std::string("0"));

  pods.p1.sql("ALTER TABLE clubs DROP CONSTRAINT refuse_x");
  auto made = create_club(cat, "club-x", "p1");
  cr_expect_eq(pods.p1.sql("SELECT club_id FROM clubs WHERE partner_ref = 'club-x'"), std::string(made["clubId"].GetString()));

  // A row an interrupted create left in the pod (committed there, never in
  // the catalogue) is removed by the next create of its reference, when
  // nothing was written for it; with books it is left, and nothing created.
  const std::string left = cat.sql("SELECT nextval(pg_get_serial_sequence('clubs', 'club_id'))");
  pods.p1.sql("INSERT INTO clubs (club_id, partner_ref, name, earn_rate_bp, currencies) VALUES (" + left +
              ", 'club-left', 'L', 1, '{GBP}')");
  const Run again = cat.mrctl_apart({"club", "create", "--ref", "club-left", "--name", "L", "--earn-rate-bp", "1",
                                     "--currencies", "GBP", "--pod", "p1"});
  auto recreated = json_of(again);
  cr_expect(again.err.find("removed pod p1's row of club club-left (club_id " + left + ")") != std::string::npos, "%s",
            again.err.c_str());
  cr_expect_neq(std::string(recreated["clubId"].GetString()), left);
  cr_expect_eq(pods.p1.sql("SELECT club_id FROM clubs WHERE partner_ref = 'club-left'"),
               std::string(recreated["clubId"].GetString()));

  const std::string booked = cat.sql("SELECT nextval(pg_get_serial_sequence('clubs', 'club_id'))");
  pods.p1.sql("INSERT INTO clubs (club_id, partner_ref, name, earn_rate_bp, currencies) VALUES (" + booked +
              ", 'club-booked', 'B', 1, '{GBP}')");
  cr_assert_eq(outcome(write(pods.p1, "member", "club-booked", "m1", member_cmd("club-booked", "ann"))), "created");
  expect_refused(cat.mrctl({"club", "create", "--ref", "club-booked", "--name", "B", "--earn-rate-bp", "1",
                            "--currencies", "GBP", "--pod", "p1"}),
                 1, "with books");
  cr_expect_eq(cat.sql("SELECT count(*) FROM clubs WHERE partner_ref = 'club-booked'"), std::string("0"));
  cr_expect_eq(pods.p1.sql("SELECT club_id FROM clubs WHERE partner_ref = 'club-booked'"), booked);
}

Test(pods_mrctl, migrate_covers_every_pod) {
  Db cat("mr_podcat"), p1("mr_pod1"), p2("mr_pod2", false);
  json_of(cat.mrctl({"pod", "add", "--pod", "p1", "--conninfo", p1.dsn()}));
  // A directory row written before its database was migrated (by hand):
  // migrate brings it up with the others.
  cat.sql("INSERT INTO pods (pod, conninfo) VALUES ('p2', '" + p2.dsn() + "')");
  auto m = json_of(cat.mrctl_apart({"migrate"}));
  cr_expect_eq(m["applied"].GetInt(), 0);
  cr_expect_eq(m["version"].GetInt(), newest());
  cr_assert_eq(m["pods"].Size(), 2u);
  cr_expect_str_eq(m["pods"][0]["pod"].GetString(), "p1");
  cr_expect_eq(m["pods"][0]["applied"].GetInt(), 0);
  cr_expect_str_eq(m["pods"][1]["pod"].GetString(), "p2");
  cr_expect_eq(m["pods"][1]["applied"].GetInt(), static_cast<int>(mr::migrations().size()));
  cr_expect_eq(m["pods"][1]["version"].GetInt(), newest());
  cr_expect_eq(p2.sql("SELECT count(*) FROM schema_migrations"), std::to_string(mr::migrations().size()));

  auto one = json_of(cat.mrctl({"migrate", "--pod", "p2"}));
  cr_expect_str_eq(one["pod"].GetString(), "p2");
  cr_expect_eq(one["applied"].GetInt(), 0);
  // Named: Criterion's macro reads the string after a temporary document would be gone.
  const auto home = json_of(cat.mrctl({"migrate", "--pod", "home"}));
  cr_expect_str_eq(home["pod"].GetString(), "home");
  expect_refused(cat.mrctl({"migrate", "--pod", "p9"}), 1, "no pod p9");

  // One pod that cannot be migrated (unreachable; another build's) is
  // reported, the others still migrate, and the exit status says so.
  cat.sql("INSERT INTO pods (pod, conninfo) VALUES ('p3', 'host=127.0.0.1 port=1 dbname=x user=postgres')");
  p1.sql("INSERT INTO schema_migrations (version, name, checksum) VALUES (999, '999_future', repeat('a', 64))");
  const Run partial = cat.mrctl_apart({"migrate"});
  cr_expect_eq(partial.code, 1, "%s", partial.err.c_str());
  auto p = mr::parse_json(partial.out);
  cr_assert(p.IsObject() && p["pods"].Size() == 3u, "%s", partial.out.c_str());
  cr_expect(std::string(p["pods"][0]["error"].GetString()).find("999_future") != std::string::npos);
  cr_expect_eq(p["pods"][1]["applied"].GetInt(), 0);
  cr_expect(std::string(p["pods"][2]["error"].GetString()).find("unreachable") != std::string::npos);
  cr_expect(partial.err.find("mrctl: pod p1: ") != std::string::npos, "%s", partial.err.c_str());
  cr_expect(partial.err.find("mrctl: pod p3: pod p3 is unreachable") != std::string::npos, "%s", partial.err.c_str());
}

Test(pods_mrctl, audit_covers_every_pod) {
  Pods pods;
  Db& cat = pods.cat;
  create_club(cat, "c-home");
  create_club(cat, "c-p1", "p1");
  create_club(cat, "c-p2", "p2");
  json_of(cat.mrctl({"pool", "topup", "--ref", "c-home", "--points", "100000"}));
  json_of(cat.mrctl({"pool", "topup", "--ref", "c-p1", "--points", "100000"}));
  json_of(cat.mrctl({"pool", "topup", "--ref", "c-p2", "--points", "100000"}));
  member_with_points(cat, "c-home", 300);
  member_with_points(pods.p1, "c-p1", 400);
  member_with_points(pods.p2, "c-p2", 500);

  auto a = json_of(cat.mrctl({"audit"}));
  cr_expect(a["ok"].IsTrue());
  cr_expect_eq(a["clubs"].GetInt(), 3, "each club counted once, where its books are");
  cr_expect_eq(a["members"].GetInt(), 3);
  cr_expect_eq(a["entries"].GetInt(), 3);
  cr_assert_eq(a["pods"].Size(), 3u);
  for (const char* pod : {"home", "p1", "p2"}) {
    const rapidjson::Value* p = pod_entry(a["pods"], pod);
    cr_assert(p != nullptr, "%s", pod);
    cr_expect(p->operator[]("ok").IsTrue(), "%s", pod);
    cr_expect_eq(p->operator[]("clubs").GetInt(), 1, "%s", pod);
    cr_expect_eq(p->operator[]("members").GetInt(), 1, "%s", pod);
  }

  // p2's books broken by hand: the audit fails and names the pod.
  pods.p2.sql("UPDATE members SET available = available + 1");
  const Run broken = cat.mrctl_apart({"audit"});
  cr_expect_eq(broken.code, 1, "%s", broken.err.c_str());
  cr_expect(broken.err.find("mrctl audit: pod p2: member ann of club c-p2: balances 501/0, entries sum to 500/0") !=
                std::string::npos,
            "%s", broken.err.c_str());
  auto b = mr::parse_json(broken.out);
  cr_assert(b.IsObject(), "%s", broken.out.c_str());
  cr_expect(b["ok"].IsFalse());
  cr_expect_eq(b["differences"].GetInt(), 2, "the member's balance, and the club's sum with it");
  cr_expect(pod_entry(b["pods"], "p2")->operator[]("ok").IsFalse());
  cr_expect(pod_entry(b["pods"], "p1")->operator[]("ok").IsTrue());
  cr_expect_eq(json_of(cat.mrctl({"audit", "--club", "c-p1"}))["differences"].GetInt(), 0);
  cr_expect_eq(cat.mrctl({"audit", "--club", "c-p2"}).code, 1);
  pods.p2.sql("UPDATE members SET available = available - 1");
  cr_expect_eq(cat.mrctl_apart({"audit"}).code, 0);

  // A pod that cannot be audited fails the audit too.
  cat.sql("UPDATE pods SET conninfo = 'host=127.0.0.1 port=1 dbname=x user=postgres' WHERE pod = 'p1'");
  const Run unreachable = cat.mrctl_apart({"audit"});
  cr_expect_eq(unreachable.code, 1);
  cr_expect(unreachable.err.find("mrctl: pod p1: pod p1 is unreachable") != std::string::npos, "%s",
            unreachable.err.c_str());
  auto u = mr::parse_json(unreachable.out);
  cr_assert(u.IsObject(), "%s", unreachable.out.c_str());
  cr_expect(u["ok"].IsFalse());
  cr_expect(std::string(pod_entry(u["pods"], "p1")->operator[]("error").GetString()).find("unreachable") !=
            std::string::npos);
}

Test(pods_mrctl, payouts_webhooks_and_prunes_over_every_pod) {
  Pods pods;
  Db& cat = pods.cat;
  create_club(cat, "c-home");
  create_club(cat, "c-p1", "p1");
  for (const char* ref : {"c-home", "c-p1"}) {
    json_of(cat.mrctl({"pool", "topup", "--ref", ref, "--points", "100000"}));
    json_of(cat.mrctl({"capacity", "topup", "--ref", ref, "--minor", "100000"}));
  }
  member_with_points(cat, "c-home", 300);
  member_with_points(pods.p1, "c-p1", 400);
  const std::string home_payout = redeem(cat, "c-home", "rq-1", 20);
  const std::string p1_payout = redeem(pods.p1, "c-p1", "rq-2", 30);
  const std::string p1_later = redeem(pods.p1, "c-p1", "rq-3", 40);

  // One list over both pods, oldest first as each pod lists them, cut to --limit.
  auto listed = json_of(cat.mrctl({"payout", "list"}), rapidjson::kArrayType);
  cr_assert_eq(listed.Size(), 3u);
  std::vector<std::string> ids, refs;
  for (std::size_t i = 0; i < listed.Size(); ++i) {
    ids.emplace_back(listed[i]["payoutId"].GetString());
    refs.emplace_back(listed[i]["partnerRef"].GetString());
    if (i > 0) {
      cr_expect(std::string(listed[i - 1]["createdAt"].GetString()) <= listed[i]["createdAt"].GetString(), "oldest first");
    }
  }
  std::vector<std::string> all = {home_payout, p1_payout, p1_later};
  std::sort(all.begin(), all.end());
  std::vector<std::string> sorted_ids = ids;
  std::sort(sorted_ids.begin(), sorted_ids.end());
  cr_expect(sorted_ids == all, "every pod's payouts");
  cr_expect_eq(std::count(refs.begin(), refs.end(), "c-p1"), 2);
  auto two = json_of(cat.mrctl({"payout", "list", "--limit", "2"}), rapidjson::kArrayType);
  cr_assert_eq(two.Size(), 2u);
  cr_expect_str_eq(two[0]["payoutId"].GetString(), ids[0].c_str());
  cr_expect_str_eq(two[1]["payoutId"].GetString(), ids[1].c_str());

  // A payout moves in the pod that holds it.
  json_of(cat.mrctl({"payout", "succeed", "--payout-id", p1_payout}));
  cr_expect_eq(pods.p1.sql("SELECT status FROM payouts WHERE payout_id = '" + p1_payout + "'"), std::string("succeeded"));
  cr_expect_eq(pods.p1.sql("SELECT burned_points FROM clubs WHERE partner_ref = 'c-p1'"), std::string("30"));
  json_of(cat.mrctl({"payout", "fail", "--payout-id", home_payout, "--reason", "closed account"}));
  cr_expect_eq(cat.sql("SELECT status FROM payouts WHERE payout_id = '" + home_payout + "'"), std::string("failed"));
  expect_refused(cat.mrctl({"payout", "submit", "--payout-id", "po_none"}), 1, "no payout po_none");
  auto succeeded = json_of(cat.mrctl({"payout", "list", "--status", "succeeded"}), rapidjson::kArrayType);
  cr_assert_eq(succeeded.Size(), 1u);
  cr_expect_str_eq(succeeded[0]["payoutId"].GetString(), p1_payout.c_str());
  cr_expect_eq(json_of(cat.mrctl({"audit"}))["differences"].GetInt(), 0);

  // Webhook endpoints: none yet, from every pod and from one club's.
  cr_expect_eq(json_of(cat.mrctl({"webhook", "list"}), rapidjson::kArrayType).Size(), 0u);
  cr_expect_eq(json_of(cat.mrctl({"webhook", "list", "--ref", "c-p1"}), rapidjson::kArrayType).Size(), 0u);
  cr_expect_eq(json_of(cat.mrctl({"webhook", "failures"}), rapidjson::kArrayType).Size(), 0u);
  expect_refused(cat.mrctl({"webhook", "enable", "--endpoint-id", "we_none"}), 1, "no webhook endpoint we_none");

  // Prunes cover every pod: the kept answers and events of both.
  const std::string old = "created_at = now() - interval '40 days'";
  cat.sql("UPDATE idempotency_records SET " + old);
  pods.p1.sql("UPDATE idempotency_records SET " + old);
  const std::string kept = std::to_string(std::stoi(cat.sql("SELECT count(*) FROM idempotency_records")) +
                                          std::stoi(pods.p1.sql("SELECT count(*) FROM idempotency_records")));
  cr_expect_eq(std::to_string(json_of(cat.mrctl({"idempotency", "prune"}))["pruned"].GetInt64()), kept);
  cr_expect_eq(pods.p1.sql("SELECT count(*) FROM idempotency_records"), std::string("0"));
  cat.sql("UPDATE events SET " + old);
  pods.p1.sql("UPDATE events SET " + old);
  const int events = std::stoi(cat.sql("SELECT count(*) FROM events")) + std::stoi(pods.p1.sql("SELECT count(*) FROM events"));
  cr_expect_gt(events, 0);
  cr_expect_eq(json_of(cat.mrctl({"events", "prune"}))["pruned"].GetInt64(), events);
  cr_expect_eq(pods.p1.sql("SELECT count(*) FROM events"), std::string("0"));

  // An unreachable pod: the list still shows the others', and says so.
  cat.sql("UPDATE pods SET conninfo = 'host=127.0.0.1 port=1 dbname=x user=postgres' WHERE pod = 'p2'");
  const Run partial = cat.mrctl_apart({"payout", "list"});
  cr_expect_eq(partial.code, 1);
  cr_expect(partial.err.find("mrctl: pod p2: pod p2 is unreachable") != std::string::npos, "%s", partial.err.c_str());
  auto shown = mr::parse_json(partial.out);
  cr_expect(shown.IsArray() && shown.Size() == 3u, "%s", partial.out.c_str());
}

// Keys stay in the catalogue; nginx's catalogue load finds the club's pod
// and the pod's conninfo there.
Test(pods_mrctl, keys_stay_in_the_catalogue_and_the_load_routes_them) {
  Pods pods;
  Db& cat = pods.cat;
  create_club(cat, "c-p2", "p2");
  auto issued = json_of(cat.mrctl({"key", "issue", "--ref", "c-p2", "--env", "sandbox"}));
  const std::string key_id = issued["keyId"].GetString();
  cr_expect_eq(cat.sql("SELECT count(*) FROM api_keys"), std::string("1"));
  cr_expect_eq(pods.p2.sql("SELECT count(*) FROM api_keys"), std::string("0"));
  cr_expect_eq(json_of(cat.mrctl({"key", "list", "--ref", "c-p2"}), rapidjson::kArrayType).Size(), 1u);

  std::string err;
  auto master = mr::load_master_key(env("MR_MASTER_KEY_FILE"), err);
  cr_assert(master.has_value(), "%s", err.c_str());
  auto loaded = mr::load_key_catalogue(cat.dsn(), *master, "sandbox", err);
  cr_assert(loaded.has_value(), "%s", err.c_str());
  const mr::KeyEntry* e = loaded->find(key_id);
  cr_assert(e != nullptr);
  cr_expect_eq(loaded->pod_name(e->pod), std::string_view("p2"));
  cr_assert_eq(loaded->pods().size(), 2u);
  cr_expect_eq(loaded->pods()[e->pod - 1].conninfo, pods.p2.dsn());
}
