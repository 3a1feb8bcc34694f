// Reversals, and redemptions, that queue while every ledger connection is
// busy go to PostgreSQL together (mr_write_batch_each, 023): each runs
// through mr_write in the batch's one transaction, so each answers what it
// would have answered alone, in the order they queued, keeps its own
// idempotency record, and the books stay exact. A batch holds one op only.
//
// To make the queue certain, a session of the test holds some members'
// rows locked (row_gate.hpp): updates of them take every connection of
// both workers and wait on the lock (seen in pg_stat_activity), the
// requests under test queue behind them (their idempotency claims seen in
// Redis),
// and the lock's release lets the queue go as batches. Requests of one
// transaction share its now(): idempotency records with one created_at
// were written by one batch.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/row_gate.hpp"
#include "tests/integration/shell_run.hpp"

using namespace mr::test;

namespace {

constexpr int kConnections = 8;  // the fixture's 2 workers x mr_ledger_pool_size 4

// Polls `done` until it holds or the deadline passes; whether it held.
bool poll(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

int waiting_on_locks(PGconn* pg) {
  return std::stoi(one(pg, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                           "AND backend_type = 'client backend'"));
}

// Updates of the gate's locked members (POST /api/v1/members again), from
// threads of their own: a write that is never batched, so each takes a
// connection of its own and waits on the lock (each answers 200 once it is
// released). Reversals would not do: queued together they go as one batch
// on one connection. Which worker accepts a new connection is the
// kernel's choice, often the same one many times over, so more are sent, a
// pair at a time, until PostgreSQL shows every connection of both workers
// waiting (or 3 s passed: a worker left with a free connection runs some
// requests under test at once; the test still holds, its batches are just
// fewer). Everything here stays well inside mr_ledger_query_timeout (5 s),
// which would answer a request held longer 503.
class GateLoad {
 public:
  GateLoad(const std::vector<std::string>& gate, PGconn* pg) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    while (waiting_on_locks(pg) < kConnections && std::chrono::steady_clock::now() < deadline &&
           sent_ < kGateMost) {
      for (int i = 0; i < 2; ++i, ++sent_) {
        threads_.emplace_back([this, &gate, n = sent_] {
          auto r = client("A").post("/api/v1/members",
                                    member_body("club-a", gate[static_cast<std::size_t>(n) % gate.size()]),
                                    unique("gate"));
          if (r.status == 200) updated_++;
        });
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  // Joins the threads; every gate request answered as expected.
  void finish() {
    for (auto& t : threads_) t.join();
    cr_expect_eq(updated_.load(), sent_);
  }

 private:
  static constexpr int kGateMost = 64;
  std::vector<std::thread> threads_;
  std::atomic<int> updated_{0};
  int sent_ = 0;
};

// Idempotency claims in Redis whose key starts with `prefix`: a request
// whose claim is there has gone on to its worker's pool (and, with every
// connection held by the gate, queued there). The pool's queue gauge cannot
// be read meanwhile: /metrics reads the books through the same busy pools.
int claims(const std::string& prefix) {
  const Run r = run(redis_cli() + "--scan --pattern " + shell_quote("mr:idem:*:" + prefix + "*"));
  cr_assert_eq(r.code, 0, "redis-cli: %s", r.err.c_str());
  return static_cast<int>(std::count(r.out.begin(), r.out.end(), '\n'));
}

// Waits until the `n` requests under test keyed `prefix`... have all gone
// on to the pools, or 1.5 s passed (the gate must open well inside
// mr_ledger_query_timeout).
void wait_queued(const std::string& prefix, int n) {
  poll([&] { return claims(prefix) >= n; }, std::chrono::milliseconds(1500));
}

// /metrics once every worker has published what it counted until now
// (each publishes about every second, so a batch of the test before may
// show up late): two scrapes a publication apart that agree.
std::string settled_scrape() {
  const auto same = [](const std::string& x, const std::string& y) {
    for (const char* series : {"mr_ledger_write_batches_total", "mr_ledger_batched_writes_total",
                               "mr_ledger_batch_fallbacks_total"}) {
      if (metric(x, series) != metric(y, series)) return false;
    }
    return true;
  };
  std::string last = scrape();
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    std::string now = scrape();
    if (same(now, last)) return now;
    last = std::move(now);
  }
  return last;
}

// /metrics once `series` grew past `before`'s, or after 5 s (each worker
// publishes its counters about every second).
std::string scrape_once_grown(const std::string& before, const char* series) {
  std::string after = scrape();
  poll([&] {
    after = scrape();
    return metric(after, series) > metric(before, series);
  }, std::chrono::seconds(5));
  return after;
}

// A request under test: where it goes, its key, and its answer.
struct Sent {
  std::string path, body, key;
  HttpResponse answer;
};

// Sends every request at once, each from its own thread.
void send_all(const std::string& which, std::vector<Sent>& sent, std::vector<std::thread>& threads) {
  for (auto& s : sent) {
    threads.emplace_back([which, &s] { s.answer = client(which).post(s.path, s.body, s.key); });
  }
}

// Every key replays its own answer, byte for byte.
void expect_replays(const std::string& which, const std::vector<Sent>& sent) {
  auto c = client(which);
  for (const auto& s : sent) {
    const auto again = c.post(s.path, s.body, s.key);
    cr_expect_eq(again.status, s.answer.status, "%s", s.key.c_str());
    cr_expect_eq(again.body, s.answer.body, "%s: %s / %s", s.key.c_str(), again.body.c_str(), s.answer.body.c_str());
  }
}

std::string settle_now(MrClient& c, const std::string& ref, const std::string& member, std::int64_t amount) {
  const std::string tx = unique("wtx");
  const auto r = post(c, "/api/v1/transactions/settled", settle_body(ref, member, tx, amount));
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  return tx;
}

}  // namespace

Test(write_batches, queued_reversals_answer_as_one_by_one_and_keep_the_books) {
  auto c = client("A");
  const auto gate = onboard_members(c, "club-a", 4, "wgate");
  // club-a earns 100 bp: an amount of 100 n minor units is n points.
  constexpr int kFull = 20;
  const auto full = onboard_members(c, "club-a", kFull, "wfull");
  std::vector<std::string> full_tx;
  for (int i = 0; i < kFull; ++i) full_tx.push_back(settle_now(c, "club-a", full[static_cast<std::size_t>(i)], 1000 + 100 * i));
  const auto others = onboard_members(c, "club-a", 5, "wrev");
  const std::string& partial = others[0];  // 100 points; 30 and 50 reversed at once
  const std::string partial_tx = settle_now(c, "club-a", partial, 10000);
  const std::string& exceed = others[1];  // 10 points; 600 and 600 of 1000 reversed at once
  const std::string exceed_tx = settle_now(c, "club-a", exceed, 1000);
  const std::string& twice = others[2];  // 20 points; reversed whole twice at once
  const std::string twice_tx = settle_now(c, "club-a", twice, 2000);
  const std::string& done = others[3];  // 10 points, reversed whole before
  const std::string done_tx = settle_now(c, "club-a", done, 1000);
  cr_assert_eq(post(c, "/api/v1/transactions/reversed", reverse_body("club-a", done, done_tx, 0)).status, 200);
  const std::string& plain = others[4];  // 5 points, a transaction of nobody's
  settle_now(c, "club-a", plain, 500);
  // A reversal answered before, sent again with its key among the batch.
  const std::string replay_key = unique("wreplay");
  const std::string replay_tx = settle_now(c, "club-a", plain, 700);
  const std::string replay_body = reverse_body("club-a", plain, replay_tx, 300);
  const auto first = c.post("/api/v1/transactions/reversed", replay_body, replay_key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());

  const std::string run = unique("wr");
  const std::string path = "/api/v1/transactions/reversed";
  std::vector<Sent> sent;
  for (int i = 0; i < kFull; ++i) {
    sent.push_back({path, reverse_body("club-a", full[static_cast<std::size_t>(i)], full_tx[static_cast<std::size_t>(i)], 0),
                    run + "-full-" + std::to_string(i), {}});
  }
  const std::size_t at = sent.size();
  sent.push_back({path, reverse_body("club-a", partial, partial_tx, 3000), run + "-partial-30", {}});
  sent.push_back({path, reverse_body("club-a", partial, partial_tx, 5000), run + "-partial-50", {}});
  sent.push_back({path, reverse_body("club-a", exceed, exceed_tx, 600), run + "-exceed-1", {}});
  sent.push_back({path, reverse_body("club-a", exceed, exceed_tx, 600), run + "-exceed-2", {}});
  sent.push_back({path, reverse_body("club-a", twice, twice_tx, 0), run + "-twice-1", {}});
  sent.push_back({path, reverse_body("club-a", twice, twice_tx, 0), run + "-twice-2", {}});
  sent.push_back({path, reverse_body("club-a", done, done_tx, 0), run + "-done", {}});
  sent.push_back({path, reverse_body("club-a", plain, unique("nobody-tx"), 0), run + "-missing", {}});
  sent.push_back({path, replay_body, replay_key, {}});

  Pg pg = connect_db();
  const std::string before = settled_scrape();
  Gate lock(gate);
  GateLoad load(gate, pg.get());
  std::vector<std::thread> threads;
  send_all("A", sent, threads);
  wait_queued(run + "-", static_cast<int>(sent.size()) - 1);
  lock.release();
  for (auto& t : threads) t.join();
  load.finish();

  for (int i = 0; i < kFull; ++i) {
    const auto& r = sent[static_cast<std::size_t>(i)].answer;
    cr_assert_eq(r.status, 200, "%s", r.body.c_str());
    auto d = data_of(r);
    cr_expect_eq(i64(d, "pointsReversed"), 10 + i);
    cr_expect_eq(i64(d["balances"], "pointsBalance"), 0);
  }
  // Two partial reversals of one transaction: both, in either order, each
  // seeing the other's if it ran second.
  const auto& p30 = sent[at].answer;
  const auto& p50 = sent[at + 1].answer;
  cr_assert_eq(p30.status, 200, "%s", p30.body.c_str());
  cr_assert_eq(p50.status, 200, "%s", p50.body.c_str());
  const auto d30 = data_of(p30), d50 = data_of(p50);
  cr_expect_eq(i64(d30, "pointsReversed"), 30);
  cr_expect_eq(i64(d50, "pointsReversed"), 50);
  const std::int64_t b30 = i64(d30["balances"], "pointsBalance"), b50 = i64(d50["balances"], "pointsBalance");
  cr_expect((b30 == 70 && b50 == 20) || (b30 == 20 && b50 == 50), "balances %ld and %ld", static_cast<long>(b30),
            static_cast<long>(b50));
  // 600 and 600 of 1000: exactly one fits.
  const auto& e1 = sent[at + 2].answer;
  const auto& e2 = sent[at + 3].answer;
  cr_expect_eq((e1.status == 200) + (e2.status == 200), 1, "%s / %s", e1.body.c_str(), e2.body.c_str());
  cr_expect_eq(error_code(e1.status == 200 ? e2 : e1), std::string("reversal_exceeds_settled_amount"));
  cr_expect_eq(i64(data_of(e1.status == 200 ? e1 : e2), "pointsReversed"), 6);
  // The whole amount twice: exactly one.
  const auto& t1 = sent[at + 4].answer;
  const auto& t2 = sent[at + 5].answer;
  cr_expect_eq((t1.status == 200) + (t2.status == 200), 1, "%s / %s", t1.body.c_str(), t2.body.c_str());
  cr_expect_eq(error_code(t1.status == 200 ? t2 : t1), std::string("transaction_already_reversed"));
  cr_expect_eq(error_code(sent[at + 6].answer), std::string("transaction_already_reversed"));
  cr_expect_eq(error_code(sent[at + 7].answer), std::string("transaction_not_found"));
  // The replay is the first answer, byte for byte.
  cr_expect_eq(sent[at + 8].answer.status, 200);
  cr_expect_eq(sent[at + 8].answer.body, first.body);

  for (int i = 0; i < kFull; ++i) cr_expect_eq(points_balance(c, full[static_cast<std::size_t>(i)]), 0);
  cr_expect_eq(points_balance(c, partial), 20);
  cr_expect_eq(points_balance(c, exceed), 4);
  cr_expect_eq(points_balance(c, twice), 0);
  cr_expect_eq(points_balance(c, done), 0);
  cr_expect_eq(points_balance(c, plain), 12 - 3);
  // Each kept outcome has its own record; each key replays its own answer.
  cr_expect_eq(one(pg.get(), "SELECT count(*) FROM idempotency_records WHERE idem_key LIKE '" + run + "%'"),
               std::to_string(sent.size() - 1));
  expect_replays("A", sent);

  // The path under test: reversals went in batches, none failed as a whole.
  cr_expect(largest_batch(pg.get(), run) > 1, "no two reversals ran in one transaction");
  const std::string after = scrape_once_grown(before, "mr_ledger_write_batches_total");
  EXPECT_GREW(before, after, "mr_ledger_write_batches_total", 1);
  EXPECT_GREW(before, after, "mr_ledger_batched_writes_total", 2);
  cr_expect_eq(metric(after, "mr_ledger_batch_fallbacks_total"), metric(before, "mr_ledger_batch_fallbacks_total"),
               "a batch failed and ran one by one");
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0, "mrctl audit found a difference");
}

Test(write_batches, queued_redemptions_take_the_capacity_in_turn) {
  // club-e: 10000 bp (100 minor units settle 100 points), 1 minor unit a
  // point. The test tops its pool up by what its settles draw and its cash
  // capacity by 12 redemptions of 100; 30 members redeem 100 each at once:
  // exactly 12 fit (with what capacity the club had before), the rest are
  // refused for capacity, and the capacity ends where it began.
  constexpr int kMembers = 30, kFit = 12;
  auto e = client("E");
  cr_assert_eq(sh(mrctl_cmd() + " pool topup --ref club-e --points " + std::to_string(100 * kMembers) + " >/dev/null"),
               0);
  const auto members = onboard_members(e, "club-e", kMembers, "wred");
  for (const auto& m : members) settle_now(e, "club-e", m, 100);
  Pg pg = connect_db();
  const std::int64_t capacity =
      std::stoll(one(pg.get(), "SELECT cash_capacity_minor FROM clubs WHERE partner_ref = 'club-e'"));
  cr_assert_eq(sh(mrctl_cmd() + " capacity topup --ref club-e --minor " + std::to_string(100 * kFit) + " >/dev/null"),
               0);
  const std::int64_t fit = std::min<std::int64_t>(kMembers, (capacity + 100 * kFit) / 100);

  auto a = client("A");
  const auto gate = onboard_members(a, "club-a", 4, "wgate");
  const std::string run = unique("wd");
  std::vector<Sent> sent;
  std::string request_ids;
  for (int i = 0; i < kMembers; ++i) {
    const std::string request_id = unique("wrq");
    request_ids += (request_ids.empty() ? "'" : ",'") + request_id + "'";
    sent.push_back({"/api/v1/redemptions", redeem_body("club-e", members[static_cast<std::size_t>(i)], request_id, 100),
                    run + "-" + std::to_string(i), {}});
  }
  const std::string before = settled_scrape();
  Gate lock(gate);
  GateLoad load(gate, pg.get());
  std::vector<std::thread> threads;
  send_all("E", sent, threads);
  wait_queued(run + "-", kMembers);
  lock.release();
  for (auto& t : threads) t.join();
  load.finish();

  int accepted = 0, refused = 0;
  for (int i = 0; i < kMembers; ++i) {
    const auto& r = sent[static_cast<std::size_t>(i)].answer;
    const std::int64_t held = points_balance(e, members[static_cast<std::size_t>(i)]);
    if (r.status == 202) {
      accepted++;
      auto d = data_of(r);
      cr_expect_eq(i64(d, "cashValueMinor"), 100);
      cr_expect_eq(i64(d["balances"], "pointsBalance"), 0);
      cr_expect_eq(i64(d["balances"], "reservedPointsBalance"), 100);
      cr_expect_eq(held, 0);
    } else {
      cr_expect_eq(error_code(r), std::string("insufficient_partner_cash_capacity"), "%s", r.body.c_str());
      refused++;
      cr_expect_eq(held, 100, "a refused redemption took nothing");
    }
  }
  cr_expect_eq(accepted, fit, "exactly the capacity's worth is accepted");
  cr_expect_eq(refused, kMembers - fit);
  cr_expect_eq(one(pg.get(), "SELECT cash_capacity_minor FROM clubs WHERE partner_ref = 'club-e'"),
               std::to_string(capacity + 100 * kFit - 100 * fit));
  cr_expect_eq(one(pg.get(), "SELECT count(*) FROM redemptions WHERE request_id IN (" + request_ids + ")"),
               std::to_string(accepted));
  cr_expect_eq(one(pg.get(), "SELECT count(*) FROM idempotency_records WHERE idem_key LIKE '" + run + "-%'"),
               std::to_string(kMembers));
  expect_replays("E", sent);

  cr_expect(largest_batch(pg.get(), run + "-") > 1, "no two redemptions ran in one transaction");
  const std::string after = scrape_once_grown(before, "mr_ledger_write_batches_total");
  EXPECT_GREW(before, after, "mr_ledger_write_batches_total", 1);
  cr_expect_eq(metric(after, "mr_ledger_batch_fallbacks_total"), metric(before, "mr_ledger_batch_fallbacks_total"),
               "a batch failed and ran one by one");
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0, "mrctl audit found a difference");
}

// A batch that fails runs its writes one by one, each with its own
// outcome: here a club being moved (020) is among the batch's clubs, so
// the batch raises MR503 before it does anything; one by one, the other
// club's redemptions are accepted and only the moving club's answer 503.
Test(write_batches, a_failed_batch_runs_its_writes_one_by_one) {
  constexpr int kEach = 12;
  auto a = client("A");
  const auto gate = onboard_members(a, "club-a", 4, "wgate");
  const auto members = onboard_members(a, "club-a", kEach, "wfb");
  for (const auto& m : members) settle_now(a, "club-a", m, 10000);  // 100 points each
  const std::string run = unique("wf");
  std::vector<Sent> sent;
  for (int i = 0; i < kEach; ++i) {
    sent.push_back({"/api/v1/redemptions", redeem_body("club-a", members[static_cast<std::size_t>(i)], unique("wfq"), 100),
                    run + "-a-" + std::to_string(i), {}});
  }
  std::vector<Sent> moving;
  for (int i = 0; i < kEach; ++i) {
    moving.push_back({"/api/v1/redemptions", redeem_body("club-e", unique("nobody"), unique("wfq"), 100),
                      run + "-e-" + std::to_string(i), {}});
  }
  Pg pg = connect_db();
  const std::string before = settled_scrape();
  one(pg.get(), "UPDATE clubs SET moving = true WHERE partner_ref = 'club-e'");
  {
    Gate lock(gate);
    GateLoad load(gate, pg.get());
    std::vector<std::thread> threads;
    send_all("A", sent, threads);
    send_all("E", moving, threads);
    wait_queued(run + "-", 2 * kEach);
    lock.release();
    for (auto& t : threads) t.join();
    load.finish();
  }
  one(pg.get(), "UPDATE clubs SET moving = false WHERE partner_ref = 'club-e'");
  for (const auto& s : sent) cr_expect_eq(s.answer.status, 202, "%s", s.answer.body.c_str());
  for (const auto& s : moving) {
    cr_expect_eq(s.answer.status, 503, "%s", s.answer.body.c_str());
    cr_expect_eq(error_code(s.answer), std::string("service_unavailable"));
  }
  for (const auto& m : members) cr_expect_eq(points_balance(a, m), 0);
  const std::string after = scrape_once_grown(before, "mr_ledger_batch_fallbacks_total");
  EXPECT_GREW(before, after, "mr_ledger_write_batches_total", 1);
  EXPECT_GREW(before, after, "mr_ledger_batch_fallbacks_total", 1);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0, "mrctl audit found a difference");
}
