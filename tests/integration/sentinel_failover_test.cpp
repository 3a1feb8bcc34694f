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
//
// A worker asks the Sentinels again only when a command needs Redis: the
// load runs until every worker that lost the master has followed. (A fixed
// 4000 awards ran out in about 3 s of database-path settles, before the
// failover and the workers' next lookup, in 5 of 12 runs; the replays
// after the kill come from the workers' replay caches and ask nothing, so
// no worker asked again and the test failed.)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <set>
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

// The pids of the workers whose error log lines from byte `from` on hold
// `text` (a line: "2026/11/26 10:52:04 [warn] 14852#14852: mr redis: ...").
std::set<std::string> workers_logging(const std::string& log, std::size_t from, const std::string& text) {
  std::set<std::string> pids;
  for (std::size_t at = std::min(from, log.size()); at < log.size();) {
    std::size_t eol = log.find('\n', at);
    if (eol == std::string::npos) eol = log.size();
    const std::string line = log.substr(at, eol - at);
    at = eol + 1;
    const std::size_t level_end = line.find("] "), pid_end = line.find('#');
    if (line.find(text) == std::string::npos || level_end == std::string::npos || pid_end == std::string::npos ||
        pid_end < level_end) {
      continue;
    }
    pids.insert(line.substr(level_end + 2, pid_end - level_end - 2));
  }
  return pids;
}

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : " ") + i;
  return out.empty() ? "none" : out;
}

// Four clients, each awarding points to a member of its own until `stop`,
// the awards made as they go (award i worth i + 1 points, as plan_awards
// makes them), so the load lasts however long the failover takes. Returns
// every award started.
std::vector<Award> awards_until_stopped(const std::vector<std::string>& members, const std::string& prefix,
                                        std::atomic<int>& acked, const std::atomic<bool>& killed,
                                        const std::atomic<bool>& stop) {
  std::vector<std::vector<Award>> each(members.size());
  std::vector<std::thread> pool;
  for (std::size_t t = 0; t < members.size(); ++t) {
    pool.emplace_back([&, t] {
      auto c = client("A");
      const std::string& m = members[t];
      for (int i = 0; !stop; ++i) {
        Award& a = each[t].emplace_back();
        a.member = m;
        a.tx = prefix + "-" + m + "-" + std::to_string(i);
        a.key = "k-" + a.tx;
        a.points = i + 1;
        a.body = settle_body("club-a", m, a.tx, (i + 1) * 100);
        apply_with_retries(a, [&](int) -> MrClient& { return c; });
        if (a.acked) {
          a.acked_before_event = !killed.load();
          acked++;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
  std::vector<Award> all;
  for (auto& v : each) std::move(v.begin(), v.end(), std::back_inserter(all));
  return all;
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

  // The load stops once nginx has followed the new master and settled a
  // hundred more there.
  const std::string prefix = unique("sen");
  std::vector<Award> started_awards;
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
  std::thread load([&] { started_awards = awards_until_stopped(members, prefix, acked, killed, stop_load); });
  wait_for_acks(acked, 40);
  const int acked_at_kill = acked;
  killed = true;
  const auto killed_at = Clock::now();
  const std::size_t log_at_kill = error_log(dir).size();
  const int kill_rc = sh("kill -9 $(cat '" + dir + "/redis/redis.pid') $(cat '" + ha + "/sentinel-1/redis.pid')");
  // The two Sentinels left are a majority of three: they agree the master
  // is down and promote the replica, in about 2.5 s. Should both start an
  // election at once and each vote for itself, the next starts after twice
  // failover-timeout (10 s in ha_fixture.sh): about 25 s.
  bool promoted = false;
  for (const auto deadline = Clock::now() + std::chrono::seconds(40); !promoted && Clock::now() < deadline;) {
    promoted = sentinel_master(sentinels[1]) == "127.0.0.1 " + replica + "\n";
    if (!promoted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double promoted_after = seconds_since(killed_at);
  // Followed: every worker that has lost the master since the kill (and
  // so may be in its pause before the next lookup) names the new one; the
  // load keeps each of them asking. A worker that logged nothing since
  // holds no pause: its next command asks the Sentinels at once.
  const std::string followed_line = "Sentinel names 127.0.0.1:" + replica + " as master \"mr\"";
  bool followed = false;
  std::set<std::string> lost, named_new;
  for (const auto deadline = Clock::now() + std::chrono::seconds(15); promoted && !followed;) {
    const std::string log = error_log(dir);
    lost = workers_logging(log, log_at_kill, "mr redis: ");
    named_new = workers_logging(log, log_at_kill, followed_line);
    followed = !named_new.empty() && std::includes(named_new.begin(), named_new.end(), lost.begin(), lost.end());
    if (followed || Clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
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
  cr_assert(promoted, "the Sentinels did not promote the replica within 40 s: %s",
            sentinel_master(sentinels[1]).c_str());
  cr_assert(followed,
            "not every worker that lost the master named the new one within 15 s of the promotion: lost by %s, "
            "new master named by %s",
            joined(lost).c_str(), joined(named_new).c_str());
  cr_expect_geq(acked_at_kill, 40, "the kill came before any load");
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
               "nginx %.1f s after the kill (workers %s, of those that lost it %s); %zu awards; %d exact replays (%d "
               "after the kill), %d transient; %zu workers asked the Sentinels for the new master by the end; test "
               "%.1f s\n",
               acked_at_kill, promoted_after, followed_after, joined(named_new).c_str(), joined(lost).c_str(),
               started_awards.size(), replays.exact, replays.exact_after_kill, replays.transient,
               count_of(error_log(dir), followed_line), seconds_since(started));
}
