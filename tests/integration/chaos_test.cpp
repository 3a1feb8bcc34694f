// Bounded chaos, on a stack of its own: while four clients award points and
// retry each award with its key, a worker is killed (kill -9), Redis is
// stopped without saving, PostgreSQL crashes (immediate restart), the stack
// is brought back (Redis started, nginx reloaded), a worker of the new
// generation is killed and Redis flushed. Afterwards every award that was
// started is in the ledger exactly once, every balance is the sum of its
// awards, and the audit is clean. And a crash under a batch of settles
// answers each of them truthfully: applied or 503, never both.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/retried_load.hpp"
#include "tests/integration/row_gate.hpp"

using namespace mr::test;

namespace {
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(400)); }
}  // namespace

Test(chaos, awards_survive_killed_workers_redis_postgres_and_reload, .timeout = 200) {
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
  // Redis back, nginx reloaded. `up` lets the caller's environment move
  // nginx's and Redis's ports, so those are cleared here (the shell that
  // runs the tests may have exported a run command's). An existing
  // PostgreSQL cluster keeps its port whatever is exported: a wrong
  // MR_PG_PORT is passed on purpose.
  rc[3] = sh("env -u MR_PORT -u MR_REDIS_PORT -u MR_OPS_PORT -u MR_PG_DSN -u MR_NODE_OF MR_PG_PORT=1 " +
             env("MR_REPO") + "/tools/stack.sh up '" + dir + "' >/dev/null");
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

// Settles queued behind a gate go as batches (mr_write_batch) when it
// opens, and wait inside PostgreSQL on a second gate: PostgreSQL then
// crashes (immediate restart) with those batches in flight. Each settle's
// first answer must be the truth: a 2xx is in the ledger once, a 503 is
// not in it at all. Retried with the same keys, every settle is then
// applied exactly once.
Test(chaos, settles_of_a_batch_cut_by_a_crash_are_answered_once, .timeout = 180) {
  const std::string dir = env("MR_STACK_DIR");
  const std::size_t log_from = error_log(dir).size();
  auto c = client("A");
  const auto held = onboard_members(c, "cut-h", 4);      // their settles take the settle connections
  const auto batched = onboard_members(c, "cut-b", 12);  // theirs queue, then wait in a batch
  const std::string prefix = unique("cut");
  auto awards = plan_awards(held, 4, prefix);
  const std::size_t n_held = awards.size();
  for (auto& a : plan_awards(batched, 2, prefix)) awards.push_back(std::move(a));

  auto first = std::make_unique<Gate>(held);
  Gate second(batched);
  std::vector<HttpResponse> answers(awards.size());
  std::vector<std::thread> threads;
  const auto send = [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      threads.emplace_back([&, i] { answers[i] = client("A").post("/api/v1/transactions/settled", awards[i].body,
                                                                  awards[i].key); });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  };
  send(0, n_held);              // 2 settles per worker wait on the first gate, the rest queue
  send(n_held, awards.size());  // these queue behind them
  first.reset();                // ends its session: the queue goes as batches, which stop at the second gate
  int waiting = 0;  // batches waiting inside PostgreSQL on the second gate
  for (int i = 0; i < 50 && waiting == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    waiting = std::atoi(psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                   "AND query LIKE '%mr_write_batch%'").c_str());
  }
  const int restart_rc =
      sh(pg_ctl(env("MR_PG_DATA")) + "-m immediate -w -l '" + dir + "/pg/postgres.log' restart >/dev/null");
  for (auto& t : threads) t.join();
  cr_assert_eq(restart_rc, 0);
  cr_expect_gt(waiting, 0, "no batch was waiting in PostgreSQL when it crashed");

  // Every first answer against the ledger (awards planned with i + 1 points).
  int applied = 0, refused = 0, wrong = 0;
  for (std::size_t i = 0; i < awards.size(); ++i) {
    const HttpResponse& r = answers[i];
    std::string entries;
    for (int attempt = 0; attempt < 50; ++attempt) {  // PostgreSQL may still be recovering
      entries = psql("SELECT count(*) FROM ledger_entries WHERE entry_type = 'earn_award' AND external_tx_id = '" +
                     awards[i].tx + "'");
      if (entries == "0\n" || entries == "1\n" || entries == "2\n") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (r.status == 200) {
      applied++;
      if (entries != "1\n" && ++wrong <= 5) cr_expect_eq(entries, std::string("1\n"), "%s answered 200", awards[i].tx.c_str());
    } else if (r.status == 503 && error_code(r) == "service_unavailable") {
      if (entries != "0\n" && ++wrong <= 5) cr_expect_eq(entries, std::string("0\n"), "%s answered 503", awards[i].tx.c_str());
      refused++;
    } else if (++wrong <= 5) {
      cr_expect(false, "%s: %ld %s %s", awards[i].tx.c_str(), r.status, r.body.c_str(), r.error.c_str());
    }
  }
  cr_expect_eq(wrong, 0);
  cr_expect_gt(refused, 0, "the crash cut no settle: the test proved nothing");
  cr_expect_gt(applied, 0, "no settle went through the first gate");

  // The partner retries what was refused, with the same keys and bodies.
  for (std::size_t i = 0; i < awards.size(); ++i) {
    awards[i].acked = answers[i].status == 200;
    if (!awards[i].acked) apply_with_retries(awards[i], [&](int) -> MrClient& { return c; });
  }
  expect_each_applied_once(c, awards, prefix);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0, "mrctl audit found a difference");
  const std::string faults = error_log_faults(dir, log_from);
  cr_expect(faults.empty(), "nginx error log:\n%s", faults.c_str());
}
