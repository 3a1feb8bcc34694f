#include "modules/ledger/pg_pool.hpp"

#include "modules/common/foreign_socket.hpp"

#include <algorithm>

namespace mr::pg {

// One libpq connection whose socket is an nginx connection. Read interest
// stays registered (level-triggered, so one PQconsumeInput that does not
// drain the socket is called again); write interest only while libpq has
// unsent bytes or the connect handshake waits for writability.
class Connection {
 public:
  enum class State { down, connecting, idle, busy };

  explicit Connection(Pool& pool) : pool_(pool) {
    connect_timer_.handler = on_connect_timeout;
    connect_timer_.data = this;
    connect_timer_.log = pool.log();
    connect_timer_.cancelable = 1;  // a connect may be cut when a worker exits
  }
  ~Connection() { close(); }

  State state() const { return state_; }
  bool may_connect() const { return state_ == State::down && ngx_current_msec >= retry_at_; }
  Job* job() const { return job_.get(); }

  void connect() {
    const auto& s = pool_.settings();
    if (ever_connected_) pool_.counters().reconnects++;
    pg_ = PQconnectStart(s.dsn.c_str());
    if (pg_ == nullptr || PQstatus(pg_) == CONNECTION_BAD || PQsetnonblocking(pg_, 1) != 0 ||
        !wrap_socket()) {
      connect_failed();
      return;
    }
    state_ = State::connecting;
    wants_write_ = true;
    update_interest();
    ngx_add_timer(&connect_timer_, s.connect_timeout);
  }

  void run(std::unique_ptr<Job> job) {
    job_ = std::move(job);
    state_ = State::busy;
    send();
  }

  // The job's time is up: its outcome is unknown. libpq 15 cannot cancel
  // without blocking, so the connection is dropped and made anew later.
  std::unique_ptr<Job> abandon() {
    auto job = std::move(job_);
    close();
    return job;
  }

  void close() {
    if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
    mr::ngx::unwatch_socket(c_);  // libpq owns and closes the socket
    if (pg_ != nullptr) {
      PQfinish(pg_);
      pg_ = nullptr;
    }
    result_.reset();
    naming_ = false;
    application_name_.clear();  // a new session starts with the DSN's
    state_ = State::down;
  }

 private:
  static void on_event(ngx_event_t* ev) {
    auto* c = static_cast<ngx_connection_t*>(ev->data);
    static_cast<Connection*>(c->data)->handle(ev->write != 0);
  }

  static void on_connect_timeout(ngx_event_t* ev) {
    auto* self = static_cast<Connection*>(ev->data);
    ngx_log_error(NGX_LOG_ERR, self->pool_.log(), 0, "mr_ledger: connecting to PostgreSQL timed out");
    self->connect_failed();
  }

  bool wrap_socket() {
    const int fd = PQsocket(pg_);
    if (fd < 0) return false;
    if (c_ != nullptr && c_->fd == fd) return true;
    // First socket, or libpq moved to another (another address, an SSL retry).
    mr::ngx::unwatch_socket(c_);
    c_ = mr::ngx::watch_socket(fd, pool_.log(), this, on_event);
    return c_ != nullptr;
  }

  void update_interest() {
    if (!c_->read->active) ngx_add_event(c_->read, NGX_READ_EVENT, 0);
    if (wants_write_ && !c_->write->active) ngx_add_event(c_->write, NGX_WRITE_EVENT, 0);
    if (!wants_write_ && c_->write->active) ngx_del_event(c_->write, NGX_WRITE_EVENT, 0);
  }

  void handle(bool writable) {
    if (state_ == State::connecting) {
      if (writable == wants_write_) poll_connect();
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
    if (state_ != State::busy) return;  // an idle connection: notices only
    while (PQisBusy(pg_) == 0) {
      PGresult* res = PQgetResult(pg_);
      if (res == nullptr) {
        complete();
        return;
      }
      if (!result_) {
        result_.reset(res);
      } else {
        PQclear(res);
      }
    }
  }

  void poll_connect() {
    switch (PQconnectPoll(pg_)) {
      case PGRES_POLLING_OK:
        ngx_del_timer(&connect_timer_);
        if (!wrap_socket()) return connect_failed();
        ever_connected_ = true;
        state_ = State::idle;
        wants_write_ = false;
        update_interest();
        pool_.on_idle(*this);
        return;
      case PGRES_POLLING_READING:
        if (!wrap_socket()) return connect_failed();
        wants_write_ = false;
        update_interest();
        return;
      case PGRES_POLLING_WRITING:
        if (!wrap_socket()) return connect_failed();
        wants_write_ = true;
        update_interest();
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
    // Do not hammer a server that refuses: this slot waits a second.
    retry_at_ = ngx_current_msec + 1000;
    pool_.on_broken(*this);
  }

  void send() {
    // A session setting, not a comment in the statement text: prepared
    // statements stay the same for every request. Changed only when it
    // differs from the connection's (one extra round trip for a traced
    // request, one for the next untraced one there); nothing otherwise.
    if (job_->traceparent != application_name_) {
      send_application_name();
      return;
    }
    std::vector<const char*> values;
    values.reserve(job_->params.size());
    for (const auto& p : job_->params) values.push_back(p ? p->c_str() : nullptr);
    if (PQsendQueryParams(pg_, job_->sql.c_str(), static_cast<int>(values.size()), nullptr,
                          values.data(), nullptr, nullptr, 0) == 0) {
      broken(PQerrorMessage(pg_));
      return;
    }
    flush();
  }

  void send_application_name() {
    naming_ = true;
    const char* value = job_->traceparent.c_str();
    const int sent = job_->traceparent.empty()
                         ? PQsendQueryParams(pg_, "RESET application_name", 0, nullptr, nullptr, nullptr, nullptr, 0)
                         : PQsendQueryParams(pg_, "SELECT set_config('application_name', $1, false)", 1, nullptr,
                                             &value, nullptr, nullptr, 0);
    if (sent == 0) {
      broken(PQerrorMessage(pg_));
      return;
    }
    flush();
  }

  void flush() {
    if (state_ != State::busy) return;
    const int rc = PQflush(pg_);
    if (rc < 0) {
      broken(PQerrorMessage(pg_));
      return;
    }
    wants_write_ = rc == 1;
    update_interest();
  }

  void complete() {
    if (naming_) {
      naming_ = false;
      const ExecStatusType named = result_ ? PQresultStatus(result_.get()) : PGRES_FATAL_ERROR;
      if (named != PGRES_TUPLES_OK && named != PGRES_COMMAND_OK) {
        ngx_log_error(NGX_LOG_WARN, pool_.log(), 0, "mr_ledger: cannot set application_name: %s",
                      result_ ? PQresultErrorMessage(result_.get()) : "no result");
      }
      application_name_ = job_->traceparent;  // on failure too: no second try per statement
      result_.reset();
      send();
      return;
    }
    Outcome outcome{Outcome::Kind::ok, nullptr, {}, {}};
    const ExecStatusType status = result_ ? PQresultStatus(result_.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
      const char* state = result_ ? PQresultErrorField(result_.get(), PG_DIAG_SQLSTATE) : nullptr;
      outcome.sqlstate = state != nullptr ? state : "";
      outcome.message = result_ ? PQresultErrorMessage(result_.get()) : "no result";
      if (PQstatus(pg_) == CONNECTION_BAD || outcome.sqlstate.empty() ||
          outcome.sqlstate.starts_with("08") || outcome.sqlstate.starts_with("57P")) {
        broken(outcome.message);  // the server went away mid-statement
        return;
      }
      // Rolled back by a deadlock or serialization failure: nothing
      // happened, so running the statement again is safe.
      if ((outcome.sqlstate == "40001" || outcome.sqlstate == "40P01") && job_->retries_left > 0) {
        job_->retries_left--;
        result_.reset();
        send();
        return;
      }
      outcome.kind = Outcome::Kind::sql_error;
    }
    outcome.result = std::move(result_);
    state_ = State::idle;
    auto job = std::move(job_);
    pool_.finish(std::move(job), std::move(outcome));
    pool_.on_idle(*this);
  }

  void broken(std::string_view why) {
    std::string message(why);
    ngx_log_error(NGX_LOG_ERR, pool_.log(), 0, "mr_ledger: PostgreSQL connection lost: %s",
                  message.c_str());
    auto job = std::move(job_);
    close();
    retry_at_ = 0;  // a connection that worked may reconnect at once
    if (job) {
      pool_.finish(std::move(job), Outcome{Outcome::Kind::unavailable, nullptr, message, {}});
    }
    pool_.on_broken(*this);
  }

  Pool& pool_;
  PGconn* pg_ = nullptr;
  ngx_connection_t* c_ = nullptr;
  State state_ = State::down;
  bool wants_write_ = false;
  bool ever_connected_ = false;   // the next connect is a reconnect
  bool naming_ = false;           // the application_name statement is in flight
  std::string application_name_;  // the session's traceparent; empty: the DSN's default
  ngx_msec_t retry_at_ = 0;
  std::unique_ptr<Job> job_;
  Result result_;
  ngx_event_t connect_timer_{};
};

Pool::Pool(Settings settings, ngx_log_t* log) : settings_(std::move(settings)), log_(log) {
  for (std::size_t i = 0; i < settings_.size; ++i) {
    connections_.push_back(std::make_unique<Connection>(*this));
  }
  // Warm up: connections are ready before the first request when the
  // database is up; when it is not, requests answer service_unavailable.
  for (auto& c : connections_) c->connect();
}

Pool::~Pool() {
  for (auto& c : connections_) {
    if (auto job = c->state() == Connection::State::busy ? c->abandon() : nullptr) {
      if (job->timer.timer_set) ngx_del_timer(&job->timer);
    }
    c->close();
  }
  for (auto& job : queue_) {
    if (job->timer.timer_set) ngx_del_timer(&job->timer);
  }
}

Job* Pool::submit(std::unique_ptr<Job> job) {
  Job* handle = job.get();
  job->pool = this;
  job->timer.handler = [](ngx_event_t* ev) {
    auto* j = static_cast<Job*>(ev->data);
    j->pool->on_job_timeout(j);
  };
  job->timer.data = job.get();
  job->timer.log = log_;
  if (queue_.size() >= settings_.queue_limit) {
    finish(std::move(job), Outcome{Outcome::Kind::unavailable, nullptr, "queue full", {}});
    return nullptr;
  }
  ngx_add_timer(&handle->timer, settings_.query_timeout);
  queue_.push_back(std::move(job));
  dispatch();
  if (!queue_.empty()) fail_queue_if_nothing_can_serve();
  return handle;
}

void Pool::dispatch() {
  for (auto& c : connections_) {
    if (queue_.empty()) return;
    if (c->state() == Connection::State::idle) {
      auto job = std::move(queue_.front());
      queue_.pop_front();
      c->run(std::move(job));
    }
  }
  // Waiting jobs and nothing idle: open more connections, one per job.
  std::size_t connecting = static_cast<std::size_t>(std::count_if(
      connections_.begin(), connections_.end(),
      [](const auto& c) { return c->state() == Connection::State::connecting; }));
  for (auto& c : connections_) {
    if (connecting >= queue_.size()) break;
    if (c->may_connect()) {
      c->connect();
      if (c->state() == Connection::State::connecting) connecting++;
    }
  }
}

void Pool::fail_queue_if_nothing_can_serve() {
  const bool alive = std::any_of(connections_.begin(), connections_.end(), [](const auto& c) {
    return c->state() != Connection::State::down;
  });
  if (alive) return;
  while (!queue_.empty()) {
    auto job = std::move(queue_.front());
    queue_.pop_front();
    finish(std::move(job), Outcome{Outcome::Kind::unavailable, nullptr, "database unreachable", {}});
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
    try {
      job->done(std::move(outcome));
    } catch (...) {
      ngx_log_error(NGX_LOG_ALERT, log_, 0, "mr_ledger: exception in a query callback");
    }
  }
}

Stats Pool::stats() const {
  Stats s = counters_;
  s.in_use = static_cast<std::uint64_t>(std::count_if(connections_.begin(), connections_.end(), [](const auto& c) {
    return c->state() == Connection::State::busy;
  }));
  s.queued = queue_.size();
  return s;
}

void Pool::on_job_timeout(Job* job) {
  counters_.timed_out++;
  auto queued = std::find_if(queue_.begin(), queue_.end(),
                             [job](const auto& j) { return j.get() == job; });
  if (queued != queue_.end()) {
    auto owned = std::move(*queued);
    queue_.erase(queued);
    finish(std::move(owned), Outcome{Outcome::Kind::unavailable, nullptr, "timed out waiting", {}});
    return;
  }
  for (auto& c : connections_) {
    if (c->job() == job) {
      ngx_log_error(NGX_LOG_ERR, log_, 0, "mr_ledger: query timed out; dropping the connection");
      auto owned = c->abandon();
      finish(std::move(owned), Outcome{Outcome::Kind::unavailable, nullptr, "query timed out", {}});
      on_broken(*c);
      return;
    }
  }
}

}  // namespace mr::pg
