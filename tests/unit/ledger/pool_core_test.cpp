// The pool's decisions (modules/ledger/pool_core.hpp) over scripted
// connections: which connection takes a job, how batches form, how settles
// wait for the ones on their way, what a finished statement leads to, and
// when a slot reconnects. pg_pool.cpp runs the same templates over libpq.
#include <memory>
#include <string>
#include <vector>

#include <criterion/criterion.h>

#include "modules/ledger/pool_core.hpp"

using mr::ledger::BatchKind;
using mr::pg::ConnState;

namespace {

struct FakeJob {
  std::string name;
  BatchKind kind = BatchKind::none;
  bool read = false;
  std::string key;  // the idempotency key of a write
};

struct Traits {
  static BatchKind kind(const FakeJob& j) { return j.kind; }
  static bool is_read(const FakeJob& j) { return j.read; }
  static bool apart(const FakeJob& a, const FakeJob& b) { return !a.key.empty() && a.key == b.key; }
};

// A connection as the pool sees it: what it runs, by the same rules as
// pg_pool.cpp's Connection (a write needs it idle; reads pile up to the
// pipeline depth behind reads only).
struct FakeConn {
  ConnState st = ConnState::ready;
  bool refusing = false;   // connect() fails at once
  bool may = true;         // may_connect() when down
  bool unsynced = false;   // reads sent this pass, sync not yet sent
  std::vector<std::vector<std::string>> sent;  // each run/run_batch: the job names
  std::size_t reads = 0, writes = 0, settles = 0;

  ConnState state() const { return st; }
  bool idle() const { return st == ConnState::ready && reads + writes == 0; }
  bool takes_read() const { return st == ConnState::ready && reads + writes < mr::pg::kPipelineDepth && writes == 0; }
  bool gathering_reads() const { return unsynced && takes_read(); }
  std::size_t depth() const { return reads + writes; }
  bool runs_settles() const { return settles > 0; }
  bool may_connect() const { return st == ConnState::down && may; }
  void connect() { st = refusing ? ConnState::down : ConnState::connecting; }
  void account(const FakeJob& j) {
    if (j.read) {
      reads++;
      unsynced = true;
    } else {
      writes++;
    }
    if (j.kind == BatchKind::settle) settles++;
  }
  void run(std::unique_ptr<FakeJob> j) {
    account(*j);
    sent.push_back({j->name});
  }
  void run_batch(std::vector<std::unique_ptr<FakeJob>> jobs) {
    cr_assert(jobs.size() >= 2, "a batch holds two jobs or more");
    std::vector<std::string> names;
    for (const auto& j : jobs) {
      cr_assert(j->kind == jobs.front()->kind, "one kind in a batch");
      names.push_back(j->name);
    }
    writes++;  // one statement, one commit
    if (jobs.front()->kind == BatchKind::settle) settles++;
    sent.push_back(names);
  }
};

using Conns = std::vector<std::unique_ptr<FakeConn>>;
using Queue = std::deque<std::unique_ptr<FakeJob>>;

Conns conns(std::size_t n, ConnState st = ConnState::ready) {
  Conns c;
  for (std::size_t i = 0; i < n; ++i) {
    c.push_back(std::make_unique<FakeConn>());
    c.back()->st = st;
  }
  return c;
}

void push(Queue& q, std::string name, BatchKind kind, bool read = false, std::string key = {}) {
  q.push_back(std::make_unique<FakeJob>(FakeJob{std::move(name), kind, read, std::move(key)}));
}

std::vector<std::string> names(const Queue& q) {
  std::vector<std::string> n;
  for (const auto& j : q) n.push_back(j->name);
  return n;
}

void expect_names(const std::vector<std::string>& got, const std::vector<std::string>& want, const char* what) {
  std::string g, w;
  for (const auto& s : got) g += s + ",";
  for (const auto& s : want) w += s + ",";
  cr_expect_str_eq(g.c_str(), w.c_str(), "%s", what);
}

void dispatch(Queue& q, Conns& c, mr::pg::SettleArrivals& a, std::size_t settle_connections = 0) {
  mr::pg::dispatch<Traits>(q, c, a, settle_connections);
}

}  // namespace

Test(pool_core, a_lone_write_goes_alone_to_an_idle_connection) {
  auto c = conns(2);
  Queue q;
  mr::pg::SettleArrivals a;
  push(q, "s1", BatchKind::settle);
  dispatch(q, c, a);
  cr_expect(q.empty());
  cr_assert_eq(c[0]->sent.size(), 1u);
  expect_names(c[0]->sent[0], {"s1"}, "the first idle connection runs it alone");
  cr_expect(c[1]->sent.empty());
}

Test(pool_core, writes_queued_while_all_busy_go_as_one_batch_per_kind) {
  auto c = conns(1);
  c[0]->writes = 1;  // busy with a write
  Queue q;
  mr::pg::SettleArrivals a;
  push(q, "s1", BatchKind::settle, false, "k1");
  push(q, "r1", BatchKind::reverse, false, "k2");
  push(q, "s2", BatchKind::settle, false, "k3");
  push(q, "d1", BatchKind::redeem, false, "k4");
  push(q, "r2", BatchKind::reverse, false, "k5");
  dispatch(q, c, a);
  cr_expect_eq(q.size(), 5u, "nothing goes while the only connection runs a write");
  c[0]->writes = 0;
  dispatch(q, c, a);
  cr_assert_eq(c[0]->sent.size(), 1u, "a connection takes one statement, then is busy");
  expect_names(c[0]->sent[0], {"s1", "s2"}, "the oldest kind first, all of its kind");
  expect_names(names(q), {"r1", "d1", "r2"}, "the other kinds keep their order");
  c[0]->writes = 0;
  c[0]->settles = 0;
  dispatch(q, c, a);
  expect_names(c[0]->sent[1], {"r1", "r2"}, "reversals together, never with redemptions");
  c[0]->writes = 0;
  dispatch(q, c, a);
  expect_names(c[0]->sent[2], {"d1"}, "a lone redemption goes as it is");
  cr_expect(q.empty());
}

Test(pool_core, a_batch_takes_one_job_per_idempotency_key) {
  Queue q;
  push(q, "a", BatchKind::settle, false, "k1");
  push(q, "b", BatchKind::settle, false, "k1");  // a retry of a
  push(q, "c", BatchKind::settle, false, "k2");
  auto batch = mr::pg::take_batch<Traits>(q, BatchKind::settle);
  std::vector<std::string> taken;
  for (const auto& j : batch) taken.push_back(j->name);
  expect_names(taken, {"a", "c"}, "the later claim of k1 waits for the next batch");
  expect_names(names(q), {"b"}, "and stays queued");
}

Test(pool_core, a_batch_holds_at_most_the_limit) {
  Queue q;
  for (std::size_t i = 0; i < mr::pg::kBatchLimit + 3; ++i) {
    push(q, "s" + std::to_string(i), BatchKind::settle, false, "k" + std::to_string(i));
  }
  auto batch = mr::pg::take_batch<Traits>(q, BatchKind::settle);
  cr_expect_eq(batch.size(), mr::pg::kBatchLimit);
  cr_expect_eq(q.size(), 3u);
  const std::string next = "s" + std::to_string(mr::pg::kBatchLimit);  // outlives the macro's locals
  cr_expect_str_eq(q.front()->name.c_str(), next.c_str(), "in order");
}

Test(pool_core, reads_join_the_reads_of_this_pass_then_the_least_loaded) {
  auto c = conns(3);
  c[0]->writes = 1;       // runs a write: takes no read
  c[1]->reads = 5;        // reads, already synced
  c[2]->reads = 2;
  c[2]->unsynced = true;  // reads of this pass wait for their sync
  FakeJob read{"r", BatchKind::none, true, {}};
  cr_expect_eq(mr::pg::connection_for<Traits>(c, read, 0), c[2].get(), "joins the unsynced reads");
  c[2]->unsynced = false;
  c[2]->reads = 9;
  cr_expect_eq(mr::pg::connection_for<Traits>(c, read, 0), c[1].get(), "else the least loaded reader");
  c[1]->reads = mr::pg::kPipelineDepth;
  c[2]->reads = mr::pg::kPipelineDepth;
  cr_expect_null(mr::pg::connection_for<Traits>(c, read, 0), "a full pipeline takes no more");
  FakeJob write{"w", BatchKind::none, false, {}};
  c[1]->reads = 1;
  cr_expect_null(mr::pg::connection_for<Traits>(c, write, 0), "a write needs an idle connection");
  c[1]->reads = 0;
  cr_expect_eq(mr::pg::connection_for<Traits>(c, write, 0), c[1].get());
}

Test(pool_core, settles_beyond_settle_connections_let_the_jobs_behind_them_go) {
  auto c = conns(3);
  Queue q;
  mr::pg::SettleArrivals a;
  c[0]->writes = 1;
  c[0]->settles = 1;  // one connection runs settles; the limit is one
  push(q, "s1", BatchKind::settle, false, "k1");
  push(q, "read", BatchKind::none, true);
  push(q, "s2", BatchKind::settle, false, "k2");
  push(q, "rev", BatchKind::reverse, false, "k3");
  dispatch(q, c, a, 1);
  expect_names(names(q), {"s1", "s2"}, "the settles wait for the settling connection");
  cr_assert_eq(c[1]->sent.size(), 1u);
  expect_names(c[1]->sent[0], {"read"}, "the read behind them went");
  cr_assert_eq(c[2]->sent.size(), 1u);
  expect_names(c[2]->sent[0], {"rev"}, "and the reversal");
  c[0]->writes = 0;
  c[0]->settles = 0;
  dispatch(q, c, a, 1);
  cr_assert_eq(c[0]->sent.size(), 1u);
  expect_names(c[0]->sent[0], {"s1", "s2"}, "the settles that gathered share one commit");
}

Test(pool_core, a_settle_waits_for_those_on_their_way_and_not_for_later_ones) {
  auto c = conns(1);
  Queue q;
  mr::pg::SettleArrivals a;
  const auto t1 = a.arriving();
  const auto t2 = a.arriving();
  // t1 arrives: it queues, and waits for t2, which was on its way.
  a.arrived(t1);
  push(q, "s1", BatchKind::settle, false, "k1");
  dispatch(q, c, a);
  cr_expect_eq(q.size(), 1u, "s1 waits for the settle already on its way");
  const auto t3 = a.arriving();  // set out after the wait began
  cr_expect(a.arrived(t2), "t2 was the last awaited: the queue may go");
  push(q, "s2", BatchKind::settle, false, "k2");
  dispatch(q, c, a);
  cr_assert_eq(c[0]->sent.size(), 1u, "t3 came later: nobody waits for it");
  expect_names(c[0]->sent[0], {"s1", "s2"}, "s1 and s2 in one batch");
  cr_expect_not(a.awaiting(), "the wait ended with the batch");
  cr_expect_not(a.arrived(t3), "no wait was begun for t3");
}

Test(pool_core, a_lone_settle_with_nothing_on_its_way_goes_at_once) {
  auto c = conns(1);
  Queue q;
  mr::pg::SettleArrivals a;
  a.arrived(a.arriving());
  push(q, "s1", BatchKind::settle);
  dispatch(q, c, a);
  cr_expect(q.empty());
}

Test(pool_core, a_full_batch_does_not_wait_for_arrivals) {
  auto c = conns(1);
  Queue q;
  mr::pg::SettleArrivals a;
  a.arriving();  // never arrives (in this test)
  for (std::size_t i = 0; i < mr::pg::kBatchLimit; ++i) {
    push(q, "s" + std::to_string(i), BatchKind::settle, false, "k" + std::to_string(i));
  }
  dispatch(q, c, a);
  cr_expect(q.empty(), "a full batch goes without waiting");
  cr_assert_eq(c[0]->sent.size(), 1u);
  cr_expect_eq(c[0]->sent[0].size(), mr::pg::kBatchLimit);
}

Test(pool_core, waiting_settles_do_not_hold_reads_or_other_writes) {
  auto c = conns(2);
  Queue q;
  mr::pg::SettleArrivals a;
  a.arriving();
  push(q, "s1", BatchKind::settle, false, "k1");
  push(q, "read", BatchKind::none, true);
  push(q, "red", BatchKind::redeem, false, "k2");
  dispatch(q, c, a);
  expect_names(names(q), {"s1"}, "only the settle waits");
  expect_names(c[0]->sent[0], {"read"}, "the read went");
  expect_names(c[1]->sent[0], {"red"}, "the redemption went");
}

Test(pool_core, an_unserved_job_opens_one_connection_per_waiting_job) {
  auto c = conns(4, ConnState::down);
  c[1]->may = false;  // waits out a refusal
  mr::pg::open_for_waiting(c, 2);
  cr_expect_eq(c[0]->st, ConnState::connecting);
  cr_expect_eq(c[1]->st, ConnState::down, "a slot that waits out a refusal stays down");
  cr_expect_eq(c[2]->st, ConnState::connecting);
  cr_expect_eq(c[3]->st, ConnState::down, "two jobs: two connects");
  mr::pg::open_for_waiting(c, 2);
  cr_expect_eq(c[3]->st, ConnState::down, "connects under way count");
}

Test(pool_core, a_refused_connect_does_not_count_as_connecting) {
  auto c = conns(3, ConnState::down);
  c[0]->refusing = true;
  mr::pg::open_for_waiting(c, 1);
  cr_expect_eq(c[1]->st, ConnState::connecting, "the next slot tries");
  cr_expect_eq(c[2]->st, ConnState::down);
  cr_expect_not(mr::pg::none_can_serve(c));
  c[1]->st = ConnState::down;
  cr_expect(mr::pg::none_can_serve(c), "all down: the queue is answered unavailable");
}

Test(pool_core, reconnect_waits_after_refusal_not_after_loss) {
  mr::pg::Reconnect r;
  cr_expect(r.may(ConnState::down, 0));
  cr_expect_not(r.may(ConnState::connecting, 0));
  r.refused(5000);
  cr_expect_not(r.may(ConnState::down, 5999), "a refusing server is not hammered");
  cr_expect(r.may(ConnState::down, 6000));
  r.refused(7000);
  r.lost();
  cr_expect(r.may(ConnState::down, 7000), "a connection that worked reconnects at once");
  r.hung(3);
  r.hung(3);
  cr_expect_eq(r.first_host, 2);
  r.hung(3);
  cr_expect_eq(r.first_host, 0, "a hung host: the next try starts one further on");
}

Test(pool_core, sqlstates_lost_and_retryable) {
  cr_expect(mr::pg::lost_sqlstate(""), "no answer at all");
  cr_expect(mr::pg::lost_sqlstate("08006"));
  cr_expect(mr::pg::lost_sqlstate("57P01"), "admin shutdown");
  cr_expect_not(mr::pg::lost_sqlstate("23505"));
  cr_expect_not(mr::pg::lost_sqlstate("P0001"));
  cr_expect(mr::pg::retryable("40001"));
  cr_expect(mr::pg::retryable("40P01"));
  cr_expect_not(mr::pg::retryable("40002"));
}

Test(pool_core, what_a_finished_statement_leads_to) {
  using F = mr::pg::Finished;
  using N = mr::pg::Next;
  const auto next = [](F f) { return mr::pg::next_after(f); };
  cr_expect_eq(next({F::What::read, F::Status::aborted, true}), N::rerun, "a read that never ran goes again");
  cr_expect_eq(next({F::What::write, F::Status::aborted, true}), N::broken, "an aborted write: outcome unknown");
  cr_expect_eq(next({F::What::naming, F::Status::ok}), N::done);
  cr_expect_eq(next({F::What::naming, F::Status::aborted}), N::done);
  cr_expect_eq(next({F::What::naming, F::Status::failed, false}), N::warn);
  cr_expect_eq(next({F::What::naming, F::Status::failed, true}), N::broken);
  cr_expect_eq(next({F::What::prepare, F::Status::failed, false}), N::done, "runs unprepared");
  cr_expect_eq(next({F::What::prepare, F::Status::failed, true}), N::broken);
  cr_expect_eq(next({F::What::write, F::Status::ok}), N::answer);
  cr_expect_eq(next({F::What::write, F::Status::failed, false, false}), N::answer, "a business error is answered");
  cr_expect_eq(next({F::What::write, F::Status::failed, true, false}), N::broken);
  cr_expect_eq(next({F::What::write, F::Status::failed, false, true, 1}), N::retry, "a deadlock runs again");
  cr_expect_eq(next({F::What::write, F::Status::failed, false, true, 0}), N::answer, "once only");
  cr_expect_eq(next({F::What::batch, F::Status::failed, false, true, 1}), N::one_by_one,
               "a batch rolled back runs one by one, never retried whole");
  cr_expect_eq(next({F::What::batch, F::Status::failed, true}), N::broken, "unless the connection is lost");
  cr_expect_eq(next({F::What::batch, F::Status::ok, false, false, 0, 3, 3}), N::answer);
  cr_expect_eq(next({F::What::batch, F::Status::ok, false, false, 0, 2, 3}), N::rows_mismatch,
               "committed with a row missing: never run again");
}
