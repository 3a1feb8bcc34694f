// A per-worker Redis client: hiredis's async API driven by nginx's event
// loop (the adapter maps hiredis's add/del read/write hooks to nginx events
// on a connection made with ngx_get_connection), with a connect timeout, a
// timer per command that is also its timeout, and reconnects with a pause.
// Any failure reports a null reply: callers treat Redis as an optimisation.
// With Sentinels configured, every connect first asks them where the master
// is (modules/idempotency/redis_sentinel.hpp); commands issued meanwhile wait,
// each under its own timeout. A READONLY or MASTERDOWN answer (connected to
// a demoted master) drops the connection, so the next command asks again.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
}

#include "ngx-boundary/nginx.hpp"
#include "lua-free-config/redis_address.hpp"

namespace mr::redis {

struct Settings {
  std::string host = "127.0.0.1";  // an IP: hiredis resolves names blocking
  int port = 6379;
  std::vector<Address> sentinels;  // non-empty: host and port come from these
  std::string sentinel_master;     // the master's name at the Sentinels
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

class SentinelLookup;

class Client {
 public:
  Client(Settings settings, ngx_log_t* log);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // When a command is written: `now`, before command() returns, or
  // `batched`, at the end of this event loop iteration (or at the caller's
  // flush()) in one write with every other command issued in it (claims and
  // stored answers under load: one write(2) and no epoll_ctl per request).
  enum class Flush { now, batched };

  // Sends argv; returns the call to detach, or nullptr when `done` already
  // ran with nullptr (not connected and within the reconnect pause).
  Call* command(const std::vector<std::string_view>& argv, std::function<void(const redisReply*)> done,
                Flush flush = Flush::now);
  // Writes every command queued so far (`batched` ones included) now, in
  // one write, as far as the socket takes it; the rest on writability.
  // Nothing while connecting (the connect writes them) or inside a hiredis
  // callback (the posted flush does).
  void flush();
  static void detach(Call* call) { call->finished = true; }
  // Whether a command now would be written (connected or connecting) or
  // would try to connect; false within the pause after a failure.
  bool may_send() const;

  // Internal, for the hiredis callbacks.
  void on_connected(const redisAsyncContext* ac, int status);
  void on_auth_reply(const redisReply* reply);
  void on_noauth(const redisAsyncContext* ac, const redisReply* reply);
  void on_disconnected(const redisAsyncContext* ac);
  void on_wrong_master(redisAsyncContext* ac, const redisReply* reply);
  void on_timeout(Call* call);
  ngx_log_t* log() const { return log_; }
  // hiredis has output queued: true when a posted flush will write it (so
  // no epoll write interest is needed), false when the caller must wait for
  // writability (connecting, or a write that did not complete).
  bool defer_write();

 private:
  // A command waiting for the Sentinels' answer, with its own copy of argv.
  struct Parked {
    std::unique_ptr<Call> call;
    std::vector<std::string> argv;
  };

  bool ensure_connected();  // true: connected, connecting, or asking the Sentinels
  bool connect_to(const Address& at);
  void on_master(const std::optional<Address>& master);
  void send_parked();
  void fail_parked();
  // Frees the context (pending calls get a null reply), ends a Sentinel
  // lookup and fails the commands waiting for it; no connect for `pause` ms.
  void drop(ngx_msec_t pause);

  Settings settings_;
  ngx_log_t* log_;
  std::unique_ptr<SentinelLookup> sentinels_;  // null: the fixed host and port
  std::vector<Parked> parked_;
  Address master_;  // where the connection goes: the fixed one, or the Sentinels' answer
  bool closing_ = false;
  redisAsyncContext* ac_ = nullptr;
  bool connected_ = false;
  ngx_msec_t retry_at_ = 0;
  ngx_event_t connect_timer_{};
  ngx_event_t flush_event_{};  // posted: writes hiredis's output buffer
  bool writing_ = false;       // inside redisAsyncHandleWrite
  bool auth_logged_ = false;   // this connection's auth failure is in the error log
};

}  // namespace mr::redis
