// Many parallel settled and reversed transactions for one member and one
// club through nginx; afterwards balances, pool and `mrctl audit` agree to
// the point (issue: ledger core, "Done means").
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

Test(concurrency, parallel_awards_and_reversals_for_one_member) {
  const std::string ref = "club-d";  // 10000 bp: points == amount, pool 1,000,000
  auto c0 = client("D");
  const std::string id = unique("hot");
  cr_assert_eq(post(c0, "/api/v1/members", member_body(ref, id)).status, 201);
  const auto pool_before = i64(data_of(post(c0, "/api/v1/transactions/settled",
                                            settle_body(ref, id, unique("seed"), 1)))["partner"],
                               "availablePointsPool") + 1;

  constexpr int kThreads = 8, kPerThread = 25;
  std::atomic<std::int64_t> awarded{0}, reversed{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto c = client("D");
      for (int i = 0; i < kPerThread; ++i) {
        const std::string tx = unique("ctx" + std::to_string(t));
        const std::int64_t amount = 100 + t * 10 + i;
        auto s1 = c.post("/api/v1/transactions/settled", settle_body(ref, id, tx, amount), unique("i"));
        if (s1.status != 200) { fprintf(stderr, "settle %ld %s\n", s1.status, s1.body.c_str()); failures++; continue; }
        awarded += amount;
        if (i % 2 == 0) {  // reverse half of them, in two parts
          auto r1 = c.post("/api/v1/transactions/reversed", reverse_body(ref, id, tx, amount / 3), unique("i"));
          auto r2 = c.post("/api/v1/transactions/reversed", reverse_body(ref, id, tx, 0), unique("i"));
          if (r1.status != 200 || r2.status != 200) { fprintf(stderr, "rev %ld %s %ld %s\n", r1.status, r1.body.c_str(), r2.status, r2.body.c_str()); failures++; continue; }
          reversed += amount;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  cr_assert_eq(failures.load(), 0);

  auto bd = data_of(c0.get("/api/v1/members/" + id + "/balance"));
  const std::int64_t expected = 1 + awarded.load() - reversed.load();
  cr_expect_eq(i64(bd, "pointsBalance"), expected);
  cr_expect_eq(i64(bd, "lifetimePointsEarned"), expected);
  // The pool gave exactly what the member holds.
  auto probe = post(c0, "/api/v1/transactions/settled", settle_body(ref, id, unique("probe"), 0 + 1));
  cr_assert_eq(probe.status, 200, "%s", probe.body.c_str());
  cr_expect_eq(i64(data_of(probe)["partner"], "availablePointsPool"), pool_before - expected - 1);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0, "mrctl audit found a difference");
}

Test(concurrency, parallel_awards_for_distinct_members_never_overdraw_pool) {
  // club-e: 10000 bp and a pool of 5000; 80 awards of 100 compete for it.
  const std::string ref = "club-e";
  std::vector<std::string> members;
  {
    auto c = client("E");
    for (int i = 0; i < 8; ++i) {
      members.push_back(unique("m"));
      cr_assert_eq(post(c, "/api/v1/members", member_body(ref, members.back())).status, 201);
    }
  }
  Tally tally{200, "insufficient_partner_points_pool"};
  race(tally, "E", 8, 10, [&](MrClient& c, int t) {
    return c.post("/api/v1/transactions/settled", settle_body(ref, members[t], unique("tx"), 100), unique("i"));
  });
  cr_expect_eq(tally.other.load(), 0);
  cr_expect_eq(tally.ok.load(), 50, "exactly the pool's worth is awarded");
  cr_expect_eq(tally.refused.load(), 30);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
}

Test(concurrency, one_transaction_id_settled_at_once_by_many) {
  // Eight members' requests carry the same externalTransactionId at the
  // same moment: exactly one award, the others duplicate_transaction.
  const std::string ref = "club-h";  // club-d's pool is asserted by the test above
  std::vector<std::string> members;
  {
    auto c = client("H");
    for (int i = 0; i < 8; ++i) {
      members.push_back(unique("dup"));
      cr_assert_eq(post(c, "/api/v1/members", member_body(ref, members.back())).status, 201);
    }
  }
  const std::string tx = unique("same-tx");
  Tally tally{200, "duplicate_transaction"};
  race(tally, "H", 8, 1, [&](MrClient& c, int t) {
    return c.post("/api/v1/transactions/settled", settle_body(ref, members[t], tx, 10), unique("i"));
  });
  cr_expect_eq(tally.ok.load(), 1);
  cr_expect_eq(tally.refused.load(), 7);
  cr_expect_eq(tally.other.load(), 0);
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);
}
