// Asks Redis Sentinels for the address of the master they watch
// (SENTINEL get-master-addr-by-name), one Sentinel after another, through
// hiredis's async API in nginx's event loop: never blocking the worker.
// A lookup starts at the Sentinel that answered last; each attempt has one
// deadline (connect and reply). The address must be an IP literal: a name
// would make hiredis resolve it blocking.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

extern "C" {
#include <hiredis/async.h>
#include <hiredis/hiredis.h>
}

#include "ngx-boundary/nginx.hpp"
#include "lua-free-config/redis_address.hpp"

namespace mr::redis {

// The master's address from a reply to get-master-addr-by-name: a
// two-element array of IP literal and port; nullopt for anything else (nil:
// the Sentinel does not know the name; an error; a host name).
std::optional<Address> master_from_reply(const redisReply* reply);

class SentinelLookup {
 public:
  using Done = std::function<void(const std::optional<Address>&)>;

  SentinelLookup(std::vector<Address> sentinels, std::string master, ngx_msec_t attempt_timeout, ngx_log_t* log,
                 Done done);
  ~SentinelLookup();
  SentinelLookup(const SentinelLookup&) = delete;
  SentinelLookup& operator=(const SentinelLookup&) = delete;

  // Starts a lookup unless one is on its way. `done` runs once per lookup:
  // with the first address a Sentinel names, or nullopt once every one has
  // failed (possibly within start(), when each refused at once).
  void start();
  bool busy() const { return ac_ != nullptr; }
  // Ends a lookup on its way without calling `done`.
  void cancel();

  // Internal, for the hiredis callbacks and the timer.
  void on_connect_failed(const redisAsyncContext* ac);
  void on_reply(redisAsyncContext* ac, const redisReply* reply);
  void on_timeout();

 private:
  void ask_next();  // the next Sentinel not yet asked in this lookup, or done(nullopt)
  void end_attempt();

  std::vector<Address> sentinels_;
  std::string master_;
  ngx_msec_t attempt_timeout_;
  ngx_log_t* log_;
  Done done_;
  redisAsyncContext* ac_ = nullptr;  // the attempt on its way
  std::size_t first_ = 0;            // where a lookup begins: the last Sentinel that answered
  std::size_t tried_ = 0;            // Sentinels asked in this lookup
  std::size_t current_ = 0;          // the one being asked
  ngx_event_t timer_{};
};

}  // namespace mr::redis
