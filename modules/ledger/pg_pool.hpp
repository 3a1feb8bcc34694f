// A per-worker pool of non-blocking libpq connections driven by nginx's
// event loop: connect, send and read on socket readiness, queue when every
// connection is busy, a timer per job that is also its timeout, reconnect
// after the server went away. Nothing here ever blocks the worker.
//
// Every connection runs in libpq's pipeline mode, each statement followed
// by its own sync (its own transaction): the statement table
// (ledger/statements.hpp) is prepared as soon as a connection is made, with
// no wait; reads may queue on a connection that is still busy with reads;
// settles that queued while every connection was busy, or while
// settle_connections connections ran settles, go together as one
// mr_write_batch; reversals, or redemptions, that queued while every
// connection was busy go together as one mr_write_batch_each, one op
// per batch, with no wait of any kind (only what is queued when a
// connection is free). A free connection takes the queued settles once the
// settles that were already on their way to the pool when it could take
// them (past authentication, their idempotency claim at Redis) have
// arrived: that claim's Redis round trip at most, and no wait when nothing
// is on its way, so a lone request is sent at once; no timer holds one.
// Those decisions are pure code in pool_core.hpp; this file adapts them to
// libpq and nginx.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pg/pg_handles.hpp"
#include "ledger/write_batch.hpp"
#include "modules/ledger/pool_core.hpp"

#include "ngx-boundary/nginx.hpp"

namespace mr::pg {

class Pool;

struct Outcome {
  enum class Kind { ok, sql_error, unavailable } kind;
  // kind == ok: the statement's tuples; shared by the requests of a batch,
  // each reading its own row.
  std::shared_ptr<const PGresult> result;
  int row = -1;         // a batch: this job's row; -1: the whole result is the job's
  std::string message;  // sql_error / unavailable: why, for the log
  std::string sqlstate;
};

// One statement with text parameters; `done` runs exactly once, from the
// event loop, unless the job was detached first (its request went away).
struct Job {
  std::string sql;
  std::vector<std::optional<std::string>> params;
  // Which queued jobs it may share one batch statement with: only jobs of
  // its own kind (none: always alone).
  mr::ledger::BatchKind batch = mr::ledger::BatchKind::none;
  std::function<void(Outcome&&)> done;
  // The request's W3C traceparent (empty: none). The connection runs the
  // statement with it as its application_name, so pg_stat_activity and
  // log lines with %a tie a slow statement to its request.
  std::string traceparent;
  int retries_left = 1;  // a deadlock or serialization failure rolled back: run again
  ngx_event_t timer{};   // non-cancelable: an old worker finishes the job across a reload
  bool detached = false;
  Pool* pool = nullptr;  // set by submit
};

struct Settings {
  std::string dsn;
  std::size_t size = 4;
  // Connections that may run settles at once (0: all): a settle that finds
  // that many busy with settles waits for one of them, and the settles
  // that gathered meanwhile go in one batch, one commit. Settles only:
  // reversals and redemptions take any free connection, and batch only
  // when none is free.
  std::size_t settle_connections = 0;
  std::size_t queue_limit = 1024;
  ngx_msec_t connect_timeout = 3000;
  ngx_msec_t query_timeout = 5000;
};

// What the pool did, for the metrics: gauges now, counters since start.
struct Stats {
  std::uint64_t in_use = 0;           // connections with a statement in flight
  std::uint64_t queued = 0;           // jobs waiting for a connection
  std::uint64_t timed_out = 0;        // jobs answered unavailable by their timer
  std::uint64_t reconnects = 0;       // connects after a connection was lost or refused
  std::uint64_t batches = 0;          // mr_write_batch statements sent
  std::uint64_t batched_settles = 0;  // settles sent inside them
  std::uint64_t write_batches = 0;    // mr_write_batch_each statements sent
  std::uint64_t batched_writes = 0;   // reversals and redemptions sent inside them
  std::uint64_t batch_fallbacks = 0;  // batches (of any kind) that failed and ran one by one
};

class Connection;

class Pool {
 public:
  Pool(Settings settings, ngx_log_t* log);
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  // Takes the job; its callback later reports the outcome (or an immediate
  // unavailable when the queue is full). Returns a handle to detach it.
  Job* submit(std::unique_ptr<Job> job);
  // The request behind the job is gone: the outcome will be dropped.
  static void detach(Job* job) { job->detached = true; }

  Stats stats() const;

  // Settles of this worker past authentication that have not reached the
  // pool yet (their idempotency claim is at Redis). A settle that finds a
  // connection free waits for the ones that were already on their way when
  // it came, so they share its batch and its commit: at most their claim's
  // Redis round trip, never for a settle that comes later, and not at all
  // when none is on its way. arriving() hands out a ticket; arrived() takes it
  // back when the settle is submitted or answered without the ledger.
  std::uint64_t settle_arriving();
  void settle_arrived(std::uint64_t ticket);

  // Internal, for Connection.
  void on_idle(Connection& c);
  void on_broken(Connection& c);
  void finish(std::unique_ptr<Job> job, Outcome&& outcome);
  void on_job_timeout(Job* job);
  ngx_log_t* log() const { return log_; }
  const Settings& settings() const { return settings_; }
  Stats& counters() { return counters_; }

 private:
  void dispatch();
  void fail_queue_if_nothing_can_serve();

  Settings settings_;
  ngx_log_t* log_;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::deque<std::unique_ptr<Job>> queue_;
  Stats counters_;
  bool dispatching_ = false;
  SettleArrivals arrivals_;
  ngx_event_t wake_{};         // posted when the awaited settles have all arrived
};

}  // namespace mr::pg
