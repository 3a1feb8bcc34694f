// `nginx -t` refuses dangerous configurations with one line naming the
// directive and the fix, and accepts the same configuration made safe: each
// test runs the stock nginx over a configuration of its own that loads the
// built modules and reads keys from the fixture's PostgreSQL.
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "stack_env.hpp"

using mr::test::env;

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // what nginx printed (stderr folded in)
};

struct Conf {
  std::string environment = "sandbox";
  std::string simulator = "off";
  std::string master_key_file = env("MR_MASTER_KEY_FILE");
  bool ops_token = true;
  std::string ops_listen = "127.0.0.1";
  std::string partner_server;  // directives of the partner server, outside its location
  std::string partner_location = "mr_auth on; mr_ledger;";
  bool catalogue = true;
  std::string http;  // more directives in http {}
};

std::string render(const Conf& c, const std::string& dir) {
  const std::string stack = env("MR_STACK_DIR");
  std::string s = "include " + stack + "/nginx/modules/load_modules.conf;\n";
  s += "pid " + dir + "/nginx.pid;\nerror_log " + dir + "/error.log;\nevents {}\nhttp {\n";
  s += "  mr_environment " + c.environment + ";\n";
  if (c.catalogue) s += "  mr_catalogue_dsn \"" + env("MR_DSN") + "\";\n";
  s += "  mr_master_key_file " + c.master_key_file + ";\n";
  s += "  mr_ledger_dsn \"" + env("MR_DSN") + "\";\n";
  if (c.ops_token) s += "  mr_ops_token_file " + env("MR_OPS_TOKEN_FILE") + ";\n";
  s += "  mr_payout_simulator " + c.simulator + ";\n";
  for (const char* t : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    s += std::string("  ") + t + "_temp_path " + dir + "/" + t + ";\n";
  }
  s += "  access_log off;\n" + c.http;
  // nginx -t does not bind: fixed ports are fine.
  s += "  server { listen 127.0.0.1:18080; " + c.partner_server + " location /api/ { " +
       c.partner_location + " } }\n";
  s += "  server { listen " + c.ops_listen + ":18081; location / { mr_ops; } }\n";
  s += "}\n";
  return s;
}

Outcome nginx_t(const Conf& c) {
  char tmpl[] = "/tmp/mr-refusals-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string conf = dir + "/nginx.conf";
  std::ofstream(conf) << render(c, dir);
  const std::string cmd =
      mr::test::nginx_command() + " -t -p " + dir + " -c " + conf + " -e " + dir + "/error.log 2>&1";
  Outcome out;
  FILE* p = ::popen(cmd.c_str(), "r");
  cr_assert(p != nullptr);
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out.output += buf.data();
  const int status = ::pclose(p);
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::system(("rm -rf " + dir).c_str());
  return out;
}

void expect_refused(const Conf& c, const std::string& line) {
  const Outcome o = nginx_t(c);
  cr_assert_neq(o.exit_code, 0, "nginx -t accepted a dangerous configuration:\n%s", o.output.c_str());
  cr_assert(o.output.find(line) != std::string::npos, "expected \"%s\" in:\n%s", line.c_str(),
            o.output.c_str());
}

}  // namespace

Test(nginx_refusals, the_safe_configuration_passes) {
  const Outcome o = nginx_t(Conf{});
  cr_assert_eq(o.exit_code, 0, "%s", o.output.c_str());
  cr_assert(o.output.find("test is successful") != std::string::npos, "%s", o.output.c_str());
}

Test(nginx_refusals, the_simulator_outside_sandbox) {
  Conf c;
  c.environment = "production";
  c.simulator = "on";
  expect_refused(c, "mr_payout_simulator on settles payouts without a bank and is for "
                    "\"mr_environment sandbox\" only: set \"mr_payout_simulator off\"");
  c.simulator = "off";
  cr_assert_eq(nginx_t(c).exit_code, 0);
  c.environment = "sandbox";
  c.simulator = "on";
  cr_assert_eq(nginx_t(c).exit_code, 0);
}

Test(nginx_refusals, an_ops_listener_on_the_network_without_a_token) {
  Conf c;
  c.ops_token = false;
  c.ops_listen = "0.0.0.0";
  expect_refused(c, "mr_ops is served on 0.0.0.0:18081 without mr_ops_token_file: set "
                    "\"mr_ops_token_file <path>;\" or listen on 127.0.0.1 only");
  c.ops_listen = "[::]";
  expect_refused(c, "without mr_ops_token_file");
  // Loopback without a token (only /healthz answers), or any address with one.
  c.ops_listen = "127.0.0.1";
  cr_assert_eq(nginx_t(c).exit_code, 0);
  c.ops_token = true;
  c.ops_listen = "0.0.0.0";
  cr_assert_eq(nginx_t(c).exit_code, 0);
}

Test(nginx_refusals, a_missing_or_wrongly_sized_master_key) {
  Conf c;
  c.master_key_file = "/nonexistent/master.key";
  expect_refused(c, "mr_master_key_file: /nonexistent/master.key: No such file or directory");
  // Never advice to make a new key: it would open none of the stored secrets.
  expect_refused(c, "restore that file from your copy of it; a new key would open none of them");
  cr_expect(nginx_t(c).output.find("master-key create") == std::string::npos);

  char tmpl[] = "/tmp/mr-short-key-XXXXXX";
  const int fd = ::mkstemp(tmpl);
  cr_assert(fd >= 0);
  cr_assert_eq(::write(fd, "0123456789abcdef", 16), 16);
  ::close(fd);
  c.master_key_file = tmpl;
  expect_refused(c, "a master key file holds exactly 32 bytes");
  ::unlink(tmpl);
}

Test(nginx_refusals, mr_auth_without_a_catalogue) {
  Conf c;
  c.catalogue = false;
  expect_refused(c, "mr_auth is on but mr_catalogue_dsn is not set");
}

Test(nginx_refusals, mr_ledger_without_mr_auth_in_front) {
  Conf c;
  c.partner_location = "mr_ledger;";
  expect_refused(c, "mr_ledger in location \"/api/\" has no \"mr_auth on\" in front of it: add "
                    "\"mr_auth on;\" to that location or its server");
  // mr_auth inherited from the server counts; switched off in the location, not.
  c.partner_server = "mr_auth on;";
  cr_assert_eq(nginx_t(c).exit_code, 0);
  c.partner_location = "mr_auth off; mr_ledger;";
  expect_refused(c, "mr_ledger in location \"/api/\" has no \"mr_auth on\"");
}

Test(nginx_refusals, a_bad_metrics_zone) {
  Conf c;
  c.http = "  mr_metrics_zone mr_metrics;\n";
  cr_assert_eq(nginx_t(c).exit_code, 0, "%s", nginx_t(c).output.c_str());
  c.http = "  mr_metrics_zone \"bad name\";\n";
  expect_refused(c, "mr_metrics_zone: \"bad name\" is not 1 to 64 of A-Z a-z 0-9 _ -");
  c.http = "  mr_metrics_zone one;\n  mr_metrics_zone two;\n";
  expect_refused(c, "\"mr_metrics_zone\" directive is duplicate");
  // Another module's zone of the same name.
  c.http = "  limit_req_zone $binary_remote_addr zone=mr_metrics:1m rate=1r/s;\n  mr_metrics_zone mr_metrics;\n";
  expect_refused(c, "\"mr_metrics\" is already declared for a different use");
}

Test(nginx_refusals, tuning_values_out_of_range) {
  Conf c;
  c.http = "  mr_idempotency_replay_cache 8m;\n  mr_ledger_settle_connections 1;\n";
  cr_assert_eq(nginx_t(c).exit_code, 0, "%s", nginx_t(c).output.c_str());
  c.http = "  mr_idempotency_replay_cache off;\n  mr_ledger_settle_connections 0;\n";
  cr_assert_eq(nginx_t(c).exit_code, 0, "%s", nginx_t(c).output.c_str());
  c.http = "  mr_idempotency_replay_cache lots;\n";
  expect_refused(c, "mr_idempotency_replay_cache \"lots\" is neither a size nor off");
  c.http = "  mr_ledger_settle_connections 300;\n";
  expect_refused(c, "mr_ledger_settle_connections must be 0..256");
}

Test(nginx_refusals, insecure_webhook_targets_outside_sandbox) {
  Conf c;
  c.environment = "production";
  c.http = "  mr_webhook_insecure_targets on;\n";
  expect_refused(c, "mr_webhook_insecure_targets on lets deliveries reach http:// URLs and loopback or private "
                    "addresses and is for \"mr_environment sandbox\" only: set \"mr_webhook_insecure_targets off\"");
  c.http = "  mr_webhook_insecure_targets off;\n";
  cr_assert_eq(nginx_t(c).exit_code, 0);
  c.http.clear();  // production's default: off
  cr_assert_eq(nginx_t(c).exit_code, 0);
  c.environment = "sandbox";
  c.http = "  mr_webhook_insecure_targets on;\n";
  cr_assert_eq(nginx_t(c).exit_code, 0);
}

Test(nginx_refusals, webhook_schedule_and_limits) {
  Conf c;
  c.http = "  mr_webhook_schedule 5s 1m;\n";
  expect_refused(c, "mr_webhook_schedule: the first attempt is sent at once, so the first wait is 0");
  c.http = "  mr_webhook_schedule 0 5x;\n";
  expect_refused(c, "mr_webhook_schedule: \"5x\" is not a time");
  c.http = "  mr_webhook_schedule 0 2d;\n";
  expect_refused(c, "mr_webhook_schedule: \"2d\" is longer than a day");
  c.http = "  mr_webhook_concurrency 0;\n";
  expect_refused(c, "mr_webhook_concurrency must be 1..1024");
  c.http = "  mr_webhook_schedule 0 500ms 1m 1h;\n  mr_webhook_timeout 30s;\n  mr_webhook_concurrency 64;\n"
           "  mr_webhook_poll 250ms;\n  mr_webhook_delivery off;\n";
  cr_assert_eq(nginx_t(c).exit_code, 0);
}
