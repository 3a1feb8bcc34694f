// Bounded chaos, on a stack of its own: while four clients award points and
// retry each award with its key, a worker is killed (kill -9), Redis is
// stopped without saving, PostgreSQL crashes (immediate restart), the stack
// is brought back (Redis started, nginx reloaded), a worker of the new
// generation is killed and Redis flushed. Afterwards every award that was
// started is in the ledger exactly once, every balance is the sum of its
// awards, and the audit is clean.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/retried_load.hpp"

using namespace mr::test;

namespace {
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(400)); }
}  // namespace

Test(chaos, awards_survive_killed_workers_redis_postgres_and_reload, .timeout = 120) {
  const std::string dir = env("MR_STACK_DIR");
  const std::string pg = pg_ctl(env("MR_PG_DATA"));
  // With the stack's password: without it redis-cli gets NOAUTH and still
  // exits 0, so the Redis steps below did nothing and the killed workers'
  // claims held their keys for the whole lock TTL. Each step checks Redis's
  // answer.
  const std::string redis = redis_cli();
  // The newest worker: after a reload, one of the new generation.
  const std::string kill_worker = "kill -9 $(pgrep -n -P $(cat '" + dir + "/nginx/logs/nginx.pid'))";

  auto c = client("A");
  const auto members = onboard_members(c, "chaos", 6);
  const std::string prefix = unique("chaos");
  auto awards = plan_awards(members, 1000, prefix);  // more than the chaos lasts
  std::atomic<int> acked{0};
  std::atomic<bool> never{false}, stop{false};
  std::thread load([&] { run_awards(awards, 4, {env("MR_BASE_URL")}, acked, never, &stop); });

  int rc[6];
  settle();
  // A killed worker may leave its request's key claimed in Redis; the Redis
  // restart (and later the flush) releases it before the lock would expire.
  rc[0] = sh(kill_worker);
  settle();
  rc[1] = sh(redis + "shutdown nosave >/dev/null 2>&1; ! " + redis + "PING >/dev/null 2>&1");
  settle();
  rc[2] = sh(pg + "-m immediate -w -l '" + dir + "/pg/postgres.log' restart >/dev/null");
  settle();
  rc[3] = sh(env("MR_REPO") + "/tools/stack.sh up '" + dir + "' >/dev/null");  // Redis back, nginx reloaded
  settle();
  rc[4] = sh(kill_worker);
  settle();
  rc[5] = sh(redis + "FLUSHALL | grep -qx OK");
  settle();
  const int acked_before_stop = acked;
  stop = true;
  load.join();

  for (int i = 0; i < 6; ++i) cr_expect_eq(rc[i], 0, "chaos step %d failed", i);
  cr_expect_lt(acked_before_stop, static_cast<int>(awards.size()), "the load ran out before the chaos ended");
  std::vector<Award> started;
  for (auto& a : awards) {
    if (a.attempts > 0) started.push_back(std::move(a));
  }
  cr_expect_gt(started.size(), 0u);
  expect_each_applied_once(c, started, prefix);
  const std::string faults = error_log_faults(dir, 0);  // a stack of its own
  cr_expect(faults.empty(), "nginx error log:\n%s", faults.c_str());
}
