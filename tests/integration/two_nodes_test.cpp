// Two nginx nodes (own prefixes and ports: the fixture's stack and node2) on
// one PostgreSQL and one Redis: nodes keep no state of their own.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/integration/retried_load.hpp"

using namespace mr::test;

// Eight clients, four per node, send the same key and body at once, each
// retrying until it has its answer: exactly one is applied, the other seven
// are replays of that same answer. Twelve rounds.
Test(two_nodes, same_key_raced_across_nodes_awards_once) {
  auto c = client("A");
  const auto members = onboard_members(c, "race2", 1);
  const std::string prefix = unique("race2");
  auto plan = plan_awards(members, 12, prefix);
  const std::vector<std::string> urls{env("MR_BASE_URL"), env("MR_NODE2_BASE_URL")};
  for (auto& round : plan) {
    std::vector<Award> racers(8, round);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        MrClient mine(urls[t % 2], env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
        ready++;
        while (ready < 8) std::this_thread::yield();
        apply_with_retries(racers[t], [&](int) -> MrClient& { return mine; });
      });
    }
    for (auto& th : threads) th.join();
    int fresh = 0;
    for (const auto& r : racers) {
      cr_expect(r.acked, "%s: %s", r.tx.c_str(), r.unexpected.c_str());
      if (r.acked && !r.replayed) fresh++;
      // Replays carry the first answer, request id included.
      cr_expect_eq(r.final_body, racers[0].final_body, "%s: answers differ", r.tx.c_str());
    }
    cr_expect_eq(fresh, 1, "%s: %d answers were not replays", round.tx.c_str(), fresh);
    round.acked = racers[0].acked;
  }
  expect_each_applied_once(c, plan, prefix);
}

// Four clients spread their awards over both nodes (a retry goes to the
// other node) while node 2 is reloaded three times: every award, retried
// with its key, is applied exactly once; node 1 was never restarted.
Test(two_nodes, reload_one_node_while_other_serves_loses_nothing) {
  auto c = client("A");
  const auto members = onboard_members(c, "rl2", 4);
  const std::string prefix = unique("rl2");
  auto awards = plan_awards(members, 40, prefix);
  const std::string node1 = env("MR_STACK_DIR"), node2 = env("MR_NODE2_STACK_DIR");
  const std::string node1_pids = nginx_pids(node1), node2_pids = nginx_pids(node2);
  const std::size_t log1 = error_log(node1).size(), log2 = error_log(node2).size();

  AwardsUnderFault load(awards, {env("MR_BASE_URL"), env("MR_NODE2_BASE_URL")});
  load.wait_for(20);
  const int acked_at_first_reload = load.acked();
  int reload_rc = 0;
  for (int i = 0; i < 3; ++i) reload_rc |= sh(env("MR_NODE2_RELOAD") + " >/dev/null");
  load.fault();
  load.join();

  cr_expect_eq(reload_rc, 0);
  cr_expect_lt(acked_at_first_reload, static_cast<int>(awards.size()), "the load was over before the reloads");
  expect_each_applied_once(c, awards, prefix);
  cr_expect_eq(nginx_pids(node1), node1_pids, "node 1 was restarted or lost a worker");
  cr_expect_neq(nginx_pids(node2), node2_pids, "node 2 was not reloaded");
  for (const auto& [dir, from] : {std::pair{node1, log1}, std::pair{node2, log2}}) {
    const std::string faults = error_log_faults(dir, from);
    cr_expect(faults.empty(), "%s error log:\n%s", dir.c_str(), faults.c_str());
  }
}

// A retry sent to the other node as soon as the answer came replays it. The
// answer is stored in Redis before it goes out, but on node 1's connection:
// Redis may read node 2's claim first when both arrive in one pass of its
// event loop, and node 2 then saw the pending record and answered
// idempotency_in_progress (about one retry in 160 here). Node 2 now asks
// Redis once more before answering that.
Test(two_nodes, a_retry_on_the_other_node_right_after_the_answer_replays_it) {
  auto c = client("A");
  const std::string id = onboard_member(c, "club-a");
  MrClient node2(env("MR_NODE2_BASE_URL"), env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
  int wrong = 0;
  std::string first_wrong;
  for (int i = 0; i < 400; ++i) {
    const std::string key = unique("k2n"), body = settle_body("club-a", id, unique("tx2n"), 100);
    auto first = c.post("/api/v1/transactions/settled", body, key);
    cr_assert_eq(first.status, 200, "%s", first.body.c_str());
    auto again = node2.post("/api/v1/transactions/settled", body, key);
    if (again.status != 200 || again.body != first.body || header(again, "x-mr-idempotent-replay") != "true") {
      if (wrong++ == 0) first_wrong = std::to_string(again.status) + " " + again.body;
    }
  }
  cr_expect_eq(wrong, 0, "%d of 400 retries were not replays; the first: %s", wrong, first_wrong.c_str());
  cr_expect_eq(points_balance(c, id), 400);
}

// Contract §3: the same key while the first request is still being
// processed is idempotency_in_progress with Retry-After: 1 (the confirming
// GET above must still say so when the record really is pending), and once
// the first is answered, a retry replays it. A session holding the
// member's row for 3 s keeps the first request inside PostgreSQL.
Test(two_nodes, a_duplicate_while_the_first_runs_is_in_progress_then_replays) {
  auto c = client("A");
  const std::string id = onboard_member(c, "club-a");
  const std::string key = unique("kip"), body = settle_body("club-a", id, unique("txip"), 500);
  const std::string psql = "psql '" + env("MR_DSN") + "' -XAtq ";
  sh(psql + "-c \"BEGIN; SELECT 1 FROM members WHERE external_id = '" + id +
     "' FOR UPDATE; SELECT pg_sleep(3); COMMIT\" >/dev/null 2>&1 &");
  cr_assert_eq(sh("for i in $(seq 100); do " + psql +
                  "-c \"SELECT 1 FROM pg_stat_activity WHERE wait_event = 'PgSleep'\" | grep -q 1 && exit 0; "
                  "sleep 0.02; done; exit 1"),
               0, "the row lock was not taken");
  HttpResponse first;
  std::thread running([&] { first = c.post("/api/v1/transactions/settled", body, key); });
  // Its claim is in Redis: the pending record.
  const int claimed = sh("for i in $(seq 200); do [ -n \"$(" + redis_cli() + "--scan --pattern 'mr:idem:*:" + key +
                         "')\" ] && exit 0; sleep 0.01; done; exit 1");
  MrClient node2(env("MR_NODE2_BASE_URL"), env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
  auto during = node2.post("/api/v1/transactions/settled", body, key);
  running.join();
  cr_assert_eq(claimed, 0, "no claim in Redis");
  EXPECT_ERROR(during, 409, "idempotency_in_progress");
  cr_expect_eq(header(during, "retry-after"), std::string("1"));
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  auto after = node2.post("/api/v1/transactions/settled", body, key);
  cr_expect_eq(after.status, 200);
  cr_expect_eq(after.body, first.body);
  cr_expect_eq(header(after, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_eq(points_balance(c, id), 5);
}
