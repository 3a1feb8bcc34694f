// Loud on misconfiguration, each case beside its safe twin: a catalogue
// with no active key warns at every load; a catalogue database whose
// migrations are behind the modules' is refused (nginx -t, start, reload)
// and a ledger database behind them makes /readyz answer 503 with the
// reason, both saying "run `mrctl migrate`"; Redis that wants a password
// nginx does not send is an `error` once per connection and counts in
// /metrics; an mr_ledger_dsn that names a host without hostaddr is refused
// at its own line. Each test runs nginx of its own (own prefix and ports)
// with the built modules on the fixture's PostgreSQL and Redis, and makes
// the databases it needs beside the fixture's.
#include <string>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/own_node.hpp"

using namespace mr::test;

namespace {

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

const std::string kNoKeys = "mr_auth: no active sandbox key (of an active club) in the catalogue";

}  // namespace

Test(misconfiguration, no_active_key_warns_at_every_load) {
  Database empty("nokeys");
  cr_assert_eq(empty.migrate().rc, 0);
  NodeConf c;
  c.catalogue_dsn = empty.dsn();
  Node node(c);
  const Run t = node.test();
  cr_expect_eq(t.rc, 0, "%s", t.out.c_str());
  cr_expect(t.out.find("[warn]") != std::string::npos && t.out.find(kNoKeys) != std::string::npos,
            "nginx -t does not warn: %s", t.out.c_str());
  node.start();
  cr_assert_eq(run(node.nginx("-s reload")).rc, 0);
  std::string logged;
  for (int i = 0; i < 100 && occurrences(logged, kNoKeys) < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    logged = node.log();
  }
  cr_expect_geq(occurrences(logged, kNoKeys), 2u, "not at the start and the reload: %s", logged.c_str());
  // The twin: the fixture's catalogue has keys.
  Node keyed{NodeConf{}};
  const Run twin = keyed.test();
  cr_expect_eq(twin.rc, 0, "%s", twin.out.c_str());
  cr_expect(twin.out.find("no active sandbox key") == std::string::npos, "%s", twin.out.c_str());
}

Test(misconfiguration, catalogue_database_behind_the_modules_is_refused) {
  Database behind("catbehind");
  const int before = migration_before_newest(), newest = newest_migration();
  cr_assert_eq(behind.migrate("--to " + std::to_string(before)).rc, 0);
  NodeConf c;
  c.catalogue_dsn = behind.dsn();
  Node node(c);
  const Run refused = node.test();
  cr_expect_neq(refused.rc, 0, "%s", refused.out.c_str());
  const std::string line = "mr_catalogue_dsn: the database's schema is at migration " + std::to_string(before) +
                           ", these modules need " + std::to_string(newest) + ": run `mrctl migrate`";
  cr_expect(refused.out.find(line) != std::string::npos, "expected \"%s\" in: %s", line.c_str(), refused.out.c_str());
  // No migration at all: refused the same way, not served from a snapshot.
  Database bare("catbare");
  NodeConf b;
  b.catalogue_dsn = bare.dsn();
  const Run none = Node(b).test();
  cr_expect_neq(none.rc, 0, "%s", none.out.c_str());
  cr_expect(none.out.find("schema is at migration 0, these modules need") != std::string::npos, "%s",
            none.out.c_str());
  // The twin: migrated, it passes.
  cr_assert_eq(behind.migrate().rc, 0);
  const Run ok = node.test();
  cr_expect_eq(ok.rc, 0, "%s", ok.out.c_str());
}

Test(misconfiguration, ledger_database_behind_the_modules_is_not_ready) {
  Database ledger("ledbehind");
  NodeConf c;
  c.ledger_dsn = ledger.dsn();
  Node node(c);
  node.start();
  // No migration at all.
  auto r = node.ops_get("/readyz");
  EXPECT_ERROR(r, 503, "service_unavailable");
  cr_expect(r.body.find("schema is at migration 0, these modules need " + std::to_string(newest_migration()) +
                        ": run `mrctl migrate`") != std::string::npos,
            "%s", r.body.c_str());
  cr_assert_eq(ledger.migrate("--to " + std::to_string(migration_before_newest())).rc, 0);
  r = node.ops_get("/readyz");
  EXPECT_ERROR(r, 503, "service_unavailable");
  cr_expect(r.body.find("schema is at migration " + std::to_string(migration_before_newest())) != std::string::npos,
            "%s", r.body.c_str());
  // The twin: migrated, ready at once (no reload).
  cr_assert_eq(ledger.migrate().rc, 0);
  r = node.ops_get("/readyz");
  cr_expect_eq(r.status, 200, "%s", r.body.c_str());
}

Test(misconfiguration, redis_wanting_a_password_nginx_does_not_send) {
  const std::string needs = "requires a password (NOAUTH";
  for (const bool with_password : {false, true}) {
    NodeConf c;
    if (!with_password) c.redis = "";
    Node node(c);
    node.start();
    mr::MrClient a(node.base_url(), env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
    for (int i = 0; i < 3; ++i) {
      const auto r = post(a, "/api/v1/members", member_body("club-a", unique("noauth")));
      cr_expect_eq(r.status, 201, "the database path must still answer: %s", r.body.c_str());
    }
    const std::string metrics = node.ops_get("/metrics").body;
    const double auth_errors = metric(metrics, R"(mr_redis_errors_total{kind="auth"})");
    const double claimed = metric(metrics, R"(mr_idempotency_requests_total{outcome="claimed"})");
    std::string logged = node.log();
    if (!with_password) {
      cr_expect_geq(auth_errors, 3, "%s", metrics.c_str());
      cr_expect_eq(claimed, 0);
      // Once for the worker's one connection, at error, however many POSTs.
      cr_expect_eq(occurrences(logged, needs), 1u, "%s", logged.c_str());
      const auto at = logged.find(needs);
      const auto line_start = logged.rfind('\n', at);
      cr_expect(logged.substr(line_start + 1, at - line_start).find("[error]") != std::string::npos, "%s",
                logged.c_str());
      cr_expect(logged.find("set mr_redis_password_file") != std::string::npos, "%s", logged.c_str());
    } else {
      cr_expect_eq(auth_errors, 0, "%s", metrics.c_str());
      cr_expect_geq(claimed, 3, "%s", metrics.c_str());
      cr_expect_eq(occurrences(logged, needs), 0u, "%s", logged.c_str());
    }
  }
}

Test(misconfiguration, ledger_dsn_naming_a_host_is_refused_at_its_line) {
  const std::string port = env("MR_PG_PORT");
  const std::string tail = " port=" + port + " dbname=mr user=postgres gssencmode=disable sslmode=disable";
  for (const std::string& bad : {"host=localhost" + tail, "host=127.0.0.1,db.invalid" + tail,
                                 "postgresql://localhost:" + port + "/mr?user=postgres"}) {
    NodeConf c;
    c.ledger_dsn = bad;
    const Node node(c);
    const Run r = node.test();
    cr_expect_neq(r.rc, 0, "accepted %s: %s", bad.c_str(), r.out.c_str());
    cr_expect(r.out.find("mr_ledger_dsn: host \"") != std::string::npos &&
                  r.out.find("\" is a name: the workers never resolve names") != std::string::npos,
              "%s: %s", bad.c_str(), r.out.c_str());
    // The line of the directive itself, not the end of the http block.
    const std::string at = "nginx.conf:" + std::to_string(node.line_of("mr_ledger_dsn")) + "\n";
    cr_expect(r.out.find(at) != std::string::npos, "not at %s: %s", at.c_str(), r.out.c_str());
  }
  // The twins: an address, a name with its hostaddr, a unix socket folder.
  for (const std::string& good : {"host=127.0.0.1" + tail, "host=localhost hostaddr=127.0.0.1" + tail,
                                  "host=" + env("MR_STACK_DIR") + "/pg" + tail}) {
    NodeConf c;
    c.ledger_dsn = good;
    const Run r = Node(c).test();
    cr_expect_eq(r.rc, 0, "refused %s: %s", good.c_str(), r.out.c_str());
  }
}
