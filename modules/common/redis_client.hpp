// A per-worker Redis client: hiredis's async API driven by nginx's event
// loop (the adapter maps hiredis's add/del read/write hooks to nginx events
// on a connection made with ngx_get_connection), with a connect timeout, a
// timer per command that is also its timeout, and reconnects with a pause.
// Any failure reports a null reply: callers treat Redis as an optimisation.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
}

#include "lua-free-config/nginx.hpp"

namespace mr::redis {

struct Settings {
  std::string host = "127.0.0.1";  // an IP: hiredis resolves names blocking
  int port = 6379;
  ngx_msec_t connect_timeout = 200;
  ngx_msec_t command_timeout = 200;
  std::string username;  // AUTH [username] password on every connect when
  std::string password;  // the password is set; wiped with the client
};

// One command in flight. `done` runs at most once: with the reply, or with
// nullptr on timeout, disconnect or error. Detach when the caller goes away.
struct Call {
  std::function<void(const redisReply*)> done;
  ngx_event_t timer{};
  bool finished = false;  // done has run (or the caller detached)
  class Client* client = nullptr;
};

class Client {
 public:
  Client(Settings settings, ngx_log_t* log);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // When a command is written: `now`, before command() returns (a stored
  // answer must reach Redis before the HTTP response that follows it), or
  // `batched`, at the end of this event loop iteration in one write with
  // every other command issued in it (claims under load: one write(2) and no
  // epoll_ctl per request).
  enum class Flush { now, batched };

  // Sends argv; returns the call to detach, or nullptr when `done` already
  // ran with nullptr (not connected and within the reconnect pause).
  Call* command(const std::vector<std::string_view>& argv, std::function<void(const redisReply*)> done,
                Flush flush = Flush::now);
  static void detach(Call* call) { call->finished = true; }
  // Whether a command now would be written (connected or connecting) or
  // would try to connect; false within the pause after a failure.
  bool may_send() const { return ac_ != nullptr || ngx_current_msec >= retry_at_; }

  // Internal, for the hiredis callbacks.
  void on_connected(int status);
  void on_auth_reply(const redisReply* reply);
  void on_disconnected();
  void on_timeout(Call* call);
  ngx_log_t* log() const { return log_; }
  // hiredis has output queued: true when a posted flush will write it (so
  // no epoll write interest is needed), false when the caller must wait for
  // writability (connecting, or a write that did not complete).
  bool defer_write();

 private:
  bool ensure_connected();
  void drop();  // frees the context: pending calls get a null reply

  Settings settings_;
  ngx_log_t* log_;
  redisAsyncContext* ac_ = nullptr;
  bool connected_ = false;
  ngx_msec_t retry_at_ = 0;
  ngx_event_t connect_timer_{};
  ngx_event_t flush_event_{};  // posted: writes hiredis's output buffer
  bool writing_ = false;       // inside redisAsyncHandleWrite
};

}  // namespace mr::redis
