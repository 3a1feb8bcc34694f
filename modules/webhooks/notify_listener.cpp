#include "modules/webhooks/notify_listener.hpp"

#include <algorithm>
#include <string_view>

#include "ngx-boundary/guarded.hpp"
#include "modules/ledger/pg_hosts.hpp"

namespace mr::ngx::webhooks {
namespace {

constexpr ngx_msec_t kFirstPause = 1000;
constexpr ngx_msec_t kLongestPause = 30000;
constexpr const char* kListen = "LISTEN mr_webhooks";

}  // namespace

NotifyListener::NotifyListener(std::string dsn, ngx_msec_t connect_timeout, ngx_log_t* log,
                               std::function<void()> wake)
    : dsn_(std::move(dsn)),
      connect_timeout_(connect_timeout),
      log_(log),
      wake_(std::move(wake)),
      socket_(log, this, on_socket) {
  // Both cancelable: a listen never keeps an exiting worker alive.
  for (ngx_event_t* ev : {&connect_timer_, &retry_timer_}) {
    ev->data = this;
    ev->log = log;
    ev->cancelable = 1;
  }
  connect_timer_.handler = mr::ngx::c_entry(on_connect_timeout);
  retry_timer_.handler = mr::ngx::c_entry(on_retry);
}

NotifyListener::~NotifyListener() {
  if (retry_timer_.timer_set) ngx_del_timer(&retry_timer_);
  close();
}

void NotifyListener::start() { connect(); }

void NotifyListener::connect() {
  std::string err;
  const auto params = mr::pg::params_from_host(dsn_, first_host_, err);
  if (!params) {
    ngx_log_error(NGX_LOG_ERR, log_, 0, "mr_webhook: mr_ledger_dsn: %s", err.c_str());
    lost("bad DSN");
    return;
  }
  hosts_ = params->hosts;
  const auto keywords = params->keyword_ptrs(), values = params->value_ptrs();
  pg_.reset(PQconnectStartParams(keywords.data(), values.data(), 0));
  if (!pg_ || PQstatus(pg_.get()) == CONNECTION_BAD || PQsetnonblocking(pg_.get(), 1) != 0 || !socket_.follow(pg_.get())) {
    lost(pg_ ? PQerrorMessage(pg_.get()) : "out of memory");
    return;
  }
  state_ = State::connecting;
  socket_.want(true);
  ngx_add_timer(&connect_timer_, connect_timeout_);
}

void NotifyListener::on_socket(void* owner, bool writable) noexcept {
  auto* self = static_cast<NotifyListener*>(owner);
  mr::ngx::guarded(
      self->log_, [self, writable] { self->handle(writable); },
      [self]() noexcept { mr::ngx::guarded(self->log_, [self] { self->lost("out of memory"); }); });
}

void NotifyListener::on_connect_timeout(ngx_event_t* ev) noexcept {
  auto* self = static_cast<NotifyListener*>(ev->data);
  if (!self->socket_.connect_timed_out(self->pg_.get(), ev, "mr_webhook", self->connect_timeout_)) return;
  // libpq would start at the host that hung again: start one further on.
  self->first_host_ = (self->first_host_ + 1) % std::max(self->hosts_, 1);
  self->lost("connect timed out");
}

void NotifyListener::on_retry(ngx_event_t* ev) noexcept {
  auto* self = static_cast<NotifyListener*>(ev->data);
  if (ngx_exiting) return;  // an old worker only finishes what it started
  mr::ngx::guarded(
      self->log_, [self] { self->connect(); },
      [self]() noexcept { mr::ngx::guarded(self->log_, [self] { self->lost("out of memory"); }); });
}

void NotifyListener::handle(bool writable) {
  switch (state_) {
    case State::connecting:
      if (writable == socket_.wants_write()) poll_connect();
      return;
    case State::subscribing:
    case State::listening:
      if (writable) {
        flush();
      } else {
        read_input();
      }
      return;
    case State::down:
      return;
  }
}

void NotifyListener::poll_connect() {
  switch (const auto status = PQconnectPoll(pg_.get())) {
    case PGRES_POLLING_OK:
      if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
      if (!socket_.follow(pg_.get())) return lost("socket lost");
      if (PQsendQuery(pg_.get(), kListen) == 0) return lost(PQerrorMessage(pg_.get()));
      state_ = State::subscribing;
      flush();
      return;
    case PGRES_POLLING_READING:
    case PGRES_POLLING_WRITING:
      if (!socket_.follow(pg_.get())) return lost("socket lost");
      socket_.want(status == PGRES_POLLING_WRITING);
      return;
    default:
      lost(PQerrorMessage(pg_.get()));
      return;
  }
}

void NotifyListener::flush() {
  const int rc = PQflush(pg_.get());
  if (rc < 0) return lost(PQerrorMessage(pg_.get()));
  socket_.want(rc == 1);
}

void NotifyListener::read_input() {
  if (PQconsumeInput(pg_.get()) == 0) return lost(PQerrorMessage(pg_.get()));
  bool wake = false;
  while (PQisBusy(pg_.get()) == 0) {
    const mr::pg::Result res(PQgetResult(pg_.get()));
    if (!res) break;
    if (state_ == State::subscribing) {
      if (PQresultStatus(res.get()) != PGRES_COMMAND_OK) return lost(PQresultErrorMessage(res.get()));
      state_ = State::listening;
      pause_ = 0;
      wake = true;  // what was queued while nobody listened is due too
      ngx_log_error(NGX_LOG_INFO, log_, 0, "mr_webhook: listening for deliveries");
    }
  }
  while (PGnotify* n = PQnotifies(pg_.get())) {
    PQfreemem(n);
    wake = true;
  }
  if (PQstatus(pg_.get()) == CONNECTION_BAD) return lost("connection closed");
  if (wake && wake_) wake_();
}

void NotifyListener::close() {
  if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
  socket_.release(pg_.get());
  pg_.reset();
  state_ = State::down;
}

void NotifyListener::lost(const char* why) {
  const bool was_listening = state_ == State::listening;
  const ngx_uint_t level = was_listening ? NGX_LOG_WARN : NGX_LOG_ERR;
  // libpq's messages run over several lines: the first says it.
  const std::string_view first_line = std::string_view(why).substr(0, std::string_view(why).find('\n'));
  ngx_log_error(level, log_, 0, "mr_webhook: listen connection %s: %*s", was_listening ? "lost" : "failed",
                first_line.size(), first_line.data());
  close();
  if (ngx_exiting) return;
  // A connection that worked tries again after the first pause; one that
  // keeps failing waits twice as long each time, up to the longest.
  pause_ = pause_ == 0 ? kFirstPause : std::min(pause_ * 2, kLongestPause);
  if (retry_timer_.timer_set) ngx_del_timer(&retry_timer_);
  ngx_add_timer(&retry_timer_, pause_);
}

}  // namespace mr::ngx::webhooks
