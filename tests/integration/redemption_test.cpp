// Redemptions, payouts and closing members through the real stack
// (contract sections 4 and 7).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {

std::string redeem_body(const std::string& ref, const std::string& member, const std::string& request_id,
                        const std::string& points, const std::string& currency = "GBP") {
  return R"({"partnerRef":")" + ref + R"(","requestId":")" + request_id + R"(","member":{"externalMemberId":")" +
         member + R"("},"redemption":{"points":)" + points + R"(,"currency":")" + currency + R"("}})";
}

// A member of `ref` holding `points` available points (earn rate 100 bp).
std::string member_with_points(mr::MrClient& c, const std::string& ref, std::int64_t points, bool bank = true) {
  const std::string id = unique("red");
  cr_assert_eq(post(c, "/api/v1/members", member_body(ref, id, bank)).status, 201);
  if (points > 0) {
    auto r = post(c, "/api/v1/transactions/settled", settle_body(ref, id, unique("tx"), points * 100));
    cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  }
  return id;
}

int payout(const std::string& verb, const std::string& id, const std::string& extra = "") {
  return sh(mrctl_cmd() + " payout " + verb + " --payout-id " + id + " " + extra + " >/dev/null 2>&1");
}

rapidjson::Document balance(mr::MrClient& c, const std::string& id) {
  return data_of(c.get("/api/v1/members/" + id + "/balance"));
}

// The member's balance once its redemptions are settled or released.
void expect_balances(mr::MrClient& c, const std::string& id, std::int64_t available, std::int64_t reserved,
                     std::int64_t redeemed) {
  auto b = balance(c, id);
  cr_expect_eq(i64(b, "pointsBalance"), available);
  cr_expect_eq(i64(b, "reservedPointsBalance"), reserved);
  cr_expect_eq(i64(b, "lifetimePointsRedeemed"), redeemed);
}

rapidjson::Document points_of(mr::MrClient& c, const std::string& id, const std::string& filter) {
  return data_of(c.get("/api/v1/members/" + id + "/points?filter=" + filter));
}

}  // namespace

Test(redemption, flow_until_completed) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 1000);
  const std::string rid = unique("rq");
  auto r = post(c, "/api/v1/redemptions", redeem_body("club-a", id, rid, "400"));
  cr_assert_eq(r.status, 202, "%s", r.body.c_str());
  auto d = data_of(r);
  cr_expect_eq(s(d, "status"), std::string("payout_pending"));
  cr_expect_eq(i64(d, "pointsRedeemed"), 400);
  cr_expect_eq(i64(d, "cashValueMinor"), 400);
  cr_expect_eq(s(d, "currency"), std::string("GBP"));
  cr_expect_eq(s(d["payout"], "status"), std::string("created"));
  cr_expect_eq(i64(d["balances"], "pointsBalance"), 600);
  cr_expect_eq(i64(d["balances"], "reservedPointsBalance"), 400);
  const std::string redemption = s(d, "redemptionId"), po = s(d["payout"], "payoutId");
  cr_expect_eq(redemption.rfind("rdm_", 0), 0u);
  cr_expect_eq(po.rfind("po_", 0), 0u);

  auto status = data_of(c.get("/api/v1/redemptions/" + redemption));
  cr_expect_eq(s(status, "status"), std::string("payout_pending"));
  cr_expect_eq(s(status, "requestId"), rid);
  cr_expect_eq(s(status["payout"], "status"), std::string("created"));
  EXPECT_ERROR(client("B").get("/api/v1/redemptions/" + redemption), 404, "redemption_not_found");

  cr_assert_eq(payout("submit", po), 0);
  cr_assert_eq(payout("succeed", po), 0);
  cr_expect_eq(payout("succeed", po), 0, "the same result again is a no-op");
  cr_expect_neq(payout("fail", po, "--reason late"), 0, "a contradicting result is refused");
  status = data_of(c.get("/api/v1/redemptions/" + redemption));
  cr_expect_eq(s(status, "status"), std::string("completed"));
  cr_expect_eq(s(status["payout"], "status"), std::string("succeeded"));
  expect_balances(c, id, 600, 0, 400);
  auto reserved = points_of(c, id, "reserved");
  cr_expect_eq(reserved["entries"].Size(), 1u);
  cr_expect_eq(i64(reserved["entries"][0], "cashValueMinor"), 400);
  auto redeemed = points_of(c, id, "redeemed");
  cr_expect_eq(redeemed["entries"].Size(), 1u);
  cr_expect_eq(i64(redeemed["entries"][0], "pointsDelta"), -400);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
}

Test(redemption, failed_payout_gives_everything_back) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 500);
  auto r = post(c, "/api/v1/redemptions", redeem_body("club-a", id, unique("rq"), "300"));
  cr_assert_eq(r.status, 202, "%s", r.body.c_str());
  const std::string po = s(data_of(r)["payout"], "payoutId"), redemption = s(data_of(r), "redemptionId");
  cr_assert_eq(payout("fail", po, "--reason 'account closed'"), 0);
  cr_expect_eq(payout("fail", po, "--reason again"), 0);
  cr_expect_neq(payout("succeed", po), 0);
  auto status = data_of(c.get("/api/v1/redemptions/" + redemption));
  cr_expect_eq(s(status, "status"), std::string("failed"));
  cr_expect_eq(s(status["payout"], "failureReason"), std::string("account closed"));
  expect_balances(c, id, 500, 0, 0);
  auto released = points_of(c, id, "released");
  cr_expect_eq(released["entries"].Size(), 1u);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
}

Test(redemption, every_error_code) {
  auto a = client("A");
  const std::string rich = member_with_points(a, "club-a", 1000);
  const auto redeem = [&](mr::MrClient& c, const std::string& ref, const std::string& id, const std::string& pts,
                          const std::string& cur = "GBP") {
    return post(c, "/api/v1/redemptions", redeem_body(ref, id, unique("rq"), pts, cur));
  };
  auto f = client("F");
  const std::string fid = member_with_points(f, "club-f", 0);
  EXPECT_ERROR(redeem(f, "club-f", fid, "100"), 422, "partner_configuration_incomplete");
  EXPECT_ERROR(redeem(a, "club-b", rich, "100"), 404, "partner_not_found");
  EXPECT_ERROR(redeem(a, "club-a", unique("ghost"), "100"), 404, "cardholder_not_found");
  EXPECT_ERROR(redeem(a, "club-a", rich, "0"), 422, "invalid_redemption_points");
  EXPECT_ERROR(redeem(a, "club-a", rich, "1000000001"), 422, "invalid_redemption_points");
  EXPECT_ERROR(redeem(a, "club-a", rich, "1.5"), 400, "invalid_request");
  EXPECT_ERROR(redeem(a, "club-a", rich, "99"), 422, "minimum_redemption");
  const std::string nobank = member_with_points(a, "club-a", 1000, false);
  EXPECT_ERROR(redeem(a, "club-a", nobank, "100"), 422, "missing_payout_reference");
  EXPECT_ERROR(redeem(a, "club-a", rich, "1001"), 422, "insufficient_points_balance");
  EXPECT_ERROR(redeem(a, "club-a", rich, "100", "EUR"), 422, "invalid_redemption_value");
  auto g = client("G");
  const std::string gid = member_with_points(g, "club-g", 1000);
  EXPECT_ERROR(redeem(g, "club-g", gid, "100"), 422, "partner_funding_restricted");
  auto d = client("D");  // club-d has no cash capacity
  const std::string did = unique("red");
  cr_assert_eq(post(d, "/api/v1/members", member_body("club-d", did)).status, 201);
  cr_assert_eq(post(d, "/api/v1/transactions/settled", settle_body("club-d", did, unique("tx"), 500)).status, 200);
  EXPECT_ERROR(redeem(d, "club-d", did, "500"), 422, "insufficient_partner_cash_capacity");
  const std::string rid = unique("rq");
  cr_assert_eq(post(a, "/api/v1/redemptions", redeem_body("club-a", rich, rid, "100")).status, 202);
  EXPECT_ERROR(post(a, "/api/v1/redemptions", redeem_body("club-a", rich, rid, "100")), 409, "duplicate_request_id");
  auto b = balance(a, rich);
  cr_expect_eq(i64(b, "pointsBalance"), 900, "only the accepted redemption reserved points");
  cr_expect_eq(i64(b, "reservedPointsBalance"), 100);
  EXPECT_ERROR(a.get("/api/v1/redemptions/rdm_nothing"), 404, "redemption_not_found");
}

Test(redemption, close_member) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 700);
  auto r = post(c, "/api/v1/redemptions", redeem_body("club-a", id, unique("rq"), "200"));
  cr_assert_eq(r.status, 202);
  const std::string po = s(data_of(r)["payout"], "payoutId");
  const std::string close_path = "/api/v1/members/" + id + "/close";
  EXPECT_ERROR(post(c, close_path, R"({"partnerRef":"club-a"})"), 409, "member_has_pending_redemptions");
  cr_assert_eq(payout("succeed", po), 0);
  auto closed = post(c, close_path, R"({"partnerRef":"club-a","reason":"left the club"})");
  cr_assert_eq(closed.status, 200, "%s", closed.body.c_str());
  auto d = data_of(closed);
  cr_expect_eq(s(d, "status"), std::string("closed"));
  cr_expect_eq(i64(d, "pointsForfeited"), 500);
  cr_expect(s(d, "closedAt").ends_with("Z"));
  EXPECT_ERROR(post(c, close_path, R"({"partnerRef":"club-a"})"), 409, "member_closed");
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body("club-a", id, unique("tx"), 100)), 409,
               "member_closed");
  EXPECT_ERROR(post(c, "/api/v1/members", member_body("club-a", id)), 409, "member_closed");
  EXPECT_ERROR(post(c, "/api/v1/redemptions", redeem_body("club-a", id, unique("rq"), "100")), 409, "member_closed");
  EXPECT_ERROR(post(c, "/api/v1/transactions/reversed", reverse_body("club-a", id, unique("tx"), 1)), 409,
               "member_closed");
  auto b = balance(c, id);
  cr_expect_eq(s(b, "memberStatus"), std::string("closed"));
  cr_expect_eq(i64(b, "pointsBalance"), 0);
  auto adjusted = points_of(c, id, "adjusted");
  cr_expect_eq(adjusted["entries"].Size(), 1u);
  cr_expect_eq(s(adjusted["entries"][0], "entryType"), std::string("close_forfeit"));
  EXPECT_ERROR(post(c, "/api/v1/members/" + unique("ghost") + "/close", R"({"partnerRef":"club-a"})"), 404,
               "cardholder_not_found");
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
}

Test(redemption, parallel_redemptions_never_overdraw) {
  auto c0 = client("A");
  const std::string id = member_with_points(c0, "club-a", 1000);
  Tally tally{202, "insufficient_points_balance"};
  race(tally, "A", 4, 5, [&](MrClient& c, int) {
    return c.post("/api/v1/redemptions", redeem_body("club-a", id, unique("rq"), "100"), unique("k"));
  });
  // 20 requests of 100 for 1000 points: exactly 10 fit.
  cr_expect_eq(tally.ok.load(), 10);
  cr_expect_eq(tally.refused.load(), 10);
  cr_expect_eq(tally.other.load(), 0);
  auto b = balance(c0, id);
  cr_expect_eq(i64(b, "pointsBalance"), 0);
  cr_expect_eq(i64(b, "reservedPointsBalance"), 1000);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
}

Test(redemption, parallel_redemptions_never_exceed_cash_capacity) {
  // club-h: capacity 700 minor at 1 minor per point; two members with 1000
  // points each race 20 redemptions of 100: exactly seven fit.
  auto c0 = client("H");
  const std::string m1 = member_with_points(c0, "club-h", 10), m2 = member_with_points(c0, "club-h", 10);
  // 10000 bp: 10 points * 100 minor each = 1000 points.
  cr_assert_eq(i64(balance(c0, m1), "pointsBalance"), 1000);
  Tally tally{202, "insufficient_partner_cash_capacity"};
  race(tally, "H", 4, 5, [&](MrClient& c, int t) {
    return c.post("/api/v1/redemptions", redeem_body("club-h", t % 2 ? m1 : m2, unique("rq"), "100"), unique("k"));
  });
  cr_expect_eq(tally.ok.load(), 7);
  cr_expect_eq(tally.refused.load(), 13);
  cr_expect_eq(tally.other.load(), 0);
  cr_expect_eq(i64(balance(c0, m1), "reservedPointsBalance") + i64(balance(c0, m2), "reservedPointsBalance"), 700);
  const std::string out = env("MR_STACK_DIR") + "/club-h.json";
  cr_assert_eq(sh(mrctl_cmd() + " club show --ref club-h > '" + out + "'"), 0);
  auto club = mr::parse_json(mr::read_file(out));
  cr_expect_eq(club["cashCapacityMinor"].GetInt64(), 0);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
}
