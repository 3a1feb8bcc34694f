// The ops listener: health, readiness, metrics, payout listing and results
// over HTTP with the bearer token (contract sections 7 and 8).
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {

mr::HeaderList auth() {
  std::string token = mr::read_file(env("MR_OPS_TOKEN_FILE"));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  return {{"Authorization", "Bearer " + token}};
}

mr::MrClient ops() { return mr::MrClient(env("MR_OPS_URL"), "", ""); }

// A fresh redemption of 100 points on club-a; returns its payout id.
std::string new_payout(const std::string& account = "12345678") {
  auto c = client("A");
  const std::string id = unique("ops");
  std::string body = member_body("club-a", id);
  body.replace(body.find("12345678"), 8, account);
  cr_assert_eq(post(c, "/api/v1/members", body).status, 201);
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-a", id, unique("tx"), 10000)).status, 200);
  auto r = post(c, "/api/v1/redemptions",
                R"({"partnerRef":"club-a","requestId":")" + unique("rq") + R"(","member":{"externalMemberId":")" + id +
                    R"("},"redemption":{"points":100,"currency":"GBP"}})");
  cr_assert_eq(r.status, 202, "%s", r.body.c_str());
  return s(data_of(r)["payout"], "payoutId");
}

}  // namespace

Test(ops, health_ready_metrics) {
  auto o = ops();
  auto health = o.send("GET", "/healthz", "", {});
  cr_expect_eq(health.status, 200);
  cr_expect(!header(health, "x-request-id").empty());
  EXPECT_ERROR(o.send("GET", "/readyz", "", {}), 401, "unauthorized");
  EXPECT_ERROR(o.send("GET", "/metrics", "", {{"Authorization", "Bearer wrong-token-of-some-length"}}), 401,
               "unauthorized");
  cr_expect_eq(o.send("GET", "/readyz", "", auth()).status, 200);
  auto metrics = o.send("GET", "/metrics", "", auth());
  cr_expect_eq(metrics.status, 200);
  cr_expect_eq(mr::test::header(metrics, "content-type"), std::string("text/plain; version=0.0.4"));
  cr_expect(metrics.body.find("mr_payouts_open{status=\"created\"}") != std::string::npos, "%s", metrics.body.c_str());
  cr_expect(metrics.body.find("mr_club_points_pool{partner_ref=\"club-a\"}") != std::string::npos);
  EXPECT_ERROR(o.send("GET", "/nothing", "", auth()), 404, "not_found");
}

Test(ops, payout_results_over_http) {
  auto o = ops();
  const std::string po = new_payout();
  auto list = o.send("GET", "/payouts?status=created&limit=100", "", auth());
  cr_assert_eq(list.status, 200, "%s", list.body.c_str());
  cr_expect(list.body.find(po) != std::string::npos || data_of(list).IsArray());
  auto submitted = o.send("POST", "/payouts/" + po + "/submit", "", auth());
  cr_expect_eq(submitted.status, 200, "%s", submitted.body.c_str());
  cr_expect_eq(s(data_of(submitted)["payout"], "status"), std::string("submitted"));
  auto done = o.send("POST", "/payouts/" + po + "/succeed", "", auth());
  cr_expect_eq(done.status, 200);
  cr_expect_eq(s(data_of(done), "status"), std::string("completed"));
  cr_expect_eq(o.send("POST", "/payouts/" + po + "/succeed", "", auth()).status, 200, "same result: no-op");
  EXPECT_ERROR(o.send("POST", "/payouts/" + po + "/fail", R"({"reason":"late"})", auth()), 409,
               "payout_state_conflict");
  EXPECT_ERROR(o.send("POST", "/payouts/po_nothing/succeed", "", auth()), 404, "not_found");
  EXPECT_ERROR(o.send("GET", "/payouts/" + po + "/succeed", "", auth()), 405, "method_not_allowed");
  const std::string other = new_payout();
  EXPECT_ERROR(o.send("POST", "/payouts/" + other + "/fail", "{}", auth()), 400, "invalid_request");
  auto failed = o.send("POST", "/payouts/" + other + "/fail", R"({"reason":"closed account"})", auth());
  cr_expect_eq(failed.status, 200, "%s", failed.body.c_str());
  cr_expect_eq(s(data_of(failed)["payout"], "failureReason"), std::string("closed account"));
}

Test(ops, racing_results_move_once) {
  // Two reports at once: one succeed, one fail. Exactly one wins; the
  // books still balance.
  const std::string po = new_payout();
  std::atomic<int> ok{0}, conflict{0};
  std::vector<std::thread> threads;
  for (const char* verb : {"succeed", "fail", "succeed", "fail"}) {
    threads.emplace_back([&, verb] {
      auto o = ops();
      auto r = o.send("POST", "/payouts/" + po + "/" + verb, R"({"reason":"race"})", auth());
      if (r.status == 200) ok++;
      else if (r.status == 409) conflict++;
    });
  }
  for (auto& t : threads) t.join();
  cr_expect_eq(ok + conflict, 4);
  cr_expect_eq(conflict.load(), 2, "the losing result is refused both times");
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
}

// The webhook endpoints' operator view (contract section 10): list, failed
// attempts, disable (the queue pauses), enable (it resumes), replay.
Test(ops, webhook_endpoints_list_failures_disable_enable_replay) {
  auto o = ops();
  auto c = client("A");
  // An endpoint nobody listens on: every attempt fails, so it has failures.
  auto created = post(c, "/api/v1/webhook-endpoints",
                      R"({"partnerRef":"club-a","url":"http://127.0.0.1:9/ops-test","eventTypes":["member.created"]})");
  cr_assert_eq(created.status, 201, "%s", created.body.c_str());
  const std::string id = s(data_of(created), "endpointId");
  onboard_member(c, "club-a");  // one member.created for it

  auto list = o.send("GET", "/webhooks?partnerRef=club-a", "", auth());
  cr_assert_eq(list.status, 200, "%s", list.body.c_str());
  cr_expect(list.body.find("\"" + id + "\"") != std::string::npos, "%s", list.body.c_str());
  cr_expect(o.send("GET", "/webhooks?partnerRef=club-b", "", auth()).body.find(id) == std::string::npos,
            "club-b's list shows club-a's endpoint");
  EXPECT_ERROR(o.send("GET", "/webhooks?partnerRef=%01", "", auth()), 400, "invalid_request");
  EXPECT_ERROR(o.send("GET", "/webhooks", "", {}), 401, "unauthorized");
  EXPECT_ERROR(o.send("POST", "/webhooks", "", auth()), 405, "method_not_allowed");

  // The refused attempt shows among the failures (delivery is at once).
  bool failed = false;
  for (int i = 0; i < 100 && !failed; ++i) {
    auto f = o.send("GET", "/webhooks/failures?partnerRef=club-a&limit=100", "", auth());
    cr_assert_eq(f.status, 200, "%s", f.body.c_str());
    failed = f.body.find("\"" + id + "\"") != std::string::npos;
    if (!failed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  cr_expect(failed, "no failed attempt listed for %s", id.c_str());
  // The operator's views carry the detail (libcurl's message, the address
  // and port); the partner's deliveries name the rule alone.
  const std::string kDetail = "127.0.0.1 port 9";
  bool detailed = false;
  auto f = o.send("GET", "/webhooks/failures?partnerRef=club-a&limit=100", "", auth());
  const auto listed = data_of(f);
  for (const auto& a : listed.GetArray()) {
    if (s(a, "endpointId") != id) continue;
    cr_expect_eq(s(a, "error"), "the connection was refused", "%s", f.body.c_str());
    cr_assert(a.HasMember("detail") && a["detail"].IsString(), "%s", f.body.c_str());
    detailed = detailed || s(a, "detail").find(kDetail) != std::string::npos;
  }
  cr_expect(detailed, "no detail naming %s in %s", kDetail.c_str(), f.body.c_str());
  std::string mrctl_out;
  {
    FILE* p = ::popen((mrctl_cmd() + " webhook failures --ref club-a --limit 100").c_str(), "r");
    cr_assert(p != nullptr);
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) mrctl_out.append(buf, n);
    cr_expect_eq(::pclose(p), 0, "%s", mrctl_out.c_str());
  }
  cr_expect(mrctl_out.find(id) != std::string::npos && mrctl_out.find(kDetail) != std::string::npos,
            "mrctl webhook failures: %s", mrctl_out.c_str());
  auto deliveries = c.get("/api/v1/webhook-endpoints/" + id + "/deliveries");
  cr_assert_eq(deliveries.status, 200, "%s", deliveries.body.c_str());
  cr_expect(deliveries.body.find("the connection was refused") != std::string::npos, "%s", deliveries.body.c_str());
  cr_expect(deliveries.body.find("127.0.0.1") == std::string::npos &&
                deliveries.body.find("detail") == std::string::npos,
            "the partner sees the detail: %s", deliveries.body.c_str());

  auto disabled = o.send("POST", "/webhooks/" + id + "/disable", "", auth());
  cr_assert_eq(disabled.status, 200, "%s", disabled.body.c_str());
  cr_expect_eq(s(data_of(disabled), "status"), "disabled");
  cr_expect_eq(s(data_of(disabled), "disabledReason"), "manual");
  auto partner_view = c.get("/api/v1/webhook-endpoints/" + id);
  cr_expect_eq(s(data_of(partner_view), "status"), "disabled", "%s", partner_view.body.c_str());
  auto enabled = o.send("POST", "/webhooks/" + id + "/enable", "", auth());
  cr_assert_eq(enabled.status, 200, "%s", enabled.body.c_str());
  cr_expect_eq(s(data_of(enabled), "status"), "enabled");
  cr_expect(data_of(enabled)["disabledReason"].IsNull(), "%s", enabled.body.c_str());

  auto replay = o.send("POST", "/webhooks/" + id + "/replay", R"({"since":"2026-01-01T00:00:00Z"})", auth());
  cr_assert_eq(replay.status, 200, "%s", replay.body.c_str());
  cr_expect_geq(data_of(replay)["replayed"].GetInt64(), 1, "%s", replay.body.c_str());
  EXPECT_ERROR(o.send("POST", "/webhooks/" + id + "/replay", R"({"since":"yesterday"})", auth()), 400,
               "invalid_request");
  EXPECT_ERROR(o.send("POST", "/webhooks/we_none/enable", "", auth()), 404, "not_found");
  EXPECT_ERROR(o.send("GET", "/webhooks/" + id + "/enable", "", auth()), 405, "method_not_allowed");
  EXPECT_ERROR(o.send("POST", "/webhooks/" + id + "/nothing", "", auth()), 404, "not_found");

  cr_expect_eq(post(c, "/api/v1/webhook-endpoints/" + id + "/delete", R"({"partnerRef":"club-a"})").status, 200);
  EXPECT_ERROR(o.send("POST", "/webhooks/" + id + "/enable", "", auth()), 404, "not_found");
}
