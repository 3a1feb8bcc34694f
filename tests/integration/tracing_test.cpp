// A request's traceparent reaches PostgreSQL as the application_name of the
// connection that runs its statement, so pg_stat_activity (and log lines
// with %a in log_line_prefix) tie a slow statement to its request. SERIAL:
// nothing else may use the pool while the connection is looked at.
#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {

std::string capture(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
  cr_assert(p != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  for (size_t n; (n = fread(buf.data(), 1, buf.size(), p.get())) > 0;) out.append(buf.data(), n);
  return out;
}

// The last statement of each backend whose application_name is `name`.
std::string statements_named(const std::string& name) {
  return capture("psql '" + env("MR_DSN") + "' -tAc \"SELECT query FROM pg_stat_activity WHERE application_name = '" +
                 name + "'\"");
}

}  // namespace

Test(tracing, traceparent_reaches_postgresql) {
  auto c = client("A");
  const std::string trace = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  std::string id, seen;
  // The session keeps the name until its connection's next statement, and
  // the webhook engine's poll (every second) may be that statement: a few
  // tries, each a new traced write. Without the name, none is ever seen.
  for (int attempt = 0; attempt < 5 && seen.find("mr_write") == std::string::npos; ++attempt) {
    id = unique("trace");
    const std::string body = member_body("club-a", id);
    auto r = c.send("POST", "/api/v1/members", body, [&] {
      auto h = c.signed_headers("POST", "/api/v1/members", body);
      h.push_back({"Content-Type", "application/json"});
      h.push_back({"X-MR-Idempotency-Key", unique("idem")});
      h.push_back({"traceparent", trace});
      return h;
    }());
    cr_assert_eq(r.status, 201, "%s", r.body.c_str());
    seen = statements_named(trace);
  }
  cr_expect(seen.find("mr_write") != std::string::npos, "no backend ran mr_write as %s: [%s]", trace.c_str(),
            seen.c_str());

  // A later request without one runs under the DSN's name again: every
  // connection that served it carries no traceparent.
  for (int i = 0; i < 16; i++) cr_assert_eq(c.get("/api/v1/members/" + id + "/balance").status, 200);
  const std::string named = capture("psql '" + env("MR_DSN") +
                                    "' -tAc \"SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE '00-%' "
                                    "AND query LIKE '%mr_balance%'\"");
  cr_expect_eq(std::stoi(named), 0, "a traceparent stayed on an untraced statement");
}
