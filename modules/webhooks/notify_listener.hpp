// A worker's own PostgreSQL connection that does nothing but `LISTEN
// mr_webhooks`: every commit that queues a delivery notifies it, and the
// worker claims at once instead of at its next poll. Non-blocking libpq
// driven by nginx's events (as the ledger pool's connections are); lost or
// refused, it connects again after a pause that doubles up to 30 s. While it
// is down, the poll alone finds the due deliveries.
#pragma once

#include <functional>
#include <string>

#include "pg/pg_handles.hpp"
#include "modules/common/libpq_socket.hpp"
#include "ngx-boundary/nginx.hpp"

namespace mr::ngx::webhooks {

class NotifyListener {
 public:
  // `wake` runs once per batch of notifications, and once each time the
  // listen is (re)established (what was notified meanwhile is due too).
  NotifyListener(std::string dsn, ngx_msec_t connect_timeout, ngx_log_t* log, std::function<void()> wake);
  ~NotifyListener();
  NotifyListener(const NotifyListener&) = delete;
  NotifyListener& operator=(const NotifyListener&) = delete;

  void start();
  bool listening() const { return state_ == State::listening; }

 private:
  enum class State { down, connecting, subscribing, listening };

  static void on_socket(void* owner, bool writable) noexcept;
  static void on_connect_timeout(ngx_event_t* ev) noexcept;
  static void on_retry(ngx_event_t* ev) noexcept;

  void connect();
  void handle(bool writable);
  void poll_connect();
  void read_input();
  void flush();
  void close();
  void lost(const char* why);

  std::string dsn_;
  ngx_msec_t connect_timeout_;
  ngx_log_t* log_;
  std::function<void()> wake_;
  mr::pg::Conn pg_;  // PQfinish when it goes
  mr::ngx::LibpqSocket socket_;
  State state_ = State::down;
  int first_host_ = 0;  // of a multi-host DSN: where the next connect starts
  int hosts_ = 1;
  ngx_msec_t pause_ = 0;  // before the next connect; doubles while it fails
  ngx_event_t connect_timer_{};
  ngx_event_t retry_timer_{};
};

}  // namespace mr::ngx::webhooks
