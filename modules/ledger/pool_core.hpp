// The pool's decisions, apart from libpq and nginx: which connection takes
// a job, which queued jobs form a batch, how long settles wait for the ones
// on their way, what a finished statement leads to (done, run again, run
// one by one, connection lost) and when a slot may connect again.
// pg_pool.cpp runs them over its libpq connections; the unit tests
// (tests/unit/ledger/pool_core_test.cpp) over scripted ones. No nginx or
// libpq header.
//
// The templates take the connections as a range of pointers to a type
// with: state(), idle(), takes_read(), gathering_reads(), depth(),
// runs_settles(), may_connect(), connect(), run(unique_ptr<Job>),
// run_batch(vector<unique_ptr<Job>>); and the jobs through Traits:
// kind(job), is_read(job), apart(a, b) (the two may not share a batch).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string_view>
#include <vector>

#include "ledger/write_batch.hpp"

namespace mr::pg {

enum class ConnState { down, connecting, ready };

// Writes sent in one batch statement at most; reads queued on one connection.
constexpr std::size_t kBatchLimit = 32;
constexpr std::size_t kPipelineDepth = 16;

// Settles past authentication that have not reached the pool yet (their
// idempotency claim is at Redis). Queued settles that a free connection
// could take wait for the ones that were on their way when that wait
// began, so they share one batch and one commit; never for settles that
// set out later, so a steady stream cannot hold the queue.
class SettleArrivals {
 public:
  std::uint64_t arriving();
  // The settle behind `ticket` reached the pool or was answered without
  // it. True: the settles awaited have all arrived, the queue may go.
  bool arrived(std::uint64_t ticket);
  // Whether the queued settles (`queued` of them) wait now: not once a
  // full batch is queued, not when nothing is on its way.
  bool wait(std::size_t queued);
  // A batch of settles went: the next wait starts anew.
  void taken() { awaited_ = 0; }
  bool awaiting() const { return awaited_ != 0; }

 private:
  std::set<std::uint64_t> arriving_;
  std::uint64_t next_ = 1;
  std::uint64_t awaited_ = 0;  // wait for tickets up to this one (0: no wait begun)
};

// When a connection slot may connect again. A server that refused waits a
// second (no hammering); a connection that worked and was lost reconnects
// at once; a connect that hung starts at the next host of a multi-host DSN.
struct Reconnect {
  std::uint64_t retry_at = 0;  // ms on the event loop's clock
  int first_host = 0;
  bool may(ConnState state, std::uint64_t now) const { return state == ConnState::down && now >= retry_at; }
  void refused(std::uint64_t now) { retry_at = now + 1000; }
  void lost() { retry_at = 0; }
  void hung(int hosts) { first_host = hosts > 0 ? (first_host + 1) % hosts : 0; }
};

// The server went away or never answered: the outcome is unknown.
bool lost_sqlstate(std::string_view sqlstate);
// Rolled back by a deadlock or serialization failure: nothing happened.
bool retryable(std::string_view sqlstate);

// A statement's results are all in; what it was and how it ended.
struct Finished {
  enum class What { prepare, naming, read, write, batch } what;
  enum class Status { ok, aborted, failed } status;  // aborted: an earlier statement of its sync group failed
  bool lost = false;          // the connection's state or the sqlstate says the server went
  bool retryable = false;     // see retryable()
  int retries_left = 0;       // a lone job's
  std::size_t rows = 0;       // a batch's result rows
  std::size_t jobs = 0;       // a batch's jobs
};

enum class Next {
  rerun,          // a read that never ran: send it again
  done,           // a naming or a prepare: nothing to answer
  warn,           // a naming failed, the connection is fine: log and go on
  broken,         // the connection is lost: answer every job it carries as unavailable
  retry,          // rolled back by a deadlock: run the job once more
  answer,         // answer the job (or every job of the batch) with its result
  one_by_one,     // a batch rolled back: its writes run again one by one
  rows_mismatch,  // a batch committed with rows not one per job: never run again, answer an error
};

Next next_after(const Finished& f);

// ---- dispatch ----

template <class Conns>
bool settles_at_limit(const Conns& conns, std::size_t settle_connections) {
  if (settle_connections == 0) return false;
  const auto running = static_cast<std::size_t>(
      std::count_if(conns.begin(), conns.end(), [](const auto& c) { return c->runs_settles(); }));
  return running >= settle_connections;
}

// A read goes first where reads of this pass already wait for their sync
// (one send for all of them, one flush on the server); else, like a write,
// to an idle connection; else to the least loaded connection that runs
// only reads and has room. A settle finds none while settle_connections
// run settles.
template <class Traits, class Conns, class Job>
auto connection_for(const Conns& conns, const Job& job, std::size_t settle_connections)
    -> decltype(&*conns.front()) {
  decltype(&*conns.front()) best = nullptr;
  const bool read = Traits::is_read(job);
  if (Traits::kind(job) == mr::ledger::BatchKind::settle && settles_at_limit(conns, settle_connections)) {
    return nullptr;
  }
  if (read) {
    for (const auto& c : conns) {
      if (c->gathering_reads()) return &*c;
    }
  }
  for (const auto& c : conns) {
    if (c->idle()) return &*c;
  }
  if (!read) return nullptr;
  for (const auto& c : conns) {
    if (c->takes_read() && (best == nullptr || c->depth() < best->depth())) best = &*c;
  }
  return best;
}

// The oldest queued job of this kind and every other one of its kind
// queued now (up to the limit), in the order they came; one that must be
// apart from a job already taken (its idempotency key or its signature,
// ledger/write_batch.hpp) waits for the next one. Only one kind goes in a
// batch.
template <class Traits, class Job>
std::vector<std::unique_ptr<Job>> take_batch(std::deque<std::unique_ptr<Job>>& queue, mr::ledger::BatchKind kind) {
  std::vector<std::unique_ptr<Job>> batch;
  for (auto it = queue.begin(); it != queue.end() && batch.size() < kBatchLimit;) {
    const auto apart = [&](const std::unique_ptr<Job>& taken) { return Traits::apart(*taken, **it); };
    if (Traits::kind(**it) == kind && std::none_of(batch.begin(), batch.end(), apart)) {
      batch.push_back(std::move(*it));
      it = queue.erase(it);
    } else {
      ++it;
    }
  }
  return batch;
}

template <class Traits, class Job>
std::size_t queued_settles(const std::deque<std::unique_ptr<Job>>& queue) {
  return static_cast<std::size_t>(std::count_if(queue.begin(), queue.end(), [](const auto& j) {
    return Traits::kind(*j) == mr::ledger::BatchKind::settle;
  }));
}

// Hands queued jobs to connections until none can take the oldest one.
// Settles held back (by settle_connections or by the wait for arrivals) do
// not hold up the jobs behind them: those go first, in order. A lone write
// goes as it is; two or more of one kind go as one batch. A connection's
// run() may complete at once and queue again: the loop starts over from
// the front each time.
template <class Traits, class Job, class Conns>
void dispatch(std::deque<std::unique_ptr<Job>>& queue, Conns& conns, SettleArrivals& arrivals,
              std::size_t settle_connections) {
  for (auto it = queue.begin(); it != queue.end();) {
    const auto kind = Traits::kind(**it);
    const bool settle = kind == mr::ledger::BatchKind::settle;
    auto* c = connection_for<Traits>(conns, **it, settle_connections);
    if (c == nullptr) {
      if (settle && settles_at_limit(conns, settle_connections)) {
        ++it;
        continue;
      }
      break;
    }
    if (settle && arrivals.wait(queued_settles<Traits>(queue))) {
      ++it;
      continue;
    }
    if (kind != mr::ledger::BatchKind::none) {
      if (settle) arrivals.taken();
      // The first job of its kind that can go is the oldest queued: every
      // job before it is a settle held back.
      auto batch = take_batch<Traits>(queue, kind);
      if (batch.size() == 1) {
        c->run(std::move(batch.front()));
      } else {
        c->run_batch(std::move(batch));
      }
    } else {
      auto job = std::move(*it);
      queue.erase(it);
      c->run(std::move(job));
    }
    it = queue.begin();
  }
}

// Jobs wait and nothing is idle: open more connections, one per waiting
// job (counting those already connecting), on slots that may connect.
template <class Conns>
void open_for_waiting(Conns& conns, std::size_t waiting) {
  auto connecting = static_cast<std::size_t>(std::count_if(
      conns.begin(), conns.end(), [](const auto& c) { return c->state() == ConnState::connecting; }));
  for (auto& c : conns) {
    if (connecting >= waiting) break;
    if (c->may_connect()) {
      c->connect();
      if (c->state() == ConnState::connecting) connecting++;
    }
  }
}

// Every slot is down (none connected, none connecting): queued jobs can
// only be answered unavailable.
template <class Conns>
bool none_can_serve(const Conns& conns) {
  return std::none_of(conns.begin(), conns.end(), [](const auto& c) { return c->state() != ConnState::down; });
}

}  // namespace mr::pg
