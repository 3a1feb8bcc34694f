// Settles that queue while every ledger connection is busy go to PostgreSQL
// together (mr_write_batch): each keeps its own outcome, its idempotency
// record and the books stay exact, failing ones included. To make the
// queue certain, a session of the test holds some members' rows locked:
// settles for them fill every connection, everything sent after them
// queues, and the lock's release lets the queue go as batches. Requests of
// one transaction share its now(): idempotency records with the same
// created_at were written by one batch.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "ledger/result_render.hpp"
#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/row_gate.hpp"
#include "tests/integration/shell_run.hpp"

using namespace mr::test;
using namespace std::chrono_literals;

namespace {

constexpr int kGate = 16;  // one wave of the gate's settles
// The connections that run settles: the fixture's 2 workers x
// mr_ledger_settle_connections (2, the default).
constexpr int kSettleConnections = 4;
// How long the gate may stay closed. A settle that has waited
// mr_ledger_query_timeout (the fixture's 5 s) since it reached the pool,
// queued or running, is answered 503 and its connection dropped: the gate's
// first settles hold their connections that long at most. So every wait
// while the gate is closed ends as soon as what it waits for is there, and
// its deadline is what is left of this, counted from the gate's first
// settle; the last second is for the release.
constexpr std::chrono::milliseconds kGateLife = 4s;

// Sessions waiting behind the gate's session: on its row locks, or behind a
// session that waits (a second batch for a gated row waits for the first
// one's tuple lock).
int behind_gate(PGconn* pg, const Gate& gate) {
  return std::stoi(one(pg, "WITH RECURSIVE behind(pid) AS (SELECT " + std::to_string(gate.pid()) +
                           " UNION SELECT a.pid FROM pg_stat_activity a JOIN behind b"
                           " ON b.pid = ANY(pg_blocking_pids(a.pid))) SELECT count(*) - 1 FROM behind"));
}

// Idempotency claims in Redis whose key starts with `prefix`. A settle
// whose claim is there has reached its worker's pool, or holds a ticket of
// the settle gate until it does (modules/ledger/settle_gate.hpp), and a
// connection set free waits for the settles holding tickets before it takes
// the queued ones (pg_pool.hpp, settle_arriving): it goes in the batches
// that the gate's release lets go.
int claims(const std::string& prefix) {
  const Run r = run(redis_cli() + "--scan --pattern " + shell_quote("mr:idem:*:" + prefix + "*"));
  cr_assert_eq(r.code, 0, "redis-cli: %s", r.err.c_str());
  return static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n'));
}

// POSTs that went on to the database without a claim in Redis, all
// workers, counted as they are decided (mr_idempotency_requests_total,
// bypassed): a worker whose Redis command timed out (the wave test's
// CLIENT PAUSE, on a loaded machine) does so until it has reconnected.
// Such a settle too holds its ticket of the settle gate until it reaches
// the pool.
double bypassed() { return metric(scrape(), R"(mr_idempotency_requests_total{outcome="bypassed"})"); }

// Statements waiting for a free connection, all workers (each publishes
// its queue every second).
double queued() { return metric(scrape(), "mr_ledger_pool_queued"); }

// The gate's settles: settles for the gate's members, each from a thread of
// its own, which take settle connections and wait on the lock.
class GateSettles {
 public:
  GateSettles(const std::vector<std::string>& members, Gate& gate) : members_(members), gate_(gate) {}
  GateSettles(const GateSettles&) = delete;
  GateSettles& operator=(const GateSettles&) = delete;
  ~GateSettles() { join(); }

  // Waves until every settle connection waits on the gate, as PostgreSQL
  // shows. A wave arriving together goes as one batch per worker (a free
  // connection waits for the settles on their way), which can leave a
  // worker's second settle connection free: the next wave takes it. What is
  // sent once every settle connection is held queues.
  void fill() {
    Pg pg = connect_db();
    while (!filled_ && left() > 0ms) {
      send(kGate);
      filled_ = eventually([&] { return (held_ = behind_gate(pg.get(), gate_)) >= kSettleConnections; },
                           std::min<std::chrono::milliseconds>(500ms, left()));
    }
  }

  void send(int n) {
    if (sent_ == 0) opened_ = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i, ++sent_) {
      const std::string member = members_[static_cast<std::size_t>(sent_) % members_.size()];
      threads_.emplace_back([this, member] {
        auto r = client("A").post("/api/v1/transactions/settled", settle_body("club-a", member, unique("gtx"), 100),
                                  unique("gate"));
        if (r.status == 200) ok_++;
        returned_++;
      });
    }
  }

  // What is left of the gate's life.
  std::chrono::milliseconds left() const { return std::max<std::chrono::milliseconds>(kGateLife - closed(), 0ms); }

  // Opens the gate: the held settles go.
  void release() {
    closed_for_ = closed();
    gate_.release();
  }

  int returned() const { return returned_.load(); }

  // Once the gate is released: every gate settle answered 200, after they
  // had held every settle connection.
  void expect_all_answered() {
    join();
    std::fprintf(stderr, "ledger_batch: %d gate settles held %d settle connections; the gate was closed %lld ms\n",
                 sent_, held_, static_cast<long long>(closed_for_.count()));
    cr_expect(filled_, "the gate's settles held %d of the %d settle connections", held_, kSettleConnections);
    cr_expect_eq(ok_.load(), sent_, "%d of the gate's %d settles answered 200", ok_.load(), sent_);
  }

 private:
  void join() {
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  // Since the gate's first settle was sent.
  std::chrono::milliseconds closed() const {
    if (sent_ == 0) return 0ms;
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - opened_);
  }

  const std::vector<std::string>& members_;
  Gate& gate_;
  std::vector<std::thread> threads_;
  std::chrono::milliseconds closed_for_{0};
  int sent_ = 0, held_ = 0;
  bool filled_ = false;
  std::atomic<int> ok_{0}, returned_{0};
  std::chrono::steady_clock::time_point opened_;
};

// Requests sent all at once, each from a thread of its own on a connection
// it opened before (its client's first request, a path the router refuses
// without the database): what takes time on a loaded machine, a thread and
// a connection, is done before the gate closes, so the gate's life is spent
// on the requests themselves.
class Volley {
 public:
  Volley() = default;
  Volley(const Volley&) = delete;
  Volley& operator=(const Volley&) = delete;
  ~Volley() {
    fire();
    join();
  }

  // A request signed by seeded key `signer`.
  void add(const std::string& signer, std::function<void(MrClient&)> request) {
    threads_.emplace_back([this, signer, request = std::move(request)] {
      auto c = client(signer);
      c.get("/api/v1/volley-warm-up");
      ready_++;
      go_.wait();
      request(c);
    });
  }
  // Every thread's connection is open.
  void expect_ready() {
    cr_expect(eventually([&] { return ready_.load() == threads_.size(); }, 60s), "%zu of %zu connections opened",
              ready_.load(), threads_.size());
  }
  void fire() {
    if (!fired_) go_.count_down();
    fired_ = true;
  }
  void join() {
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> ready_{0};
  std::latch go_{1};
  bool fired_ = false;
};

// Fires `volley` and opens the gate once the `want` settles it sent behind
// the gate, idempotency keys starting with `prefix`, have all reached the
// pool (their claims in Redis, or their way on without one); then waits for
// them and for the gate's settles.
void release_when_claimed(GateSettles& gate, Volley& volley, const std::string& prefix, int want) {
  const double bypassed_before = bypassed();
  volley.fire();
  int claimed = 0, without_claim = 0;
  const bool all_there = eventually(
      [&] {
        claimed = claims(prefix);
        without_claim = static_cast<int>(bypassed() - bypassed_before);
        return claimed + without_claim >= want;
      },
      gate.left());
  gate.release();
  volley.join();
  gate.expect_all_answered();
  cr_expect(all_there,
            "%d of the %d settles sent behind the gate reached the pool while it was closed (%d with a claim in "
            "Redis, %d without)",
            claimed + without_claim, want, claimed, without_claim);
}

}  // namespace

Test(batch, queued_settles_keep_their_own_outcomes_and_the_books) {
  auto c = client("A");
  const auto gate = onboard_members(c, "club-a", 4, "gate");
  constexpr int kMembers = 40;
  const auto members = onboard_members(c, "club-a", kMembers, "bm");
  const std::string settled_before = unique("tx-before");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-a", members[0], settled_before, 100)).status,
               200);
  const std::string replay_key = unique("bk-replay");
  const std::string replay_body = settle_body("club-a", members[1], unique("tx-replayed"), 200);
  const auto first = c.post("/api/v1/transactions/settled", replay_body, replay_key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  const std::string run = unique("bk");

  // club-a earns 100 bp: member i is awarded amount (1000 + 100 i) / 100.
  std::vector<HttpResponse> awards(kMembers);
  HttpResponse unknown, currency, duplicate, replay, wrong_partner;
  Volley volley;
  const auto settle = [&](HttpResponse& answer, std::string body, std::string key) {
    volley.add("A", [&answer, body = std::move(body), key = std::move(key)](MrClient& w) {
      answer = w.post("/api/v1/transactions/settled", body, key);
    });
  };
  for (int i = 0; i < kMembers; ++i) {
    settle(awards[static_cast<std::size_t>(i)],
           settle_body("club-a", members[static_cast<std::size_t>(i)], unique("btx"), 1000 + 100 * i),
           run + "-award-" + std::to_string(i));
  }
  settle(unknown, settle_body("club-a", unique("nobody"), unique("t"), 100), run + "-unknown");
  settle(currency, settle_body("club-a", members[2], unique("t"), 100, "USD"), run + "-currency");
  settle(duplicate, settle_body("club-a", members[3], settled_before, 100), run + "-duplicate");
  settle(replay, replay_body, replay_key);
  settle(wrong_partner, settle_body("club-b", members[4], unique("t"), 100), run + "-partner");
  volley.expect_ready();

  Gate lock(gate);
  GateSettles gate_settles(gate, lock);
  gate_settles.fill();
  // Every settle sent reaches the pool (the four refusals are the
  // database's too) but the replay, answered at the edge with its record.
  release_when_claimed(gate_settles, volley, run + "-", kMembers + 4);

  for (int i = 0; i < kMembers; ++i) {
    const auto& r = awards[static_cast<std::size_t>(i)];
    cr_assert_eq(r.status, 200, "%s", r.body.c_str());
    const std::int64_t points = (1000 + 100 * i) / 100;
    auto d = data_of(r);
    cr_expect_eq(i64(d, "pointsAwarded"), points);
    // Member 0 had 1 point and member 1 had 2 before.
    cr_expect_eq(i64(d["balances"], "pointsBalance"), points + (i == 0 ? 1 : i == 1 ? 2 : 0));
  }
  EXPECT_ERROR(unknown, 404, "cardholder_not_found");
  cr_expect_eq(error_code(currency), std::string("unsupported_currency"), "%s", currency.body.c_str());
  cr_expect_eq(error_code(duplicate), std::string("duplicate_transaction"), "%s", duplicate.body.c_str());
  cr_expect_eq(error_code(wrong_partner), std::string("partner_not_found"), "%s", wrong_partner.body.c_str());
  // The replay is the first answer, byte for byte.
  cr_expect_eq(replay.status, 200);
  cr_expect_eq(replay.body, first.body);

  Pg pg = connect_db();
  cr_expect(largest_batch(pg.get(), run) > 1, "no two settles ran in one transaction");
  // Each kept outcome has its own record; the books agree with every answer.
  cr_expect_eq(one(pg.get(), "SELECT count(*) FROM idempotency_records WHERE idem_key LIKE '" + run + "%'"),
               std::to_string(kMembers + 4));
  const std::string club = one(pg.get(), "SELECT club_id FROM clubs WHERE partner_ref = 'club-a'");
  for (int i = 0; i < kMembers; ++i) {
    const auto& id = members[static_cast<std::size_t>(i)];
    const auto r = c.get("/api/v1/members/" + id + "/balance");
    cr_expect_eq(i64(data_of(r), "pointsBalance"), (1000 + 100 * i) / 100 + (i == 0 ? 1 : i == 1 ? 2 : 0));
    if (i < 3) {  // the balance rendered from columns is what mr_balance's jsonb rendered to
      const auto old = mr::ledger::render_result(
          one(pg.get(), "SELECT mr_balance(" + club + ", '" + id + "', 'rid')"), "rid");
      cr_expect_eq(r.body, old.body);
    }
  }
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0, "mrctl audit found a difference");
}

Test(batch, batches_never_overdraw_a_pool_and_refuse_exactly) {
  // club-i: 10000 bp and a pool of exactly 1000; 40 awards of 50 compete
  // for it in batches, so stripes run dry inside them.
  auto a = client("A");
  const auto gate = onboard_members(a, "club-a", 4, "gate");
  auto c = client("I");
  const auto members = onboard_members(c, "club-i", 8, "pm");
  const std::string run = unique("bp");
  const std::string before = scrape();
  Tally tally{200, "insufficient_partner_points_pool"};
  Volley volley;
  for (int i = 0; i < 40; ++i) {
    volley.add("I", [&, i](MrClient& w) {
      tally.count(w.post("/api/v1/transactions/settled",
                         settle_body("club-i", members[static_cast<std::size_t>(i) % 8], unique("ptx"), 50),
                         run + "-" + std::to_string(i)));
    });
  }
  volley.expect_ready();
  Gate lock(gate);
  GateSettles gate_settles(gate, lock);
  gate_settles.fill();
  release_when_claimed(gate_settles, volley, run + "-", 40);
  cr_expect_eq(tally.other.load(), 0);
  cr_expect_eq(tally.ok.load(), 20, "exactly the pool's worth is awarded");
  cr_expect_eq(tally.refused.load(), 20);
  std::int64_t held = 0;
  for (const auto& m : members) held += i64(data_of(c.get("/api/v1/members/" + m + "/balance")), "pointsBalance");
  cr_expect_eq(held, 1000);
  Pg pg = connect_db();
  cr_expect_eq(one(pg.get(), "SELECT mr_pool_total(club_id) FROM clubs WHERE partner_ref = 'club-i'"), "0");
  // The path under test: batches ran, and one whose stripe ran dry failed
  // as a whole and went one by one (mr_write_batch_decide).
  // Each worker publishes its pool's counters every second.
  std::string after;
  const auto fallbacks = [](const std::string& text) { return metric(text, "mr_ledger_batch_fallbacks_total"); };
  eventually([&] { return fallbacks(after = scrape()) > fallbacks(before); }, 10s, 100ms);
  EXPECT_GREW(before, after, "mr_ledger_batches_total", 1);
  EXPECT_GREW(before, after, "mr_ledger_batch_fallbacks_total", 1);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0, "mrctl audit found a difference");
}

// Reads from many clients at once share connections and syncs in the
// pipeline: each answer must still be its own request's.
Test(batch, pipelined_reads_each_get_their_own_answer) {
  auto c = client("A");
  constexpr int kMembers = 24;
  const auto members = onboard_members(c, "club-a", kMembers, "rm");
  for (int i = 0; i < kMembers; ++i) {
    cr_assert_eq(post(c, "/api/v1/transactions/settled",
                      settle_body("club-a", members[static_cast<std::size_t>(i)], unique("rtx"), 100 * (i + 1)))
                     .status,
                 200);
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kMembers; ++t) {
    threads.emplace_back([&, t] {
      auto tc = client("A");
      for (int round = 0; round < 20; ++round) {
        const int i = (t + round) % kMembers;
        const auto& id = members[static_cast<std::size_t>(i)];
        if (round % 5 == 4) {  // an unknown member among them
          if (error_code(tc.get("/api/v1/members/" + unique("none") + "/balance")) != "cardholder_not_found") wrong++;
          continue;
        }
        const auto r = tc.get("/api/v1/members/" + id + "/balance");
        rapidjson::Document d = parse_json(r.body);
        if (r.status != 200 || !d.IsObject() || !d.HasMember("data") || d["data"]["externalMemberId"].GetString() != id ||
            d["data"]["pointsBalance"].GetInt64() != i + 1) {
          wrong++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  cr_expect_eq(wrong.load(), 0);
}

// Settles held back by mr_ledger_settle_connections (2 of each worker's 4
// connections) wait for a settle connection; reads and other writes sent
// after them must not wait behind them. The gate holds the settles; the
// reads and a member's onboarding must answer while every settle is still
// waiting (without the limit they would wait until the settles time out
// and answer 503), and the settles go once the gate opens.
Test(batch, reads_and_other_writes_pass_held_back_settles) {
  auto c = client("A");
  const auto gate = onboard_members(c, "club-a", 4, "hold");
  const auto reader = onboard_members(c, "club-a", 1, "hr").front();
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-a", reader, unique("hrtx"), 700)).status,
               200);

  // From many connections, so that both workers serve some.
  constexpr int kClients = 8;
  std::atomic<int> answered{0}, wrong{0};
  Volley volley;
  for (int t = 0; t < kClients; ++t) {
    volley.add("A", [&](MrClient& tc) {
      const auto balance = tc.get("/api/v1/members/" + reader + "/balance");
      if (balance.status != 200 || i64(data_of(balance), "pointsBalance") != 7) wrong++;
      const auto points = tc.get("/api/v1/members/" + reader + "/points?limit=5");
      if (points.status != 200) wrong++;
      if (post(tc, "/api/v1/members", member_body("club-a", unique("hw"))).status != 201) wrong++;
      answered++;
    });
  }
  volley.expect_ready();

  Gate lock(gate);
  GateSettles gate_settles(gate, lock);
  gate_settles.fill();
  // With every settle connection held, what follows queues behind the limit
  // (each worker publishes its queue every second); the reads and writes
  // are sent while it waits.
  gate_settles.send(kGate / 4);
  double held_back = 0;
  eventually([&] { return (held_back = queued()) >= 1; }, gate_settles.left(), 100ms);
  cr_expect_geq(held_back, 1, "no settle was held back: the test would prove nothing");
  volley.fire();
  eventually([&] { return answered.load() >= kClients; }, gate_settles.left());
  const int answered_while_held = answered.load();
  const int settles_done_meanwhile = gate_settles.returned();
  gate_settles.release();
  volley.join();
  gate_settles.expect_all_answered();
  cr_expect_eq(answered_while_held, kClients, "reads and writes waited behind held-back settles");
  cr_expect_eq(settles_done_meanwhile, 0, "a settle answered while its member's row was locked");
  cr_expect_eq(wrong.load(), 0);
}

// Settles that reach the pool while its connections are free go as one
// batch per worker, not a lone statement for each of the first ones to come
// (each with a commit of its own): the first to arrive waits for the settles
// already past authentication. Here Redis holds every idempotency claim for
// 150 ms (below mr_redis_timeout), so the whole wave is on its way when the
// first one arrives. Before the wait, a worker sent its first two alone
// (settle_connections 2) and the rest as a third transaction.
Test(batch, a_wave_on_free_connections_goes_as_one_batch_per_worker) {
  auto c = client("A");
  constexpr int kWave = 12;
  const auto members = onboard_members(c, "club-a", kWave, "wave");
  const std::string run = unique("wave");
  cr_assert_eq(sh(redis_cli() + "CLIENT PAUSE 150 WRITE | grep -qx OK"), 0);
  std::vector<HttpResponse> answers(kWave);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWave; ++i) {
    threads.emplace_back([&, i] {
      answers[static_cast<std::size_t>(i)] = client("A").post(
          "/api/v1/transactions/settled",
          settle_body("club-a", members[static_cast<std::size_t>(i)], unique("wtx"), 1000), run + "-" + std::to_string(i));
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : answers) cr_assert_eq(r.status, 200, "%s", r.body.c_str());

  Pg pg = connect_db();
  // One transaction a worker (the fixture runs two): records of one
  // transaction share its now().
  const int transactions = std::stoi(one(pg.get(), "SELECT count(DISTINCT created_at) FROM idempotency_records "
                                                   "WHERE idem_key LIKE '" + run + "-%'"));
  cr_expect(transactions <= 2, "%d transactions for one wave of %d settles", transactions, kWave);
  for (const auto& id : members) cr_expect_eq(i64(data_of(c.get("/api/v1/members/" + id + "/balance")), "pointsBalance"), 10);
}
