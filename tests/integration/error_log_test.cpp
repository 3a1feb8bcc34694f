// The error log can be joined with a request, and with the configuration:
// a line a module writes while a request is in hand ends with the request's
// X-Request-Id (`, request_id: "<id>"`), and an error found once the http
// block is read points at the directive's own file and line, not at the end
// of the http block. Each test runs nginx of its own on the fixture.
#include <string>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/own_node.hpp"

using namespace mr::test;

namespace {

// The error log's line that holds `text`, or "".
std::string line_with(const std::string& log, const std::string& text) {
  const auto at = log.find(text);
  if (at == std::string::npos) return {};
  const auto start = log.rfind('\n', at);
  const auto end = log.find('\n', at);
  return log.substr(start == std::string::npos ? 0 : start + 1,
                    end == std::string::npos ? std::string::npos : end - (start == std::string::npos ? 0 : start + 1));
}

// nginx -t fails with `message`, and says it is in nginx.conf at the line
// that holds `directive`.
void expect_at_line(const NodeConf& c, const std::string& message, const std::string& directive) {
  const Node node(c);
  const Run r = node.test();
  cr_expect_neq(r.rc, 0, "accepted: %s", r.out.c_str());
  const std::string line = line_with(r.out, message);
  cr_expect(!line.empty(), "no \"%s\" in: %s", message.c_str(), r.out.c_str());
  const std::string at = "nginx.conf:" + std::to_string(node.line_of(directive));
  cr_expect(line.ends_with(at), "\"%s\" is not at %s: %s", message.c_str(), at.c_str(), line.c_str());
}

}  // namespace

Test(error_log, a_500_line_carries_the_request_id) {
  // A ledger database with the first migration only: the statement fails.
  Database ledger("rid");
  cr_assert_eq(ledger.migrate("--to 1").rc, 0);
  NodeConf c;
  c.ledger_dsn = ledger.dsn();
  Node node(c);
  node.start();
  mr::MrClient a(node.base_url(), env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
  const auto r = a.get("/api/v1/members/" + unique("rid") + "/balance");
  EXPECT_ERROR(r, 500, "internal_error");
  const std::string id = header(r, "x-request-id");
  cr_assert(!id.empty());
  std::string line;
  for (int i = 0; i < 40 && line.empty(); ++i) {
    line = line_with(node.log(), "mr_ledger: statement failed");
    if (line.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  cr_expect(line.find("[error]") != std::string::npos, "%s", line.c_str());
  cr_expect(line.ends_with(", request_id: \"" + id + "\""), "not the answer's id %s: %s", id.c_str(), line.c_str());
  // The twin: a request that logs nothing leaves no line with its id.
  const auto ok = mr::MrClient(node.ops_url(), "", "").send("GET", "/healthz", "", {});
  cr_expect_eq(ok.status, 200);
  cr_expect(node.log().find(header(ok, "x-request-id")) == std::string::npos);
}

Test(error_log, errors_found_after_the_http_block_point_at_their_directive) {
  struct Case {
    void (*edit)(NodeConf&);
    const char* says;
    const char* directive;
  };
  const Case cases[] = {
      {[](NodeConf& c) { c.http = "  mr_ledger_pool_size 0;\n"; }, "mr_ledger_pool_size must be 1..256",
       "mr_ledger_pool_size"},
      {[](NodeConf& c) { c.http = "  mr_ledger_settle_connections 300;\n"; },
       "mr_ledger_settle_connections must be 0..256", "mr_ledger_settle_connections"},
      {[](NodeConf& c) { c.redis = "mr_redis_username someone;"; }, "mr_redis_username needs mr_redis_password_file",
       "mr_redis_username"},
      {[](NodeConf& c) {
         c.environment = "production";
         c.http = "  mr_payout_simulator on;\n";
       },
       "mr_payout_simulator on settles payouts without a bank", "mr_payout_simulator"},
      {[](NodeConf& c) { c.api_location = "mr_ledger;"; }, "mr_ledger in location \"/api/\" has no \"mr_auth on\"",
       "mr_ledger;"},
      {[](NodeConf& c) { c.catalogue_dsn = ""; }, "mr_auth is on but mr_catalogue_dsn is not set", "mr_auth on"},
      {[](NodeConf& c) { c.master_key = "/nonexistent/master.key"; },
       "mr_master_key_file: /nonexistent/master.key: No such file", "mr_master_key_file"},
  };
  for (const auto& k : cases) {
    NodeConf conf;
    k.edit(conf);
    expect_at_line(conf, k.says, k.directive);
  }
  // The twin: the same node as written passes.
  const Run ok = Node(NodeConf{}).test();
  cr_expect_eq(ok.rc, 0, "%s", ok.out.c_str());
}
