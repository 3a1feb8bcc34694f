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
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "ledger/sql/migrations.hpp"
#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"

using namespace mr::test;

namespace {

struct Run {
  int rc = -1;
  std::string out;
};

Run run(const std::string& cmd) {
  Run r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  cr_assert(p != nullptr);
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) r.out += buf.data();
  const int status = ::pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

int free_port() { return std::stoi(run("'" + env("MR_REPO") + "/tools/free-port.sh'").out); }

// The fixture's DSN with another database name.
std::string dsn_of(const std::string& db) {
  std::string dsn = env("MR_DSN");
  const auto at = dsn.find("dbname=mr");
  cr_assert(at != std::string::npos, "%s", dsn.c_str());
  return dsn.replace(at, 9, "dbname=" + db);
}

// A database of the test's own beside the fixture's, dropped when it goes.
struct Database {
  std::string name;
  explicit Database(const std::string& what) : name("mr_" + what + "_" + std::to_string(::getpid())) {
    const Run r = run("psql '" + env("MR_DSN") + "' -XqAtc 'DROP DATABASE IF EXISTS " + name +
                      "' -c 'CREATE DATABASE " + name + "'");
    cr_assert_eq(r.rc, 0, "%s", r.out.c_str());
  }
  ~Database() { run("psql '" + env("MR_DSN") + "' -XqAtc 'DROP DATABASE IF EXISTS " + name + " WITH (FORCE)'"); }
  std::string dsn() const { return dsn_of(name); }
  Run migrate(const std::string& args = "") const {
    return run("'" + env("MR_MRCTL") + "' migrate --dsn '" + dsn() + "' " + args);
  }
};

int newest_migration() {
  int newest = 0;
  for (const auto& m : mr::migrations()) newest = std::max(newest, m.version);
  return newest;
}

int migration_before_newest() {
  int before = 0;
  for (const auto& m : mr::migrations()) {
    if (m.version < newest_migration()) before = std::max(before, m.version);
  }
  return before;
}

struct Conf {
  std::string catalogue_dsn = env("MR_DSN");
  std::string ledger_dsn = env("MR_DSN");
  std::string redis = "mr_redis_password_file " + env("MR_REDIS_PASSWORD_FILE") + ";";
};

// nginx of the test's own: one worker, the partner API on `port` (auth,
// idempotency, ledger) and the ops listener on `ops_port`.
class Node {
 public:
  explicit Node(const Conf& c) {
    char tmpl[] = "/tmp/mr-misconf-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    port_ = free_port();
    do ops_port_ = free_port();
    while (ops_port_ == port_);
    std::ostringstream s;
    s << "include " << env("MR_STACK_DIR") << "/nginx/modules/load_modules.conf;\n"
      << "worker_processes 1;\npid " << dir_ << "/nginx.pid;\nerror_log " << dir_ << "/error.log notice;\n"
      << "events { worker_connections 64; }\nhttp {\n";
    for (const char* t : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
      s << "  " << t << "_temp_path " << dir_ << "/" << t << ";\n";
    }
    s << "  access_log off;\n  mr_environment sandbox;\n"
      << "  mr_catalogue_dsn \"" << c.catalogue_dsn << "\";\n"
      << "  mr_master_key_file " << env("MR_MASTER_KEY_FILE") << ";\n"
      << "  mr_catalogue_snapshot " << dir_ << "/catalogue.snapshot;\n"
      << "  mr_ledger_dsn \"" << c.ledger_dsn << "\";\n"
      << "  mr_webhook_delivery off;\n"
      << "  mr_redis 127.0.0.1:" << env("MR_REDIS_PORT") << ";\n  " << c.redis << "\n"
      << "  mr_metrics_zone mr_metrics;\n"
      << "  mr_ops_token_file " << env("MR_OPS_TOKEN_FILE") << ";\n"
      << "  server { listen 127.0.0.1:" << port_ << "; mr_request_id on;\n"
      << "    location /api/ { mr_auth on; mr_idempotency on; mr_ledger; } }\n"
      << "  server { listen 127.0.0.1:" << ops_port_ << "; mr_request_id on; location / { mr_ops; } }\n"
      << "}\n";
    std::ofstream(dir_ + "/nginx.conf") << s.str();
  }
  ~Node() {
    if (started_) {
      run(nginx("-s quit"));
      for (int i = 0; i < 100 && running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    run("rm -rf '" + dir_ + "'");
  }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  std::string nginx(const std::string& args) const {
    return nginx_command() + " -p '" + dir_ + "' -c '" + dir_ + "/nginx.conf' -e '" + dir_ + "/error.log' " + args;
  }
  Run test() const { return run(nginx("-t")); }
  void start() {
    const Run r = run(nginx(""));
    cr_assert_eq(r.rc, 0, "nginx did not start: %s\n%s", r.out.c_str(), log().c_str());
    started_ = true;
    for (int i = 0; i < 100; ++i) {
      if (mr::MrClient(ops_url(), "", "").send("GET", "/healthz", "", {}).status == 200) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    cr_assert_fail("nginx does not answer on %d", ops_port_);
  }
  bool running() const { return run("kill -0 \"$(cat '" + dir_ + "/nginx.pid' 2>/dev/null)\"").rc == 0; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string ops_url() const { return "http://127.0.0.1:" + std::to_string(ops_port_); }
  std::string log() const { return mr::read_file(dir_ + "/error.log"); }
  // The line of nginx.conf that holds `text`.
  int line_of(const std::string& text) const {
    std::istringstream in(mr::read_file(dir_ + "/nginx.conf"));
    int n = 0;
    for (std::string line; std::getline(in, line);) {
      ++n;
      if (line.find(text) != std::string::npos) return n;
    }
    return 0;
  }
  mr::HttpResponse ops_get(const std::string& path) const {
    return mr::MrClient(ops_url(), "", "").send("GET", path, "", ops_auth());
  }

 private:
  std::string dir_;
  int port_ = 0, ops_port_ = 0;
  bool started_ = false;
};

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
  Conf c;
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
  Node keyed{Conf{}};
  const Run twin = keyed.test();
  cr_expect_eq(twin.rc, 0, "%s", twin.out.c_str());
  cr_expect(twin.out.find("no active sandbox key") == std::string::npos, "%s", twin.out.c_str());
}

Test(misconfiguration, catalogue_database_behind_the_modules_is_refused) {
  Database behind("catbehind");
  const int before = migration_before_newest(), newest = newest_migration();
  cr_assert_eq(behind.migrate("--to " + std::to_string(before)).rc, 0);
  Conf c;
  c.catalogue_dsn = behind.dsn();
  Node node(c);
  const Run refused = node.test();
  cr_expect_neq(refused.rc, 0, "%s", refused.out.c_str());
  const std::string line = "mr_catalogue_dsn: the database's schema is at migration " + std::to_string(before) +
                           ", these modules need " + std::to_string(newest) + ": run `mrctl migrate`";
  cr_expect(refused.out.find(line) != std::string::npos, "expected \"%s\" in: %s", line.c_str(), refused.out.c_str());
  // No migration at all: refused the same way, not served from a snapshot.
  Database bare("catbare");
  Conf b;
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
  Conf c;
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
    Conf c;
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
    Conf c;
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
    Conf c;
    c.ledger_dsn = good;
    const Run r = Node(c).test();
    cr_expect_eq(r.rc, 0, "refused %s: %s", good.c_str(), r.out.c_str());
  }
}
