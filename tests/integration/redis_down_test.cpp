// With Redis stopped, POSTs keep working on the database alone, exactly
// once (contract section 3). Serial: it stops the stack's Redis.
#include <string>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"

using namespace mr::test;

Test(redis_down, database_alone_is_exact) {
  auto c = client("A");
  const std::string id = unique("mem");
  cr_assert_eq(c.post("/api/v1/members", member_body("club-a", id), unique("k")).status, 201);
  const std::string port = env("MR_REDIS_PORT");
  const std::string before = scrape();
  cr_assert_eq(sh("redis-cli -h 127.0.0.1 -p " + port + " shutdown nosave >/dev/null 2>&1; sleep 0.2"), 0);

  const std::string key = unique("k"), body = settle_body("club-a", id, unique("tx"), 2000);
  auto first = c.post("/api/v1/transactions/settled", body, key);
  auto again = c.post("/api/v1/transactions/settled", body, key);
  auto conflict = c.post("/api/v1/transactions/settled", settle_body("club-a", id, unique("tx"), 1), key);
  auto bal = c.get("/api/v1/members/" + id + "/balance");
  const std::string during = scrape();

  const std::string dir = env("MR_STACK_DIR");
  cr_assert_eq(sh("redis-server --bind 127.0.0.1 --port " + port + " --dir '" + dir +
                  "/redis' --daemonize yes --save '' --appendonly no --logfile '" + dir +
                  "/redis/redis.log' >/dev/null && sleep 0.3"), 0);
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
