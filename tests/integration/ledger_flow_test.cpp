// The ledger through the real nginx and PostgreSQL (contract sections 4-6):
// the spec's normal flow and every error code of these endpoints.
#include <climits>
#include <set>
#include <string>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {
const std::string kRef = "club-a";  // earn rate 100 bp, GBP and EUR

std::string onboard(mr::MrClient& c, bool bank = true) {
  const std::string id = unique("mem");
  auto r = post(c, "/api/v1/members", member_body(kRef, id, bank));
  cr_assert_eq(r.status, 201, "onboarding: %s", r.body.c_str());
  return id;
}
}  // namespace

Test(ledger, normal_flow) {
  auto c = client("A");
  const std::string id = unique("mem");
  auto created = post(c, "/api/v1/members", member_body(kRef, id));
  cr_assert_eq(created.status, 201, "%s", created.body.c_str());
  auto d = data_of(created);
  cr_expect_eq(s(d, "externalMemberId"), id);
  cr_expect_eq(s(d, "status"), std::string("created"));
  cr_expect(d["payoutReady"].IsTrue());

  auto updated = post(c, "/api/v1/members", member_body(kRef, id, false));
  cr_assert_eq(updated.status, 200, "%s", updated.body.c_str());
  cr_expect_eq(s(data_of(updated), "status"), std::string("updated"));
  // Updating without a wallet keeps the stored one.
  cr_expect(data_of(updated)["payoutReady"].IsTrue());

  const std::string tx = unique("tx");
  auto settled = post(c, "/api/v1/transactions/settled", settle_body(kRef, id, tx, 12345));
  cr_assert_eq(settled.status, 200, "%s", settled.body.c_str());
  auto sd = data_of(settled);
  cr_expect_eq(s(sd, "status"), std::string("processed"));
  cr_expect_eq(s(sd, "eventId"), "evt-" + tx);
  cr_expect_eq(s(sd, "externalTransactionId"), tx);
  cr_expect_eq(i64(sd, "pointsAwarded"), 123);  // floor(12345 * 100 / 10000)
  cr_expect_eq(i64(sd["balances"], "pointsBalance"), 123);
  cr_expect_eq(i64(sd["balances"], "reservedPointsBalance"), 0);
  cr_expect(sd["partner"]["availablePointsPool"].IsInt64());
  cr_expect_eq(s(sd, "ledgerGroupId").rfind("settled:", 0), 0u);
  cr_expect(s(sd, "ledgerGroupId").ends_with(":" + tx));

  auto balance = c.get("/api/v1/members/" + id + "/balance");
  cr_assert_eq(balance.status, 200, "%s", balance.body.c_str());
  auto bd = data_of(balance);
  cr_expect_eq(i64(bd, "pointsBalance"), 123);
  cr_expect_eq(i64(bd, "reservedPointsBalance"), 0);
  cr_expect_eq(i64(bd, "lifetimePointsEarned"), 123);
  cr_expect_eq(i64(bd, "lifetimePointsRedeemed"), 0);
  cr_expect_eq(s(bd, "memberStatus"), std::string("active"));
  cr_expect_eq(s(bd, "currency"), std::string("GBP"));
  cr_expect_eq(i64(bd, "cashValueMinor"), 123);  // redemption rate 1 minor per point

  auto points = c.get("/api/v1/members/" + id + "/points");
  cr_assert_eq(points.status, 200, "%s", points.body.c_str());
  auto pd = data_of(points);
  cr_assert_eq(pd["entries"].Size(), 1u);
  const auto& e = pd["entries"][0];
  cr_expect_eq(s(e, "entryType"), std::string("earn_award"));
  cr_expect_eq(i64(e, "pointsDelta"), 123);
  cr_expect_eq(i64(e, "pointsDeltaAvailable"), 123);
  cr_expect_eq(i64(e, "pointsDeltaReserved"), 0);
  cr_expect(e["cashValueMinor"].IsNull());
  cr_expect_eq(s(e, "id").rfind("le_", 0), 0u);
  cr_expect_eq(s(e, "merchantName"), std::string("Corner Shop"));
  cr_expect(s(e, "createdAt").ends_with("Z"));
  cr_expect_eq(s(e, "createdAt").size(), 24u);  // 2026-11-22T10:00:00.123Z
  cr_expect(pd["nextBefore"].IsNull());

  auto txs = c.get("/api/v1/members/" + id + "/transactions?limit=10");
  cr_assert_eq(txs.status, 200, "%s", txs.body.c_str());
  auto td = data_of(txs);
  cr_assert_eq(td["entries"].Size(), 1u);
  cr_expect_eq(s(td["entries"][0], "type"), std::string("settled"));
  cr_expect_eq(i64(td["entries"][0], "amountMinor"), 12345);
  cr_expect_eq(i64(td["entries"][0], "pointsDelta"), 123);
}

Test(ledger, partial_reversals_sum_to_full) {
  auto c = client("A");
  const std::string id = onboard(c);
  const std::string tx = unique("tx");
  // 999 minor at 100 bp = 9 points; reversing 333 three times gives 3 + 3 + 3.
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, tx, 999)).status, 200);
  std::int64_t reversed = 0;
  for (int i = 0; i < 3; ++i) {
    auto r = post(c, "/api/v1/transactions/reversed", reverse_body(kRef, id, tx, 333));
    cr_assert_eq(r.status, 200, "%s", r.body.c_str());
    auto d = data_of(r);
    reversed += i64(d, "pointsReversed");
    cr_expect_eq(s(d, "ledgerGroupId").rfind("reversed:", 0), 0u);
  }
  cr_expect_eq(reversed, 9);
  auto again = post(c, "/api/v1/transactions/reversed", reverse_body(kRef, id, tx, 0));
  EXPECT_ERROR(again, 409, "transaction_already_reversed");
  auto bd = data_of(c.get("/api/v1/members/" + id + "/balance"));
  cr_expect_eq(i64(bd, "pointsBalance"), 0);
  cr_expect_eq(i64(bd, "lifetimePointsEarned"), 0);
  auto reversed_only = data_of(c.get("/api/v1/members/" + id + "/points?filter=reversed"));
  cr_expect_eq(reversed_only["entries"].Size(), 3u);
  for (const auto& e : reversed_only["entries"].GetArray()) {
    cr_expect_eq(s(e, "entryType"), std::string("earn_reversal"));
  }
  auto earned_only = data_of(c.get("/api/v1/members/" + id + "/points?filter=earned"));
  cr_expect_eq(earned_only["entries"].Size(), 1u);
  auto txs = data_of(c.get("/api/v1/members/" + id + "/transactions"));
  cr_expect_eq(txs["entries"].Size(), 4u);
  cr_expect_eq(s(txs["entries"][0], "type"), std::string("reversed"));
  cr_expect_eq(i64(txs["entries"][0], "amountMinor"), 333);
  cr_expect_eq(i64(txs["entries"][0], "pointsDelta"), -3);
  cr_expect(!txs["entries"][0].HasMember("settledAt") || txs["entries"][0]["settledAt"].IsNull());
}

Test(ledger, whole_reversal_without_amount) {
  auto c = client("A");
  const std::string id = onboard(c);
  const std::string tx = unique("tx");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, tx, 1000000000000)).status, 200);
  auto r = post(c, "/api/v1/transactions/reversed", reverse_body(kRef, id, tx, 0));
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  cr_expect_eq(i64(data_of(r), "pointsReversed"), 10000000000);  // 10^12 * 100 / 10000
  cr_expect_eq(i64(data_of(r)["balances"], "pointsBalance"), 0);
}

Test(ledger, settle_errors) {
  auto c = client("A");
  const std::string id = onboard(c);
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body("club-b", id, unique("tx"), 100)), 404,
               "partner_not_found");
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body(kRef, unique("ghost"), unique("tx"), 100)),
               404, "cardholder_not_found");
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, unique("tx"), 100, "JPY")), 422,
               "unsupported_currency");
  const std::string tx = unique("tx");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, tx, 100)).status, 200);
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, tx, 100)), 409,
               "duplicate_transaction");
  // Unique per club across members.
  const std::string other = onboard(c);
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body(kRef, other, tx, 100)), 409,
               "duplicate_transaction");
  // Zero points is a valid award.
  auto zero = post(c, "/api/v1/transactions/settled", settle_body(kRef, id, unique("tx"), 99));
  cr_assert_eq(zero.status, 200, "%s", zero.body.c_str());
  cr_expect_eq(i64(data_of(zero), "pointsAwarded"), 0);
}

Test(ledger, insufficient_pool_is_exact) {
  // club-c: 10000 bp and a pool of exactly 1000 points.
  auto c = client("C");
  const std::string id = unique("mem");
  cr_assert_eq(post(c, "/api/v1/members", member_body("club-c", id)).status, 201);
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body("club-c", id, unique("tx"), 1001)), 422,
               "insufficient_partner_points_pool");
  auto all = post(c, "/api/v1/transactions/settled", settle_body("club-c", id, unique("tx"), 1000));
  cr_assert_eq(all.status, 200, "%s", all.body.c_str());
  cr_expect_eq(i64(data_of(all)["partner"], "availablePointsPool"), 0);
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body("club-c", id, unique("tx"), 1)), 422,
               "insufficient_partner_points_pool");
}

Test(ledger, reversal_errors) {
  auto c = client("A");
  const std::string id = onboard(c);
  const std::string other = onboard(c);
  const std::string tx = unique("tx");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, tx, 5000)).status, 200);
  EXPECT_ERROR(post(c, "/api/v1/transactions/reversed", reverse_body("club-b", id, tx, 1)), 404, "partner_not_found");
  EXPECT_ERROR(post(c, "/api/v1/transactions/reversed", reverse_body(kRef, unique("ghost"), tx, 1)), 404,
               "cardholder_not_found");
  EXPECT_ERROR(post(c, "/api/v1/transactions/reversed", reverse_body(kRef, id, unique("tx"), 1)), 404,
               "transaction_not_found");
  EXPECT_ERROR(post(c, "/api/v1/transactions/reversed", reverse_body(kRef, other, tx, 1)), 404,
               "transaction_not_found");
  EXPECT_ERROR(post(c, "/api/v1/transactions/reversed", reverse_body(kRef, id, tx, 1, "EUR")), 400,
               "invalid_request");
  EXPECT_ERROR(post(c, "/api/v1/transactions/reversed", reverse_body(kRef, id, tx, 5001)), 422,
               "reversal_exceeds_settled_amount");
}

Test(ledger, validation_details) {
  auto c = client("A");
  auto r = post(c, "/api/v1/members",
                R"({"partnerRef":"club-a","member":{"externalMemberId":"x","firstName":"A","lastName":"B"}})");
  EXPECT_ERROR(r, 400, "invalid_request");
  auto d = parse_json(r.body);
  cr_assert(d["error"].HasMember("details") && d["error"]["details"].IsArray());
  bool email = false;
  for (const auto& p : d["error"]["details"].GetArray()) {
    if (std::string(p["field"].GetString()) == "member.email") email = true;
  }
  cr_expect(email, "details do not name member.email: %s", r.body.c_str());
  EXPECT_ERROR(post(c, "/api/v1/members", "{not json"), 400, "invalid_request");
  EXPECT_ERROR(post(c, "/api/v1/members", R"({"partnerRef":"club-a","clubId":1,"member":{}})"), 400,
               "invalid_request");
  const std::string id = onboard(c);
  std::string fraction = settle_body(kRef, id, unique("tx"), 100);
  fraction.replace(fraction.find("\"amountMinor\":100"), 17, "\"amountMinor\":100.0");
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", fraction), 400, "invalid_request");
  EXPECT_ERROR(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, unique("tx"), 1000000000001)), 400,
               "invalid_request");
  EXPECT_ERROR(c.get("/api/v1/members/" + id + "/points?limit=0"), 400, "invalid_request");
  EXPECT_ERROR(c.get("/api/v1/members/" + id + "/points?filter=bogus"), 400, "invalid_request");
}

Test(ledger, routing) {
  auto c = client("A");
  EXPECT_ERROR(c.get("/api/v1/nothing-here"), 404, "not_found");
  EXPECT_ERROR(c.get("/api/v1/transactions/settled"), 405, "method_not_allowed");
  EXPECT_ERROR(c.get("/api/v1/members/" + unique("ghost") + "/balance"), 404, "cardholder_not_found");
  EXPECT_ERROR(c.get("/api/v1/members/" + unique("ghost") + "/points"), 404, "cardholder_not_found");
  EXPECT_ERROR(c.get("/api/v1/members/" + unique("ghost") + "/transactions"), 404, "cardholder_not_found");
}

Test(ledger, clubs_never_see_each_other) {
  auto a = client("A");
  auto b = client("B");
  const std::string id = onboard(a);
  EXPECT_ERROR(b.get("/api/v1/members/" + id + "/balance"), 404, "cardholder_not_found");
}

Test(ledger, paging_250_entries) {
  auto c = client("A");
  const std::string id = onboard(c);
  // 250 entries through mrctl adjustments: quick, and each is one entry.
  const std::string cmd = "seq 250 | xargs -P 4 -I{} " + mrctl_cmd() +
                          " member adjust --ref " + kRef + " --member " + id +
                          " --points 1 --reason paging >/dev/null";
  cr_assert_eq(sh(cmd), 0);
  std::set<std::string> seen;
  std::int64_t last_ms = INT64_MAX;
  std::string before;
  int pages = 0;
  for (;;) {
    auto r = c.get("/api/v1/members/" + id + "/points?limit=100" + (before.empty() ? "" : "&before=" + before));
    cr_assert_eq(r.status, 200, "%s", r.body.c_str());
    auto d = data_of(r);
    ++pages;
    for (const auto& e : d["entries"].GetArray()) {
      cr_expect(seen.insert(s(e, "id")).second, "entry twice: %s", s(e, "id").c_str());
      cr_expect_eq(s(e, "entryType"), std::string("manual_adjustment"));
    }
    if (d["nextBefore"].IsNull()) break;
    cr_assert(d["nextBefore"].IsInt64());
    cr_expect(d["nextBefore"].GetInt64() < last_ms, "cursor does not move back");
    last_ms = d["nextBefore"].GetInt64();
    before = std::to_string(last_ms);
    cr_assert(pages < 10);
  }
  cr_expect_eq(seen.size(), 250u);
  cr_expect_eq(pages, 3);
  auto adjusted = data_of(c.get("/api/v1/members/" + id + "/points?filter=adjusted&limit=1"));
  cr_expect_eq(adjusted["entries"].Size(), 1u);
  auto earned = data_of(c.get("/api/v1/members/" + id + "/points?filter=earned"));
  cr_expect_eq(earned["entries"].Size(), 0u);
}
