// nginx of a test's own, with the built modules, on the fixture's
// PostgreSQL and Redis (its own prefix, ports and error log), and databases
// of a test's own beside the fixture's. For tests of configurations the
// fixture's nginx does not have.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "ledger/sql/migrations.hpp"
#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/stack_env.hpp"

namespace mr::test {

struct Run {
  int rc = -1;
  std::string out;
};

inline Run run(const std::string& cmd) {
  Ran r = run_merged(cmd);
  return {r.exit_code, std::move(r.output)};
}

inline int free_port() { return std::stoi(run("'" + env("MR_REPO") + "/tools/free-port.sh'").out); }

// The fixture's DSN with another database name.
inline std::string dsn_of(const std::string& db) {
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

inline int newest_migration() {
  int newest = 0;
  for (const auto& m : mr::migrations()) newest = std::max(newest, m.version);
  return newest;
}

inline int migration_before_newest() {
  int before = 0;
  for (const auto& m : mr::migrations()) {
    if (m.version < newest_migration()) before = std::max(before, m.version);
  }
  return before;
}

struct NodeConf {
  std::string environment = "sandbox";
  std::string master_key = env("MR_MASTER_KEY_FILE");
  std::string catalogue_dsn = env("MR_DSN");  // empty: no mr_catalogue_dsn line
  std::string ledger_dsn = env("MR_DSN");
  std::string redis = "mr_redis_password_file " + env("MR_REDIS_PASSWORD_FILE") + ";";
  std::string http;  // more directives in http {}, each on a line of its own
  std::string api_location = "mr_auth on; mr_idempotency on; mr_ledger;";
  std::string webhooks = "mr_webhook_delivery off;";  // the webhook directives
};

// nginx of the test's own: one worker, the partner API on `port` (auth,
// idempotency, ledger) and the ops listener on `ops_port`.
class Node {
 public:
  explicit Node(const NodeConf& c) {
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
    s << "  access_log off;\n  mr_environment " << c.environment << ";\n";
    if (!c.catalogue_dsn.empty()) s << "  mr_catalogue_dsn \"" << c.catalogue_dsn << "\";\n";
    s << "  mr_master_key_file " << c.master_key << ";\n"
      << "  mr_catalogue_snapshot " << dir_ << "/catalogue.snapshot;\n"
      << "  mr_ledger_dsn \"" << c.ledger_dsn << "\";\n"
      << "  " << c.webhooks << "\n"
      << "  mr_redis 127.0.0.1:" << env("MR_REDIS_PORT") << ";\n  " << c.redis << "\n"
      << "  mr_metrics_zone mr_metrics;\n"
      << "  mr_ops_token_file " << env("MR_OPS_TOKEN_FILE") << ";\n" << c.http
      << "  server { listen 127.0.0.1:" << port_ << "; mr_request_id on;\n"
      << "    location /api/ { " << c.api_location << " } }\n"
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
  pid_t master_pid() const {
    std::ifstream in(dir_ + "/nginx.pid");
    long pid = 0;
    in >> pid;
    return static_cast<pid_t>(pid);
  }
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
  mr::HttpResponse ops_post(const std::string& path, const std::string& body = "") const {
    return mr::MrClient(ops_url(), "", "").send("POST", path, body, ops_auth());
  }

 private:
  std::string dir_;
  int port_ = 0, ops_port_ = 0;
  bool started_ = false;
};

}  // namespace mr::test
