#include "modules/ledger/pg_pool.hpp"

#include "ledger/statements.hpp"
#include "ledger/write_batch.hpp"
#include "modules/common/libpq_socket.hpp"
#include "ngx-boundary/guarded.hpp"
#include "modules/ledger/pg_hosts.hpp"
#include "modules/ledger/pool_core.hpp"

#include <algorithm>
#include <array>
#include <span>

namespace mr::pg {
namespace {

using mr::ledger::BatchKind;

constexpr std::size_t kStatements = mr::ledger::sql::prepared.size();

// The statement's place in the table, or -1 (then it runs unprepared).
int statement_index(std::string_view sql) {
  const auto& table = mr::ledger::sql::prepared;
  const auto it = std::find(table.begin(), table.end(), sql);
  return it == table.end() ? -1 : static_cast<int>(it - table.begin());
}

bool is_read(std::string_view sql) {
  const auto& reads = mr::ledger::sql::reads;
  return std::find(reads.begin(), reads.end(), sql) != reads.end();
}

const std::array<std::string, kStatements> kNames = [] {
  std::array<std::string, kStatements> names;
  for (std::size_t i = 0; i < kStatements; ++i) names[i] = "mr" + std::to_string(i);
  return names;
}();

// The server went away (or never answered): the outcome is unknown.
bool connection_lost(PGconn* pg, std::string_view sqlstate) {
  return PQstatus(pg) == CONNECTION_BAD || lost_sqlstate(sqlstate);
}

}  // namespace

// What pool_core's templates read of a job.
struct JobTraits {
  static BatchKind kind(const Job& j) { return j.batch; }
  static bool is_read(const Job& j) { return mr::pg::is_read(j.sql); }
  static bool apart(const Job& a, const Job& b) { return mr::ledger::batch_apart(a.params, b.params); }
};

// One libpq connection whose socket is an nginx connection
// (modules/common/libpq_socket.hpp: which events it waits for, and why).
class Connection {
 public:
  using State = ConnState;

  explicit Connection(Pool& pool) : pool_(pool), socket_(pool.log(), this, on_socket) {
    connect_timer_.handler = mr::ngx::c_entry(on_connect_timeout);
    connect_timer_.data = this;
    connect_timer_.log = pool.log();
    connect_timer_.cancelable = 1;  // a connect may be cut when a worker exits
    sync_event_.handler = mr::ngx::c_entry(on_sync_due);
    sync_event_.data = this;
    sync_event_.log = pool.log();
  }
  ~Connection() { close(); }

  State state() const { return state_; }
  bool may_connect() const { return reconnect_.may(state_, ngx_current_msec); }
  // Ready with no request in flight (prepares may still be).
  bool idle() const { return state_ == State::ready && jobs_in_flight_ == 0; }
  bool busy() const { return jobs_in_flight_ > 0; }
  bool runs_settles() const { return settles_in_flight_ > 0; }
  // May take one more read behind what it runs.
  bool takes_read() const {
    return state_ == State::ready && jobs_in_flight_ < kPipelineDepth && writes_in_flight_ == 0;
  }
  std::size_t depth() const { return jobs_in_flight_; }
  // Has reads waiting for this pass's sync: another read joins them for free.
  bool gathering_reads() const { return reads_unsynced_ && takes_read(); }
  bool holds(const Job* job) const {
    return std::any_of(sent_.begin(), sent_.end(), [job](const Sent& s) {
      return std::any_of(s.jobs.begin(), s.jobs.end(), [job](const auto& j) { return j.get() == job; });
    });
  }

  void connect() {
    const auto& s = pool_.settings();
    if (ever_connected_) pool_.counters().reconnects++;
    std::string err;
    const auto params = params_from_host(s.dsn, reconnect_.first_host, err);
    if (!params) {
      ngx_log_error(NGX_LOG_ERR, pool_.log(), 0, "mr_ledger: mr_ledger_dsn: %s", err.c_str());
      connect_failed();
      return;
    }
    hosts_ = params->hosts;
    const auto keywords = params->keyword_ptrs(), values = params->value_ptrs();
    pg_ = PQconnectStartParams(keywords.data(), values.data(), 0);
    if (pg_ == nullptr || PQstatus(pg_) == CONNECTION_BAD || PQsetnonblocking(pg_, 1) != 0 ||
        !socket_.follow(pg_)) {
      connect_failed();
      return;
    }
    state_ = State::connecting;
    socket_.want(true);
    ngx_add_timer(&connect_timer_, s.connect_timeout);
  }

  void run(std::unique_ptr<Job> job) {
    Sent s;
    s.read = is_read(job->sql);
    name_session(job->traceparent);
    s.jobs.push_back(std::move(job));
    send(std::move(s));
  }

  void run_batch(std::vector<std::unique_ptr<Job>> jobs) {
    std::vector<const mr::ledger::Params*> params;
    params.reserve(jobs.size());
    for (const auto& j : jobs) params.push_back(&j->params);
    auto param = mr::ledger::write_batch_param(params);
    if (!param) {  // cannot happen for a partner write; run them one by one
      for (auto& j : jobs) run(std::move(j));
      return;
    }
    name_session({});  // writes of a batch are untraced
    auto& counters = pool_.counters();
    if (jobs.front()->batch == BatchKind::settle) {
      counters.batches++;
      counters.batched_settles += jobs.size();
    } else {
      counters.write_batches++;
      counters.batched_writes += jobs.size();
    }
    Sent s;
    s.batch = true;
    s.jobs = std::move(jobs);
    s.batch_param = std::move(*param);
    send(std::move(s));
  }

  // pg_stat_activity and %a in the server's log tie a statement to its
  // request: the session is named by the request's traceparent, in the same
  // pipeline just before the statement (no extra round trip), and named back
  // for the next untraced one. A session setting, not a comment in the text,
  // so the prepared statements stay one per text. Untraced traffic on an
  // unnamed session sends nothing.
  void name_session(const std::string& traceparent) {
    if (traceparent == application_name_) return;
    application_name_ = traceparent;
    Sent naming;
    naming.naming = true;
    naming.batch_param = traceparent;
    send(std::move(naming));
  }

  // A job's time is up: its outcome is unknown. libpq 15 cannot cancel
  // without blocking, so the connection is dropped and made anew later;
  // every job it carried is handed back.
  std::vector<std::unique_ptr<Job>> abandon() {
    std::vector<std::unique_ptr<Job>> jobs;
    for (auto& s : sent_) {
      for (auto& j : s.jobs) jobs.push_back(std::move(j));
    }
    close();
    return jobs;
  }

  void close() {
    if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
    socket_.release(pg_);
    if (pg_ != nullptr) {
      PQfinish(pg_);
      pg_ = nullptr;
    }
    if (sync_event_.posted) {  // a multi-statement macro: braces needed
      ngx_delete_posted_event(&sync_event_);
    }
    reads_unsynced_ = false;
    application_name_.clear();  // a new session starts with the DSN's
    sent_.clear();
    jobs_in_flight_ = 0;
    writes_in_flight_ = 0;
    settles_in_flight_ = 0;
    state_ = State::down;
  }

 private:
  // One statement and its sync in the pipeline: a prepare, one job, or a
  // batch of writes of one kind.
  // What the pipeline holds, in the order the server answers: statements
  // and the syncs that end their transactions. A write (or batch, or
  // prepare) is followed by its own sync and completes when that sync
  // arrives, after the commit. Reads sent in one pass of the event loop
  // share one sync (one flush here, one on the server) and complete as
  // soon as their rows are in.
  struct Sent {
    int prepare = -1;  // >= 0: preparing that statement
    bool batch = false;
    bool read = false;
    bool sync = false;  // a sync marker, no statement
    // Names the session for the statements that follow (batch_param: the
    // request's traceparent; empty: back to the DSN's name).
    bool naming = false;
    std::vector<std::unique_ptr<Job>> jobs;
    std::string batch_param;
    Result result;       // the statement's (first) result
    bool ended = false;  // libpq said the statement's results are complete
  };

  // nginx calls these from C. An exception (out of memory while reading
  // results) must not unwind through it: the connection is dropped as if
  // the server had gone, and its requests are answered as for a lost one.
  template <class Work>
  void guarded(Work&& work) noexcept {
    mr::ngx::guarded(pool_.log(), std::forward<Work>(work), [this]() noexcept {
      mr::ngx::guarded(pool_.log(), [this] { broken("out of memory"); });
    });
  }

  static void on_socket(void* owner, bool writable) noexcept {
    auto* self = static_cast<Connection*>(owner);
    self->guarded([self, writable] { self->handle(writable); });
  }

  static void on_connect_timeout(ngx_event_t* ev) noexcept {
    auto* self = static_cast<Connection*>(ev->data);
    self->guarded([self] { self->connect_timed_out(); });
  }

  void connect_timed_out() {
    const auto& s = pool_.settings();
    if (!socket_.connect_timed_out(pg_, &connect_timer_, "mr_ledger", s.connect_timeout)) return;
    // libpq would start at the host that hung again: start one further on.
    reconnect_.hung(hosts_);
    connect_failed();
  }

  void handle(bool writable) {
    if (state_ == State::connecting) {
      if (writable == socket_.wants_write()) poll_connect();
      return;
    }
    if (writable) {
      flush();
      return;
    }
    if (PQconsumeInput(pg_) == 0) {
      broken(PQerrorMessage(pg_));
      return;
    }
    read_results();
  }

  void read_results() {
    while (state_ == State::ready && !sent_.empty() && PQisBusy(pg_) == 0) {
      PGresult* res = PQgetResult(pg_);
      Sent& s = sent_.front();
      if (res == nullptr) {
        if (s.sync || s.ended) return;  // nothing more has come yet
        s.ended = true;
        // More statements may share this sync: a read or a naming is done
        // with its results; a write waits for the sync (its commit).
        if (s.read || s.naming) complete_front();
        continue;
      }
      if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
        PQclear(res);
        // Everything before the sync is complete: a write committed.
        while (state_ == State::ready && !sent_.empty() && !sent_.front().sync) complete_front();
        if (state_ == State::ready && !sent_.empty()) sent_.pop_front();
        continue;
      }
      if (s.sync) {  // rows where a sync was due: the protocol is lost
        PQclear(res);
        broken("unexpected result in the pipeline");
        return;
      }
      if (!s.result) {
        s.result.reset(res);
      } else {
        PQclear(res);
      }
    }
  }

  void poll_connect() {
    switch (const auto status = PQconnectPoll(pg_)) {
      case PGRES_POLLING_OK:
        ngx_del_timer(&connect_timer_);
        if (!socket_.follow(pg_)) return connect_failed();
        if (PQenterPipelineMode(pg_) == 0) return connect_failed();
        ever_connected_ = true;
        state_ = State::ready;
        socket_.want(false);
        // Jobs may follow at once: the server runs the prepares first.
        for (std::size_t i = 0; i < kStatements && state_ == State::ready; ++i) {
          Sent s;
          s.prepare = static_cast<int>(i);
          prepared_[i] = false;
          send(std::move(s));
        }
        if (state_ == State::ready) pool_.on_idle(*this);
        return;
      case PGRES_POLLING_READING:
      case PGRES_POLLING_WRITING:
        if (!socket_.follow(pg_)) return connect_failed();
        socket_.want(status == PGRES_POLLING_WRITING);
        return;
      default:
        connect_failed();
        return;
    }
  }

  void connect_failed() {
    ngx_log_error(NGX_LOG_ERR, pool_.log(), 0, "mr_ledger: cannot connect to PostgreSQL: %s",
                  pg_ != nullptr ? PQerrorMessage(pg_) : "out of memory");
    close();
    reconnect_.refused(ngx_current_msec);
    pool_.on_broken(*this);
  }

  // The reads sent in this pass of the event loop end with one sync.
  static void on_sync_due(ngx_event_t* ev) noexcept {
    auto* self = static_cast<Connection*>(ev->data);
    self->guarded([self] { self->sync_reads(); });
  }

  void sync_reads() {
    if (state_ != State::ready || !reads_unsynced_) return;
    sync();
  }

  // Ends the transaction of what was sent since the last sync, reads
  // waiting for theirs included (libpq 15's PQpipelineSync flushes at once).
  void sync() {
    reads_unsynced_ = false;
    if (PQpipelineSync(pg_) == 0) {
      broken(PQerrorMessage(pg_));
      return;
    }
    Sent marker;
    marker.sync = true;
    sent_.push_back(std::move(marker));
    flush();
  }

  // Queues the statement (and, but for a read, its sync), then writes what
  // the socket takes; a read's sync is sent once this pass is over.
  void send(Sent s) {
    int ok;
    if (s.prepare >= 0) {
      const auto sql = std::string(mr::ledger::sql::prepared[static_cast<std::size_t>(s.prepare)]);
      ok = PQsendPrepare(pg_, kNames[static_cast<std::size_t>(s.prepare)].c_str(), sql.c_str(), 0, nullptr);
    } else if (s.batch) {
      // Settles have their set-based statement; reversals and redemptions
      // run through mr_write one by one inside theirs.
      const char* value = s.batch_param.c_str();
      const auto sql = s.jobs.front()->batch == BatchKind::settle ? mr::ledger::sql::write_batch
                                                                 : mr::ledger::sql::write_batch_each;
      ok = send_statement(std::string(sql), std::span<const char* const>(&value, 1));
    } else if (s.naming) {
      const char* value = s.batch_param.c_str();
      ok = s.batch_param.empty()
               ? PQsendQueryParams(pg_, "RESET application_name", 0, nullptr, nullptr, nullptr, nullptr, 0)
               : PQsendQueryParams(pg_, "SELECT set_config('application_name', $1, false)", 1, nullptr, &value,
                                   nullptr, nullptr, 0);
    } else {
      const Job& job = *s.jobs.front();
      std::vector<const char*> values;
      values.reserve(job.params.size());
      for (const auto& p : job.params) values.push_back(p ? p->c_str() : nullptr);
      ok = send_statement(job.sql, values);
    }
    const bool read = s.read, naming = s.naming;
    sent_.push_back(std::move(s));  // on failure broken() answers its jobs too
    count(sent_.back(), true);
    if (ok == 0) {
      broken(PQerrorMessage(pg_));
      return;
    }
    if (naming) return;  // its statement follows in the same transaction
    if (read) {
      reads_unsynced_ = true;
      if (!sync_event_.posted) {
        ngx_post_event(&sync_event_, &ngx_posted_events);
      }
      return;
    }
    sync();
  }

  int send_statement(const std::string& sql, std::span<const char* const> values) {
    const int n = static_cast<int>(values.size());
    const int index = statement_index(sql);
    if (index >= 0 && prepared_[static_cast<std::size_t>(index)]) {
      return PQsendQueryPrepared(pg_, kNames[static_cast<std::size_t>(index)].c_str(), n, values.data(), nullptr,
                                 nullptr, 0);
    }
    return PQsendQueryParams(pg_, sql.c_str(), n, nullptr, values.data(), nullptr, nullptr, 0);
  }

  void count(const Sent& s, bool added) {
    if (s.jobs.empty()) return;
    const bool settles = s.jobs.front()->batch == BatchKind::settle;
    if (added) {
      jobs_in_flight_++;
      if (!s.read) writes_in_flight_++;
      if (settles) settles_in_flight_++;
    } else {
      jobs_in_flight_--;
      if (!s.read) writes_in_flight_--;
      if (settles) settles_in_flight_--;
    }
  }

  void flush() {
    if (state_ != State::ready) return;
    const int rc = PQflush(pg_);
    if (rc < 0) {
      broken(PQerrorMessage(pg_));
      return;
    }
    socket_.want(rc == 1);
  }

  // The front statement's sync arrived: its results are all in.
  void complete_front() {
    Sent s = std::move(sent_.front());
    sent_.pop_front();
    count(s, false);
    const ExecStatusType status = s.result ? PQresultStatus(s.result.get()) : PGRES_FATAL_ERROR;
    const bool ok = status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK;
    std::string sqlstate, message;
    if (!ok) {
      const char* state = s.result ? PQresultErrorField(s.result.get(), PG_DIAG_SQLSTATE) : nullptr;
      sqlstate = state != nullptr ? state : "";
      message = s.result ? PQresultErrorMessage(s.result.get()) : "no result";
    }
    Finished f{what(s), ok                                ? Finished::Status::ok
                        : status == PGRES_PIPELINE_ABORTED ? Finished::Status::aborted
                                                           : Finished::Status::failed};
    if (!ok) {
      f.lost = connection_lost(pg_, sqlstate);
      f.retryable = retryable(sqlstate);
    }
    if (!s.jobs.empty()) f.retries_left = s.jobs.front()->retries_left;
    f.jobs = s.jobs.size();
    f.rows = ok && s.batch ? static_cast<std::size_t>(PQntuples(s.result.get())) : 0;
    const Next next = next_after(f);
    if (s.prepare >= 0) {
      // A statement that cannot be prepared (an older schema) runs unprepared.
      prepared_[static_cast<std::size_t>(s.prepare)] = ok;
    } else if (s.naming && next != Next::done) {
      ngx_log_error(NGX_LOG_WARN, pool_.log(), 0, "mr_ledger: cannot set application_name: %s",
                    message.c_str());
    }
    switch (next) {
      case Next::done:
      case Next::warn:
        return;
      case Next::rerun:  // an earlier read of its sync group failed; this one never ran
        run(std::move(s.jobs.front()));
        return;
      case Next::broken:
        if (!s.jobs.empty()) {
          sent_.push_front(std::move(s));  // answered with the others
          count(sent_.front(), true);
        }
        broken(message);
        return;
      case Next::one_by_one:
        pool_.counters().batch_fallbacks++;
        for (auto& j : s.jobs) run(std::move(j));
        break;
      case Next::rows_mismatch:  // committed: never run again
        refuse_mismatched_batch(std::move(s), f.rows);
        break;
      case Next::retry:
        s.jobs.front()->retries_left--;
        run(std::move(s.jobs.front()));
        break;
      case Next::answer:
        answer(std::move(s), ok, message, sqlstate);
        break;
    }
    // Room for what queued: a read fits behind reads, a write needs idle.
    if (state_ == State::ready) pool_.on_idle(*this);
  }

  // Row i of a batch is job i's answer: with another count no write can be
  // told its own outcome, so each gets an internal error and the operator
  // the counts.
  void refuse_mismatched_batch(Sent s, std::size_t rows) {
    const std::string why =
        "a batch of " + std::to_string(s.jobs.size()) + " writes answered " + std::to_string(rows) + " rows";
    ngx_log_error(NGX_LOG_ALERT, pool_.log(), 0, "mr_ledger: %s", why.c_str());
    for (auto& j : s.jobs) {
      pool_.finish(std::move(j), Outcome{Outcome::Kind::sql_error, nullptr, -1, why, "XX000"});
    }
  }

  static Finished::What what(const Sent& s) {
    if (s.prepare >= 0) return Finished::What::prepare;
    if (s.naming) return Finished::What::naming;
    if (s.batch) return Finished::What::batch;
    return s.read ? Finished::What::read : Finished::What::write;
  }

  void answer(Sent s, bool ok, const std::string& message, const std::string& sqlstate) {
    if (s.batch) {
      const std::shared_ptr<const PGresult> shared(s.result.release(), PQclear);
      for (std::size_t i = 0; i < s.jobs.size(); ++i) {
        pool_.finish(std::move(s.jobs[i]), Outcome{Outcome::Kind::ok, shared, static_cast<int>(i), {}, {}});
      }
      return;
    }
    Outcome outcome{ok ? Outcome::Kind::ok : Outcome::Kind::sql_error, nullptr, -1, message, sqlstate};
    if (ok) outcome.result = std::shared_ptr<const PGresult>(s.result.release(), PQclear);
    pool_.finish(std::move(s.jobs.front()), std::move(outcome));
  }

  void broken(std::string_view why) {
    std::string message(why);
    ngx_log_error(NGX_LOG_ERR, pool_.log(), 0, "mr_ledger: PostgreSQL connection lost: %s",
                  message.c_str());
    auto jobs = abandon();
    reconnect_.lost();
    for (auto& job : jobs) {
      pool_.finish(std::move(job), Outcome{Outcome::Kind::unavailable, nullptr, -1, message, {}});
    }
    pool_.on_broken(*this);
  }

  Pool& pool_;
  PGconn* pg_ = nullptr;
  mr::ngx::LibpqSocket socket_;
  Reconnect reconnect_;
  int hosts_ = 1;  // of the DSN: where a hung connect's next try starts
  State state_ = State::down;
  bool ever_connected_ = false;  // the next connect is a reconnect
  std::string application_name_;  // the traceparent last sent for the session; empty: the DSN's
  std::deque<Sent> sent_;
  std::size_t jobs_in_flight_ = 0;
  std::size_t writes_in_flight_ = 0;
  std::size_t settles_in_flight_ = 0;  // statements of settles (a batch counts once)
  std::array<bool, kStatements> prepared_{};
  bool reads_unsynced_ = false;
  ngx_event_t connect_timer_{};
  ngx_event_t sync_event_{};
};

Pool::Pool(Settings settings, ngx_log_t* log) : settings_(std::move(settings)), log_(log) {
  for (std::size_t i = 0; i < settings_.size; ++i) {
    connections_.push_back(std::make_unique<Connection>(*this));
  }
  // Warm up: connections are ready before the first request when the
  // database is up; when it is not, requests answer service_unavailable.
  for (auto& c : connections_) c->connect();
  wake_.data = this;
  wake_.log = log_;
  wake_.handler = mr::ngx::c_entry(+[](ngx_event_t* ev) noexcept {
    auto* pool = static_cast<Pool*>(ev->data);
    mr::ngx::guarded(pool->log(), [pool] { pool->dispatch(); });
  });
}

Pool::~Pool() {
  if (wake_.posted) {  // a multi-statement macro: the braces are needed
    ngx_delete_posted_event(&wake_);
  }
  for (auto& c : connections_) {
    for (auto& job : c->abandon()) {
      if (job->timer.timer_set) ngx_del_timer(&job->timer);
    }
  }
  for (auto& job : queue_) {
    if (job->timer.timer_set) ngx_del_timer(&job->timer);
  }
}

Job* Pool::submit(std::unique_ptr<Job> job) {
  Job* handle = job.get();
  job->pool = this;
  job->timer.handler = mr::ngx::c_entry(+[](ngx_event_t* ev) noexcept {
    auto* j = static_cast<Job*>(ev->data);
    mr::ngx::guarded(j->pool->log(), [j] { j->pool->on_job_timeout(j); });
  });
  job->timer.data = job.get();
  job->timer.log = log_;
  if (queue_.size() >= settings_.queue_limit) {
    finish(std::move(job), Outcome{Outcome::Kind::unavailable, nullptr, -1, "queue full", {}});
    return nullptr;
  }
  ngx_add_timer(&handle->timer, settings_.query_timeout);
  queue_.push_back(std::move(job));
  dispatch();
  if (!queue_.empty()) fail_queue_if_nothing_can_serve();
  return handle;
}

Stats Pool::stats() const {
  Stats s = counters_;
  s.queued = queue_.size();
  s.in_use = static_cast<std::uint64_t>(
      std::count_if(connections_.begin(), connections_.end(), [](const auto& c) { return c->busy(); }));
  return s;
}

std::uint64_t Pool::settle_arriving() { return arrivals_.arriving(); }

void Pool::settle_arrived(std::uint64_t ticket) {
  if (arrivals_.arrived(ticket) && !wake_.posted) {
    ngx_post_event(&wake_, &ngx_posted_events);
  }
}

void Pool::dispatch() {
  // A callback run from here may submit again: that job just queues.
  if (dispatching_) return;
  dispatching_ = true;
  mr::pg::dispatch<JobTraits>(queue_, connections_, arrivals_, settings_.settle_connections);
  dispatching_ = false;
  open_for_waiting(connections_, queue_.size());
}

void Pool::fail_queue_if_nothing_can_serve() {
  if (!none_can_serve(connections_)) return;
  while (!queue_.empty()) {
    auto job = std::move(queue_.front());
    queue_.pop_front();
    finish(std::move(job), Outcome{Outcome::Kind::unavailable, nullptr, -1, "database unreachable", {}});
  }
}

void Pool::on_idle(Connection&) { dispatch(); }

void Pool::on_broken(Connection&) {
  dispatch();
  fail_queue_if_nothing_can_serve();
}

void Pool::finish(std::unique_ptr<Job> job, Outcome&& outcome) {
  if (job->timer.timer_set) ngx_del_timer(&job->timer);
  if (!job->detached && job->done) {
    mr::ngx::guarded(log_, [&] { job->done(std::move(outcome)); });
  }
}

void Pool::on_job_timeout(Job* job) {
  counters_.timed_out++;
  auto queued = std::find_if(queue_.begin(), queue_.end(),
                             [job](const auto& j) { return j.get() == job; });
  if (queued != queue_.end()) {
    auto owned = std::move(*queued);
    queue_.erase(queued);
    finish(std::move(owned), Outcome{Outcome::Kind::unavailable, nullptr, -1, "timed out waiting", {}});
    return;
  }
  for (auto& c : connections_) {
    if (c->holds(job)) {
      ngx_log_error(NGX_LOG_ERR, log_, 0, "mr_ledger: query timed out; dropping the connection");
      for (auto& owned : c->abandon()) {
        const char* why = owned.get() == job ? "query timed out" : "connection dropped after a timeout";
        finish(std::move(owned), Outcome{Outcome::Kind::unavailable, nullptr, -1, why, {}});
      }
      on_broken(*c);
      return;
    }
  }
}

}  // namespace mr::pg
