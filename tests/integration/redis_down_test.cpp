// With Redis stopped, POSTs keep working on the database alone, exactly
// once (contract section 3). Serial: it stops the stack's Redis.
#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"

using namespace mr::test;

Test(redis_down, database_alone_is_exact) {
  auto c = client("A");
  const std::string id = unique("mem");
  cr_assert_eq(c.post("/api/v1/members", member_body("club-a", id), unique("k")).status, 201);
  const std::string before = scrape();
  cr_assert_eq(sh(redis_cli() + "shutdown nosave >/dev/null 2>&1; sleep 0.2"), 0);

  const std::string key = unique("k"), body = settle_body("club-a", id, unique("tx"), 2000);
  auto first = c.post("/api/v1/transactions/settled", body, key);
  auto again = c.post("/api/v1/transactions/settled", body, key);
  auto conflict = c.post("/api/v1/transactions/settled", settle_body("club-a", id, unique("tx"), 1), key);
  auto bal = c.get("/api/v1/members/" + id + "/balance");
  const std::string during = scrape();

  // The stack's own configuration (port, password).
  cr_assert_eq(sh("redis-server '" + env("MR_REDIS_CONF") + "' >/dev/null && sleep 0.3"), 0);
  cr_expect_eq(first.status, 200, "%s", first.body.c_str());
  cr_expect_eq(again.status, 200);
  cr_expect_eq(again.body, first.body);
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  EXPECT_ERROR(conflict, 422, "duplicate_idempotency_conflict");
  cr_expect_eq(i64(data_of(bal), "pointsBalance"), 20);
  EXPECT_GREW(before, during, "mr_idempotency_requests_total{outcome=\"bypassed\"}", 3);
  cr_expect_geq(metric(during, "mr_redis_errors_total{kind=\"connect\"}") +
                    metric(during, "mr_redis_errors_total{kind=\"no_reply\"}") -
                    metric(before, "mr_redis_errors_total{kind=\"connect\"}") -
                    metric(before, "mr_redis_errors_total{kind=\"no_reply\"}"),
                3, "%s", during.c_str());
  // Redis back: the edge serves again (a new key is claimed and replayed).
  const std::string key2 = unique("k"), body2 = settle_body("club-a", id, unique("tx"), 1000);
  mr::HttpResponse r1;
  for (int i = 0; i < 20; ++i) {
    r1 = c.post("/api/v1/transactions/settled", body2, key2);
    if (r1.status == 200) break;
  }
  cr_expect_eq(r1.status, 200);
  cr_expect_eq(c.post("/api/v1/transactions/settled", body2, key2).body, r1.body);
}

// A claim that Redis runs after its answer timed out (Redis busy for longer
// than mr_redis_timeout) is owned by no request: the request went on to the
// database. It must not hold the key until mr_idempotency_lock_ttl (60 s),
// answering idempotency_in_progress to every retry. Here, where no other
// test flushes Redis meanwhile.
Test(redis_down, a_claim_whose_answer_timed_out_does_not_hold_the_key) {
  auto c = client("A");
  const std::string id = onboard_member(c, "club-a");
  const std::string key = unique("k"), body = settle_body("club-a", id, unique("tx"), 3000);
  // A script keeps Redis busy for 0.6 s; the claim waits behind it.
  const std::string busy =
      "local t = redis.call('TIME') local t0 = t[1] * 1000000 + t[2] "
      "repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - t0 > 600000 return 1";
  cr_assert_eq(sh(redis_cli() + "EVAL \"" + busy + "\" 0 >/dev/null 2>&1 &"), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto first = c.post("/api/v1/transactions/settled", body, key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  // Past the script, and past the client's pause before it reconnects.
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  auto again = c.post("/api/v1/transactions/settled", body, key);
  cr_expect_eq(again.status, 200, "%s", again.body.c_str());
  cr_expect_eq(again.body, first.body);
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_eq(points_balance(c, id), 30);
}
