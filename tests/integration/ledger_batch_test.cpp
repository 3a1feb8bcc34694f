// Settles that queue while every ledger connection is busy go to PostgreSQL
// together (mr_write_batch): each keeps its own outcome, its idempotency
// record and the books stay exact, failing ones included. To make the
// queue certain, a session of the test holds some members' rows locked:
// settles for them fill every connection, everything sent after them
// queues, and the lock's release lets the queue go as batches. Requests of
// one transaction share its now(): idempotency records with the same
// created_at were written by one batch.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ledger/result_render.hpp"
#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/row_gate.hpp"

using namespace mr::test;

namespace {

constexpr int kGate = 16;  // more settles than the fixture's 2 workers x 4 connections

// What became of the gate's settles: answered 200, answered at all.
struct GateAnswers {
  std::atomic<int> ok{0}, returned{0};
};

// Settles for the gate's members from threads of their own: they take
// every connection and wait on the lock.
std::vector<std::thread> fill_connections(const std::vector<std::string>& gate, GateAnswers& answers) {
  std::vector<std::thread> threads;
  for (int i = 0; i < kGate; ++i) {
    threads.emplace_back([&gate, &answers, i] {
      auto r = client("A").post("/api/v1/transactions/settled",
                                settle_body("club-a", gate[static_cast<std::size_t>(i) % gate.size()],
                                            unique("gtx"), 100),
                                unique("gate"));
      if (r.status == 200) answers.ok++;
      answers.returned++;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return threads;
}

std::vector<std::string> onboard(MrClient& c, const std::string& ref, int n, const std::string& prefix) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(unique(prefix));
    cr_assert_eq(post(c, "/api/v1/members", member_body(ref, ids.back())).status, 201);
  }
  return ids;
}

// The largest number of this run's idempotency records one transaction wrote.
int largest_batch(PGconn* pg, const std::string& key_prefix) {
  return std::stoi(one(pg, "SELECT coalesce(max(n), 0) FROM (SELECT count(*) n FROM idempotency_records "
                           "WHERE idem_key LIKE '" + key_prefix + "%' GROUP BY created_at) g"));
}

}  // namespace

Test(batch, queued_settles_keep_their_own_outcomes_and_the_books) {
  auto c = client("A");
  const auto gate = onboard(c, "club-a", 4, "gate");
  constexpr int kMembers = 40;
  const auto members = onboard(c, "club-a", kMembers, "bm");
  const std::string settled_before = unique("tx-before");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-a", members[0], settled_before, 100)).status,
               200);
  const std::string replay_key = unique("bk-replay");
  const std::string replay_body = settle_body("club-a", members[1], unique("tx-replayed"), 200);
  const auto first = c.post("/api/v1/transactions/settled", replay_body, replay_key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  const std::string run = unique("bk");

  Gate lock(gate);
  GateAnswers gate_answers;
  auto gate_threads = fill_connections(gate, gate_answers);

  // club-a earns 100 bp: member i is awarded amount (1000 + 100 i) / 100.
  std::vector<HttpResponse> awards(kMembers);
  HttpResponse unknown, currency, duplicate, replay, wrong_partner;
  std::vector<std::thread> threads;
  for (int i = 0; i < kMembers; ++i) {
    threads.emplace_back([&, i] {
      awards[static_cast<std::size_t>(i)] =
          client("A").post("/api/v1/transactions/settled",
                           settle_body("club-a", members[static_cast<std::size_t>(i)], unique("btx"), 1000 + 100 * i),
                           run + "-award-" + std::to_string(i));
    });
  }
  threads.emplace_back([&] {
    unknown = client("A").post("/api/v1/transactions/settled", settle_body("club-a", unique("nobody"), unique("t"), 100),
                               run + "-unknown");
  });
  threads.emplace_back([&] {
    currency = client("A").post("/api/v1/transactions/settled",
                                settle_body("club-a", members[2], unique("t"), 100, "USD"), run + "-currency");
  });
  threads.emplace_back([&] {
    duplicate = client("A").post("/api/v1/transactions/settled",
                                 settle_body("club-a", members[3], settled_before, 100), run + "-duplicate");
  });
  threads.emplace_back([&] { replay = client("A").post("/api/v1/transactions/settled", replay_body, replay_key); });
  threads.emplace_back([&] {
    wrong_partner = client("A").post("/api/v1/transactions/settled",
                                     settle_body("club-b", members[4], unique("t"), 100), run + "-partner");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  lock.release();
  for (auto& t : threads) t.join();
  for (auto& t : gate_threads) t.join();
  cr_expect_eq(gate_answers.ok.load(), kGate);

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
  const auto gate = onboard(a, "club-a", 4, "gate");
  auto c = client("I");
  const auto members = onboard(c, "club-i", 8, "pm");
  const std::string run = unique("bp");
  const std::string before = scrape();
  Gate lock(gate);
  GateAnswers gate_answers;
  auto gate_threads = fill_connections(gate, gate_answers);
  std::atomic<int> ok{0}, refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i) {
    threads.emplace_back([&, i] {
      auto r = client("I").post("/api/v1/transactions/settled",
                                settle_body("club-i", members[static_cast<std::size_t>(i) % 8], unique("ptx"), 50),
                                run + "-" + std::to_string(i));
      if (r.status == 200) ok++;
      else if (error_code(r) == "insufficient_partner_points_pool") refused++;
      else other++;
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  lock.release();
  for (auto& t : threads) t.join();
  for (auto& t : gate_threads) t.join();
  cr_expect_eq(gate_answers.ok.load(), kGate);
  cr_expect_eq(other.load(), 0);
  cr_expect_eq(ok.load(), 20, "exactly the pool's worth is awarded");
  cr_expect_eq(refused.load(), 20);
  std::int64_t held = 0;
  for (const auto& m : members) held += i64(data_of(c.get("/api/v1/members/" + m + "/balance")), "pointsBalance");
  cr_expect_eq(held, 1000);
  Pg pg = connect_db();
  cr_expect_eq(one(pg.get(), "SELECT mr_pool_total(club_id) FROM clubs WHERE partner_ref = 'club-i'"), "0");
  // The path under test: batches ran, and one whose stripe ran dry failed
  // as a whole and went one by one (009_set_based_batch.sql).
  // Each worker publishes its pool's counters every second.
  std::string after = scrape();
  const auto fallbacks = [](const std::string& text) { return metric(text, "mr_ledger_batch_fallbacks_total"); };
  for (int i = 0; i < 30 && fallbacks(after) <= fallbacks(before); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    after = scrape();
  }
  EXPECT_GREW(before, after, "mr_ledger_batches_total", 1);
  EXPECT_GREW(before, after, "mr_ledger_batch_fallbacks_total", 1);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0, "mrctl audit found a difference");
}

// Reads from many clients at once share connections and syncs in the
// pipeline: each answer must still be its own request's.
Test(batch, pipelined_reads_each_get_their_own_answer) {
  auto c = client("A");
  constexpr int kMembers = 24;
  const auto members = onboard(c, "club-a", kMembers, "rm");
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
  const auto gate = onboard(c, "club-a", 4, "hold");
  const auto reader = onboard(c, "club-a", 1, "hr").front();
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-a", reader, unique("hrtx"), 700)).status,
               200);

  Gate lock(gate);
  GateAnswers gate_answers;
  auto gate_threads = fill_connections(gate, gate_answers);
  // Settles are queued behind the limit (each worker publishes its queue
  // every second): what follows is sent while they wait. A free settle
  // connection takes every settle already on its way as one batch, so a
  // wave can fill a worker's two settle connections and leave nothing
  // queued (seen once in CI); a further wave then finds them busy.
  int gate_sent = kGate;
  double queued = 0;
  for (int i = 1; i <= 30 && queued < 1; ++i) {
    queued = metric(scrape(), "mr_ledger_pool_queued");
    if (queued >= 1) break;
    if (i % 10 == 0) {
      for (auto& t : fill_connections(gate, gate_answers)) gate_threads.push_back(std::move(t));
      gate_sent += kGate;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  cr_expect_geq(queued, 1, "no settle was held back: the test would prove nothing");

  // From many connections, so that both workers serve some.
  constexpr int kClients = 8;
  std::atomic<int> answered{0}, wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back([&] {
      auto tc = client("A");
      const auto balance = tc.get("/api/v1/members/" + reader + "/balance");
      if (balance.status != 200 || i64(data_of(balance), "pointsBalance") != 7) wrong++;
      const auto points = tc.get("/api/v1/members/" + reader + "/points?limit=5");
      if (points.status != 200) wrong++;
      if (post(tc, "/api/v1/members", member_body("club-a", unique("hw"))).status != 201) wrong++;
      answered++;
    });
  }
  for (int i = 0; i < 100 && answered.load() < kClients; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int answered_while_held = answered.load();
  const int settles_done_meanwhile = gate_answers.returned.load();
  lock.release();
  for (auto& t : threads) t.join();
  for (auto& t : gate_threads) t.join();
  cr_expect_eq(answered_while_held, kClients, "reads and writes waited behind held-back settles");
  cr_expect_eq(settles_done_meanwhile, 0, "a settle answered while its member's row was locked");
  cr_expect_eq(wrong.load(), 0);
  cr_expect_eq(gate_answers.ok.load(), gate_sent, "the held-back settles did not all go once the gate opened");
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
  const auto members = onboard(c, "club-a", kWave, "wave");
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
