// /readyz over pods (ledger/readiness): one pod answers as it always did;
// with several, ready only when all are, and each pod that is not is named.
#include <criterion/criterion.h>

#include <algorithm>
#include <string>

#include <rapidjson/document.h>

#include "ledger/readiness.hpp"
#include "ledger/sql/migrations.hpp"

namespace {

using namespace mr::ledger;

int newest() {
  int v = 0;
  for (const auto& m : mr::migrations()) v = std::max(v, m.version);
  return v;
}

rapidjson::Document parsed(const Response& r) {
  rapidjson::Document d;
  d.Parse(r.body.data(), r.body.size());
  cr_assert(!d.HasParseError() && d.IsObject(), "%s", r.body.c_str());
  return d;
}

}  // namespace

Test(readiness, one_pod_answers_as_before) {
  const std::string at = std::to_string(newest());
  Response r = render_readiness({readiness_of_version("home", at)}, "rid");
  cr_expect_eq(r.status, 200);
  cr_expect_eq(r.body, std::string(R"({"ok":true,"data":{"status":"ready"}})"));
  // A newer schema than the modules' is fine (a release rolling out).
  cr_expect_eq(render_readiness({readiness_of_version("home", std::to_string(newest() + 1))}, "rid").status, 200);
  r = render_readiness({readiness_of_version("home", "3")}, "rid");
  cr_expect_eq(r.status, 503);
  auto d = parsed(r);
  cr_expect_eq(std::string(d["error"]["code"].GetString()), "service_unavailable");
  cr_expect_eq(std::string(d["error"]["message"].GetString()),
               "The ledger database's schema is at migration 3, these modules need " + at + ": run `mrctl migrate`.");
  cr_expect_eq(std::string(d["error"]["requestId"].GetString()), "rid");
  // undefined_table: no migration ever ran.
  d = parsed(render_readiness({readiness_of_sql_error("home", "42P01")}, "rid"));
  cr_expect(std::string(d["error"]["message"].GetString()).find("at migration 0,") != std::string::npos);
  cr_expect_eq(render_readiness({readiness_of_version("home", "x1")}, "rid").status, 503);
  cr_expect_eq(render_readiness({readiness_unavailable("home")}, "rid").status, 503);
}

Test(readiness, every_pod_must_be_ready_and_each_laggard_is_named) {
  const std::string at = std::to_string(newest());
  Response r = render_readiness({readiness_of_version("home", at), readiness_of_version("b", at)}, "rid");
  cr_expect_eq(r.status, 200);
  auto d = parsed(r);
  cr_expect_eq(std::string(d["data"]["status"].GetString()), "ready");
  cr_assert(d["data"]["pods"].IsArray() && d["data"]["pods"].Size() == 2);
  cr_expect_eq(std::string(d["data"]["pods"][1]["pod"].GetString()), "b");
  cr_expect_eq(std::string(d["data"]["pods"][1]["status"].GetString()), "ready");

  r = render_readiness(
      {readiness_of_version("home", at), readiness_unavailable("b"), readiness_of_version("c", "2")}, "rid");
  cr_expect_eq(r.status, 503);
  d = parsed(r);
  const std::string message = d["error"]["message"].GetString();
  cr_expect_eq(message, "Not ready: pod b: The ledger database cannot be reached.; pod c: The ledger database's "
                        "schema is at migration 2, these modules need " + at + ": run `mrctl migrate`.");
  cr_expect(message.find("pod home") == std::string::npos);
}
