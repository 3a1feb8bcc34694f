// The sandbox payout simulator: turned on by a reload, it settles payouts
// after the delay — success, except bank account 00000000 which fails.
// Serial: it reloads nginx with the simulator on, then off again.
#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {
std::string redeem_for(mr::MrClient& c, const std::string& account) {
  const std::string id = unique("sim");
  std::string body = member_body("club-a", id);
  body.replace(body.find("12345678"), 8, account);
  cr_assert_eq(post(c, "/api/v1/members", body).status, 201);
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-a", id, unique("tx"), 10000)).status, 200);
  auto r = post(c, "/api/v1/redemptions",
                R"({"partnerRef":"club-a","requestId":")" + unique("rq") + R"(","member":{"externalMemberId":")" + id +
                    R"("},"redemption":{"points":100,"currency":"GBP"}})");
  cr_assert_eq(r.status, 202, "%s", r.body.c_str());
  return s(data_of(r), "redemptionId");
}

std::string status_of(mr::MrClient& c, const std::string& redemption) {
  return s(data_of(c.get("/api/v1/redemptions/" + redemption)), "status");
}
}  // namespace

Test(simulator, settles_payouts_by_itself) {
  cr_assert_eq(sh("MR_PAYOUT_SIMULATOR=on MR_PAYOUT_SIMULATOR_DELAY=1s " + env("MR_RELOAD")), 0);
  auto c = client("A");
  const std::string good = redeem_for(c, "12345678"), bad = redeem_for(c, "00000000");
  std::string good_status, bad_status;
  for (int i = 0; i < 50; ++i) {
    good_status = status_of(c, good);
    bad_status = status_of(c, bad);
    if (good_status != "payout_pending" && bad_status != "payout_pending") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const int off = sh(env("MR_RELOAD"));
  cr_expect_eq(good_status, std::string("completed"));
  cr_expect_eq(bad_status, std::string("failed"));
  cr_expect_eq(off, 0);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
  // Off again: a new payout waits for an operator.
  const std::string waiting = redeem_for(c, "12345678");
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  cr_expect_eq(status_of(c, waiting), std::string("payout_pending"));
}
