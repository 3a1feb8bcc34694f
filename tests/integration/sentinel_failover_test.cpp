// Redis under Sentinel (Debian's redis-sentinel; ha_fixture.sh with
// MR_HA=sentinel): the stack's Redis is the master of one replica, three
// Sentinels watch it, and nginx knows only the Sentinels
// (mr_redis_sentinel). While four clients award points and a fifth replays
// a few acknowledged awards over and over with their keys, the master is
// killed (kill -9), and so is the Sentinel nginx asks first. The two other
// Sentinels promote the replica; the module asks them again and follows.
// Afterwards every award is in the ledger exactly once, every replay was
// answered with the first answer byte for byte (never applied twice), and
// the module works on the new master: fresh settles are claimed there (no
// bypass) and their records sit on it.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/retried_load.hpp"

using namespace mr::test;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The master's address as the Sentinel on `port` sees it: "ip port".
std::string sentinel_master(const std::string& port) {
  return capture("redis-cli -p " + port + " SENTINEL get-master-addr-by-name " + env("MR_REDIS_MASTER_NAME") +
                 " | paste -sd ' '");
}

// redis-cli for the server on `port`, with the stack's password.
std::string redis_at(const std::string& port) {
  return "REDISCLI_AUTH=\"$(cat '" + env("MR_REDIS_PASSWORD_FILE") + "')\" redis-cli -h 127.0.0.1 -p " + port + " ";
}

std::size_t count_of(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + 1)) n++;
  return n;
}

// What the replayer saw.
struct Replays {
  int exact = 0, exact_after_kill = 0, transient = 0;
  std::vector<std::string> wrong;
};

}  // namespace

Test(sentinel, master_killed_under_settles_and_replays, .timeout = 240) {
  const auto started = Clock::now();
  const std::string dir = env("MR_STACK_DIR"), ha = env("MR_HA_DIR");
  std::vector<std::string> sentinels;
  {
    std::istringstream in(env("MR_SENTINEL_PORTS"));
    for (std::string p; in >> p;) sentinels.push_back(p);
  }
  cr_assert_eq(sentinels.size(), 3u);
  const std::string master = env("MR_REDIS_PORT"), replica = env("MR_REDIS_REPLICA_PORT");
  cr_assert_eq(sentinel_master(sentinels[1]), "127.0.0.1 " + master + "\n");
  const std::string conf = mr::read_file(dir + "/nginx/nginx.conf");
  cr_assert(conf.find("mr_redis_sentinel 127.0.0.1:" + sentinels[0]) != std::string::npos &&
                conf.find("mr_redis ") == std::string::npos,
            "nginx is not configured with the Sentinels alone");

  auto c = client("A");
  // Members of their own for the load, the replayed awards and the fresh
  // settles: each member's balance is checked against its awards.
  const auto members = onboard_members(c, "sen", 4);
  const auto replay_members = onboard_members(c, "senr", 2);
  const auto fresh_member = onboard_members(c, "senf", 1);
  // The module found the master through a Sentinel (its first connect).
  cr_assert_neq(error_log(dir).find("Sentinel names 127.0.0.1:" + master + " as master \"mr\""), std::string::npos,
                "no worker asked the Sentinels");

  // Awards acknowledged before the load, replayed throughout it.
  const std::string replay_prefix = unique("senr");
  auto replayed_awards = plan_awards(replay_members, 4, replay_prefix);
  for (auto& a : replayed_awards) {
    apply_with_retries(a, [&](int) -> MrClient& { return c; });
    cr_assert(a.acked, "%s: %s", a.tx.c_str(), a.unexpected.c_str());
  }

  // More awards than the test lasts (the database path alone settles
  // hundreds a second): the load stops once nginx has followed the new
  // master and settled a hundred more there.
  const std::string prefix = unique("sen");
  auto awards = plan_awards(members, 1000, prefix);
  const std::string pids_before = nginx_pids(dir);
  std::atomic<int> acked{0};
  std::atomic<bool> killed{false}, stop_load{false}, stop_replays{false};
  Replays replays;
  std::thread replayer([&] {
    auto rc = client("A");
    for (std::size_t i = 0; !stop_replays; ++i) {
      const Award& a = replayed_awards[i % replayed_awards.size()];
      const bool after_kill = killed;
      const HttpResponse r = rc.post("/api/v1/transactions/settled", a.body, a.key);
      if (r.status == 200 && header(r, "x-mr-idempotent-replay") == "true" && r.body == a.final_body) {
        replays.exact++;
        if (after_kill) replays.exact_after_kill++;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // a burst, not a CPU of its own
      } else if (transient(r)) {
        replays.transient++;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      } else if (replays.wrong.size() < 5) {
        replays.wrong.push_back(a.key + ": " + std::to_string(r.status) + " " + r.body + r.error);
      }
    }
  });
  std::thread load([&] { run_awards(awards, 4, {env("MR_BASE_URL")}, acked, killed, &stop_load); });
  for (int i = 0; i < 3000 && acked < 40; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const int acked_at_kill = acked;
  killed = true;
  const auto killed_at = Clock::now();
  const int kill_rc = sh("kill -9 $(cat '" + dir + "/redis/redis.pid') $(cat '" + ha + "/sentinel-1/redis.pid')");
  // The two Sentinels left are a majority of three: they agree the master
  // is down and promote the replica.
  bool promoted = false;
  for (const auto deadline = Clock::now() + std::chrono::seconds(30); !promoted && Clock::now() < deadline;) {
    promoted = sentinel_master(sentinels[1]) == "127.0.0.1 " + replica + "\n";
    if (!promoted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double promoted_after = seconds_since(killed_at);
  const std::string followed_line = "Sentinel names 127.0.0.1:" + replica + " as master \"mr\"";
  bool followed = false;
  for (const auto deadline = Clock::now() + std::chrono::seconds(30); !followed && Clock::now() < deadline;) {
    followed = error_log(dir).find(followed_line) != std::string::npos;
    if (!followed) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double followed_after = seconds_since(killed_at);
  const int acked_at_follow = acked;
  for (int i = 0; i < 3000 && acked < acked_at_follow + 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int acked_at_stop = acked;
  stop_load = true;
  load.join();
  stop_replays = true;
  replayer.join();

  cr_assert_eq(kill_rc, 0, "kill -9 of the master and the first Sentinel");
  cr_assert(promoted, "the Sentinels did not promote the replica within 30 s: %s",
            sentinel_master(sentinels[1]).c_str());
  cr_assert(followed, "nginx did not ask the Sentinels for the new master within 30 s");
  cr_expect_geq(acked_at_kill, 40, "the kill came before any load");
  cr_expect_lt(acked_at_stop, static_cast<int>(awards.size()), "the load ran out before nginx followed");
  std::vector<Award> started_awards;
  for (auto& a : awards) {
    if (a.attempts > 0) started_awards.push_back(std::move(a));
  }
  int before = 0;
  for (const auto& a : started_awards) before += a.acked_before_event ? 1 : 0;
  cr_expect_gt(before, 0);
  cr_expect_gt(acked_at_stop, acked_at_follow, "no award acknowledged after nginx followed");
  expect_each_applied_once(c, started_awards, prefix);
  // Replays: each the first answer, byte for byte, before and after the
  // kill; the ledger still holds each replayed award once.
  for (const auto& w : replays.wrong) cr_expect(false, "replay answered otherwise: %.300s", w.c_str());
  cr_expect_gt(replays.exact, 0);
  cr_expect_gt(replays.exact_after_kill, 0, "no replay after the kill");
  expect_each_applied_once(c, replayed_awards, replay_prefix);

  // The module works on the new master: fresh settles are claimed and
  // stored there, none goes around Redis.
  const std::string fresh_prefix = unique("senf");
  auto fresh = plan_awards(fresh_member, 20, fresh_prefix);
  const std::string m1 = scrape();
  for (auto& a : fresh) apply_with_retries(a, [&](int) -> MrClient& { return c; });
  const std::string m2 = scrape();
  const std::string bypassed = "mr_idempotency_requests_total{outcome=\"bypassed\"}";
  const std::string claimed = "mr_idempotency_requests_total{outcome=\"claimed\"}";
  cr_expect_eq(metric(m2, bypassed), metric(m1, bypassed), "settles went around Redis after the failover");
  EXPECT_GREW(m1, m2, claimed, 20.0);
  expect_each_applied_once(c, fresh, fresh_prefix);
  const std::string on_new_master =
      capture(redis_at(replica) + "--scan --pattern 'mr:idem:*:k-" + fresh_prefix + "-*' | wc -l");
  cr_expect_eq(on_new_master, std::string("20\n"), "records of the fresh settles on the new master");
  cr_expect_eq(capture(redis_at(replica) + "ROLE | head -1"), std::string("master\n"));

  cr_expect_eq(nginx_pids(dir), pids_before, "nginx was restarted or a worker died");
  const std::string faults = error_log_faults(dir, 0);  // a stack of its own
  cr_expect(faults.empty(), "nginx error log:\n%s", faults.c_str());
  std::fprintf(stderr,
               "sentinel: master killed after %d acknowledged awards; replica promoted %.1f s later, followed by "
               "nginx %.1f s after the kill; %zu awards; %d exact replays (%d after the kill), %d transient; %zu "
               "workers asked the Sentinels for the new master; test %.1f s\n",
               acked_at_kill, promoted_after, followed_after, started_awards.size(), replays.exact,
               replays.exact_after_kill,
               replays.transient, count_of(error_log(dir), followed_line), seconds_since(started));
}
