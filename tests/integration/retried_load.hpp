// Load that retries every award with its own idempotency key until it is
// acknowledged, the way a partner does across lost machines, and the checks
// that each award then sits in the ledger exactly once. Shared by the
// two-node, failover and chaos tests.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"

namespace mr::test {

// One award and what became of it.
struct Award {
  std::string member, tx, key, body;
  std::int64_t points = 0;
  int attempts = 0;
  bool acked = false;               // answered 2xx in the end
  bool acked_before_event = false;  // ... before the fault was injected
  bool replayed = false;            // the acknowledgement was a replay
  std::string final_body;           // the acknowledged answer
  std::string unexpected;           // an answer that retrying cannot fix
};

// Answers a retry may cure: no answer at all (a killed worker, a reload
// closing the connection), the database or a gateway unavailable, the same
// key still in progress elsewhere.
inline bool transient(const HttpResponse& r) {
  if (r.status == 0 || r.status == 502 || r.status == 503 || r.status == 504) return true;
  return r.status == 409 && error_code(r) == "idempotency_in_progress";
}

// POSTs `a` until acknowledged, with the same key and body every time;
// `pick` chooses the node for each attempt. Gives up after `patience`,
// which must outlast mr_idempotency_lock_ttl (60 s in the test stacks): a
// worker killed mid-request leaves its claim to that TTL, counted from the
// claim, which comes after the first attempt, so a 60 s patience lost the
// race now and then (events_faults_test, 3 of 816 awards).
inline void apply_with_retries(Award& a, const std::function<MrClient&(int attempt)>& pick,
                               std::chrono::seconds patience = std::chrono::seconds(90)) {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  for (;;) {
    HttpResponse r = pick(a.attempts).post("/api/v1/transactions/settled", a.body, a.key);
    a.attempts++;
    if (r.status >= 200 && r.status < 300) {
      a.acked = true;
      a.replayed = header(r, "x-mr-idempotent-replay") == "true";
      a.final_body = r.body;
      return;
    }
    if (!transient(r)) {
      a.unexpected = std::to_string(r.status) + " " + r.body + r.error;
      return;
    }
    if (std::chrono::steady_clock::now() > give_up) {
      a.unexpected = "still " + std::to_string(r.status) + " after " + std::to_string(a.attempts) + " attempts";
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// `members` awards for each of `members` x `per_member`: award i of a member
// is worth i + 1 points (amount (i + 1) x 100 minor at club-a's 1 %), so a
// lost or doubled award shows in the sum as well as in the count.
inline std::vector<Award> plan_awards(const std::vector<std::string>& members, int per_member,
                                      const std::string& prefix, const std::string& ref = "club-a") {
  std::vector<Award> out;
  for (const auto& m : members) {
    for (int i = 0; i < per_member; ++i) {
      Award a;
      a.member = m;
      a.tx = prefix + "-" + m + "-" + std::to_string(i);
      a.key = "k-" + a.tx;
      a.points = i + 1;
      a.body = settle_body(ref, m, a.tx, (i + 1) * 100);
      out.push_back(std::move(a));
    }
  }
  return out;
}

// Runs `awards` on `threads` threads, each with its own clients (one per
// base URL, attempts alternate between them when there are several).
// `acked` counts acknowledgements as they come; `event_happened` is read at
// each acknowledgement to mark those that came before the fault. Once
// `stop` is set no award is started (those keep attempts == 0).
inline void run_awards(std::vector<Award>& awards, int threads, const std::vector<std::string>& base_urls,
                       std::atomic<int>& acked, const std::atomic<bool>& event_happened,
                       const std::atomic<bool>* stop = nullptr) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<MrClient> clients;
      for (const auto& url : base_urls) clients.emplace_back(url, env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
      for (std::size_t i; (stop == nullptr || !*stop) && (i = next++) < awards.size();) {
        Award& a = awards[i];
        apply_with_retries(a, [&](int attempt) -> MrClient& {
          return clients[(static_cast<std::size_t>(t) + static_cast<std::size_t>(attempt)) % clients.size()];
        });
        if (a.acked) {
          a.acked_before_event = !event_happened.load();
          acked++;
        }
      }
    });
  }
  for (auto& th : pool) th.join();
}

// Waits (30 s at most) until `acked` reaches `n`: the load is under way
// before the fault is injected.
inline void wait_for_acks(const std::atomic<int>& acked, int n) {
  for (int i = 0; i < 3000 && acked < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// `awards` under way on a thread of their own (run_awards on 4 threads of
// clients on `urls`) while a test injects a fault: wait_for(n) until n are
// acknowledged, acked() how many are so far, fault() marks the moment
// (those acknowledged later are not acked_before_event), join() waits for
// the rest.
class AwardsUnderFault {
 public:
  explicit AwardsUnderFault(std::vector<Award>& awards, std::vector<std::string> urls = {env("MR_BASE_URL")})
      : thread_([&awards, urls = std::move(urls), this] { run_awards(awards, 4, urls, acked_, fault_); }) {}
  AwardsUnderFault(const AwardsUnderFault&) = delete;
  AwardsUnderFault& operator=(const AwardsUnderFault&) = delete;
  ~AwardsUnderFault() {
    if (thread_.joinable()) thread_.join();
  }
  void wait_for(int n) const { wait_for_acks(acked_, n); }
  int acked() const { return acked_; }
  void fault() { fault_ = true; }
  void join() { thread_.join(); }

 private:
  std::atomic<int> acked_{0};
  std::atomic<bool> fault_{false};
  std::thread thread_;  // last: it starts once the counters exist
};

inline std::vector<std::string> onboard_members(MrClient& c, const std::string& prefix, int n) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(unique(prefix));
    const std::string key = unique("idem"), body = member_body("club-a", ids.back());
    HttpResponse r = c.post("/api/v1/members", body, key);
    // A node still finding its database: retried, as a partner would.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(40);
    while (transient(r) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      r = c.post("/api/v1/members", body, key);
    }
    cr_assert_eq(r.status, 201, "onboarding: %ld %s", r.status, r.body.c_str());
  }
  return ids;
}

// What a shell command prints (stdout and stderr).
inline std::string capture(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen((cmd + " 2>&1").c_str(), "r"), pclose);
  std::string out;
  char buf[4096];
  std::size_t n;
  while (p && (n = fread(buf, 1, sizeof buf, p.get())) > 0) out.append(buf, n);
  return out;
}

// psql's unaligned output of one query against the stack's database (or `dsn`).
inline std::string psql(const std::string& sql, const std::string& dsn = {}) {
  return capture("psql '" + (dsn.empty() ? env("MR_DSN") : dsn) + "' -XtAq -F ' ' -c \"" + sql + "\"");
}

// A query's rows as first column -> the rest ("a b c" -> {a: "b c"}).
inline std::map<std::string, std::string> psql_pairs(const std::string& sql, const std::string& dsn = {}) {
  std::map<std::string, std::string> out;
  const std::string rows = psql(sql, dsn);
  for (std::size_t at = 0; at < rows.size();) {
    std::size_t eol = rows.find('\n', at);
    if (eol == std::string::npos) eol = rows.size();
    const std::string line = rows.substr(at, eol - at);
    at = eol + 1;
    const std::size_t sp = line.find(' ');
    if (sp != std::string::npos) out[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return out;
}

// The nginx master's pid and its workers' pids, one a line.
inline std::string nginx_pids(const std::string& stack_dir) {
  return capture("m=$(cat '" + stack_dir + "/nginx/logs/nginx.pid'); echo $m; pgrep -P $m | sort -n");
}

// Every award acknowledged, no unexpected answer, each transaction's award
// entry in the ledger exactly once with its points, and each member's
// balance exactly the sum of its awards. `dsn`: the database that keeps the
// club's books and is the catalogue mrctl audits from (the stack's when
// empty).
inline void expect_each_applied_once(MrClient& c, const std::vector<Award>& awards, const std::string& prefix,
                                     const std::string& dsn = {}) {
  std::map<std::string, std::int64_t> want_balance;
  int unacked = 0;
  for (const auto& a : awards) {
    want_balance[a.member] += a.points;
    if (!a.acked) {
      if (++unacked <= 5) cr_expect(a.acked, "%s never acknowledged: %s", a.tx.c_str(), a.unexpected.c_str());
    }
  }
  cr_expect_eq(unacked, 0, "%d of %zu awards never acknowledged", unacked, awards.size());

  // tx id -> "entries points" from the ledger itself.
  const std::string sql =
      "SELECT external_tx_id, count(*), sum(delta_available) FROM ledger_entries "
      "WHERE entry_type = 'earn_award' AND external_tx_id LIKE '" + prefix + "-%' GROUP BY 1";
  const auto entries = psql_pairs(sql, dsn);
  int wrong = 0;
  for (const auto& a : awards) {
    const std::string want = "1 " + std::to_string(a.points);
    auto it = entries.find(a.tx);
    const std::string got = it == entries.end() ? "missing" : it->second;
    if (got != want && ++wrong <= 5) {
      cr_expect_eq(got, want, "%s: ledger has '%s', want one entry of %lld points", a.tx.c_str(), got.c_str(),
                   static_cast<long long>(a.points));
    }
  }
  cr_expect_eq(wrong, 0, "%d awards not in the ledger exactly once (%zu award transactions found)", wrong,
               entries.size());
  cr_expect_eq(entries.size(), awards.size(), "ledger has %zu award transactions, planned %zu", entries.size(),
               awards.size());

  for (const auto& [member, points] : want_balance) {
    // Right after a fault the pool may still be reconnecting: a 503 is
    // retried, as a partner would; the balance itself must be exact.
    auto r = c.get("/api/v1/members/" + member + "/balance");
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (transient(r) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      r = c.get("/api/v1/members/" + member + "/balance");
    }
    cr_assert_eq(r.status, 200, "%s", r.body.c_str());
    cr_expect_eq(i64(data_of(r), "pointsBalance"), points, "member %s", member.c_str());
  }
  const std::string audit = dsn.empty() ? mrctl_cmd()
                                        : "'" + env("MR_MRCTL") + "' --dsn '" + dsn + "' --master-key '" +
                                              env("MR_MASTER_KEY_FILE") + "'";
  cr_expect_eq(sh(audit + " audit >/dev/null"), 0, "mrctl audit found a difference");
}

// Answers acknowledged before a fault, asked again (the first `n`): Redis
// replays them; without Redis (flushed) the database that survived does,
// byte for byte.
inline void expect_replayed_after_fault(MrClient& c, const std::vector<Award>& awards, int n = 3) {
  int replayed = 0;
  for (const auto& a : awards) {
    if (!a.acked_before_event || replayed == n) continue;
    replayed++;
    auto again = c.post("/api/v1/transactions/settled", a.body, a.key);
    cr_expect_eq(again.status, 200, "%s", again.body.c_str());
    cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
    cr_expect_eq(again.body, a.final_body);
    cr_assert_eq(sh(redis_cli() + "FLUSHALL | grep -qx OK"), 0);  // with the stack's password
    auto from_db = c.post("/api/v1/transactions/settled", a.body, a.key);
    cr_expect_eq(from_db.status, 200, "%s", from_db.body.c_str());
    cr_expect_eq(header(from_db, "x-mr-idempotent-replay"), std::string("true"));
    cr_expect_eq(from_db.body, a.final_body);
  }
}

inline std::string error_log(const std::string& stack_dir) {
  return read_file(stack_dir + "/nginx/logs/error.log");
}

// Lines of the nginx error log written after byte `from` (its size when the
// test began: other tests fail reloads on purpose) that mean a bug rather
// than an outage: alerts (an epoll_ctl on a socket libpq had closed, say)
// and crashes. A worker killed on purpose (signal 9) is the master's alert
// too: not a bug.
inline std::string error_log_faults(const std::string& stack_dir, std::size_t from) {
  const std::string log = error_log(stack_dir);
  std::string out;
  for (std::size_t at = std::min(from, log.size()); at < log.size();) {
    std::size_t eol = log.find('\n', at);
    if (eol == std::string::npos) eol = log.size();
    const std::string line = log.substr(at, eol - at);
    at = eol + 1;
    if (line.find("exited on signal 9") != std::string::npos) continue;
    if (line.find("[alert]") != std::string::npos || line.find("[emerg]") != std::string::npos ||
        line.find("exited on signal") != std::string::npos) {
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace mr::test
