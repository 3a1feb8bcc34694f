#include "modules/idempotency/redis_client.hpp"

#include <openssl/crypto.h>

#include <string_view>
#include <utility>

#include "ngx-boundary/guarded.hpp"
#include "modules/common/node_metrics.hpp"
#include "modules/idempotency/redis_adapter.hpp"
#include "modules/idempotency/redis_sentinel.hpp"

namespace mr::redis {
namespace {

void count(mr::metrics::RedisError kind) {
  if (mr::metrics::Block* block = mr::ngx::node_metrics()) mr::metrics::count(*block, kind);
}

constexpr ngx_msec_t kReconnectPause = 1000;

bool defer_write(redisAsyncContext* ac) {
  auto* client = static_cast<Client*>(ac->data);
  return client != nullptr && client->defer_write();
}

// A context given up on (on_wrong_master) has no client any more.
void connect_cb(const redisAsyncContext* ac, int status) noexcept {
  if (auto* client = static_cast<Client*>(ac->data)) {
    mr::ngx::guarded(client->log(), [&] { client->on_connected(ac, status); });
  }
}
void disconnect_cb(const redisAsyncContext* ac, int) noexcept {
  if (auto* client = static_cast<Client*>(ac->data)) mr::ngx::guarded(client->log(), [&] { client->on_disconnected(ac); });
}

void finish(Call* call, const redisReply* reply) {
  if (call->timer.timer_set) ngx_del_timer(&call->timer);
  if (call->finished) return;
  call->finished = true;
  mr::ngx::guarded(ngx_cycle->log, [&] { call->done(reply); });
}

// What a demoted master (now a replica) answers a write, or a replica cut
// off from its master a read: the Sentinels name another master by now.
bool wrong_master(const redisReply* reply) {
  if (reply == nullptr || reply->type != REDIS_REPLY_ERROR) return false;
  const std::string_view error(reply->str, static_cast<std::size_t>(reply->len));
  return error.starts_with("READONLY") || error.starts_with("MASTERDOWN");
}

// Redis wants AUTH first: nginx has no password for it, or its AUTH failed.
bool noauth(const redisReply* reply) {
  return reply != nullptr && reply->type == REDIS_REPLY_ERROR &&
         std::string_view(reply->str, static_cast<std::size_t>(reply->len)).starts_with("NOAUTH");
}

void on_reply(redisAsyncContext* ac, Call* call, const redisReply* reply) {
  if (!call->finished) {  // a call that timed out was counted then
    if (reply == nullptr) count(mr::metrics::RedisError::no_reply);
    else if (noauth(reply)) count(mr::metrics::RedisError::auth);
    else if (reply->type == REDIS_REPLY_ERROR) count(mr::metrics::RedisError::error_reply);
  }
  if (noauth(reply) && ac->data != nullptr) static_cast<Client*>(ac->data)->on_noauth(ac, reply);
  // Before the caller's callback, which may send the next command.
  if (wrong_master(reply) && ac->data != nullptr) static_cast<Client*>(ac->data)->on_wrong_master(ac, reply);
  finish(call, reply);
}

// hiredis calls this exactly once per command: with the reply, or with
// null when the context is freed (its client may be going: the cycle's log).
// The call is owned here from then on.
void reply_cb(redisAsyncContext* ac, void* r, void* privdata) noexcept {
  std::unique_ptr<Call> call(static_cast<Call*>(privdata));
  mr::ngx::guarded(ngx_cycle->log, [&] { on_reply(ac, call.get(), static_cast<const redisReply*>(r)); });
}

}  // namespace

Client::Client(Settings settings, ngx_log_t* log) : settings_(std::move(settings)), log_(log) {
  master_ = Address{settings_.host, settings_.port};
  if (!settings_.sentinels.empty()) {
    sentinels_ = std::make_unique<SentinelLookup>(
        settings_.sentinels, settings_.sentinel_master, settings_.connect_timeout + settings_.command_timeout, log,
        [this](const std::optional<Address>& master) { on_master(master); });
  }
  connect_timer_.data = this;
  connect_timer_.log = log;
  connect_timer_.cancelable = 1;
  connect_timer_.handler = mr::ngx::c_entry(+[](ngx_event_t* ev) noexcept {
    auto* self = static_cast<Client*>(ev->data);
    ngx_log_error(NGX_LOG_WARN, self->log(), 0, "mr redis: connect timed out");
    count(mr::metrics::RedisError::connect);
    mr::ngx::guarded(self->log(), [self] { self->drop(kReconnectPause); });
  });
  flush_event_.data = this;
  flush_event_.log = log;
  flush_event_.handler = mr::ngx::c_entry(+[](ngx_event_t* ev) noexcept { static_cast<Client*>(ev->data)->flush(); });
}

Client::~Client() {
  closing_ = true;  // callbacks run below send nothing more
  if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
  if (flush_event_.posted) {
    ngx_delete_posted_event(&flush_event_);
  }
  drop(0);
  sentinels_.reset();
  OPENSSL_cleanse(settings_.password.data(), settings_.password.size());
}

void Client::flush() {
  if (flush_event_.posted) {
    ngx_delete_posted_event(&flush_event_);
  }
  if (ac_ == nullptr || !connected_ || writing_ || (ac_->c.flags & REDIS_IN_CALLBACK)) {
    // Inside a callback hiredis cannot write: the posted flush will.
    if (ac_ != nullptr && connected_ && !writing_) {
      ngx_post_event(&flush_event_, &ngx_posted_events);
    }
    return;
  }
  writing_ = true;
  redisAsyncHandleWrite(ac_);  // may disconnect: nothing of ac_ after it
  writing_ = false;
}

bool Client::may_send() const {
  if (closing_) return false;
  return ac_ != nullptr || (sentinels_ && sentinels_->busy()) || ngx_current_msec >= retry_at_;
}

bool Client::defer_write() {
  if (ac_ == nullptr || !connected_ || writing_) return false;
  if (!flush_event_.posted) {
    ngx_post_event(&flush_event_, &ngx_posted_events);
  }
  return true;
}

bool Client::ensure_connected() {
  if (closing_) return false;
  if (ac_ != nullptr || (sentinels_ && sentinels_->busy())) return true;
  if (ngx_current_msec < retry_at_) return false;
  if (!sentinels_) return connect_to(master_);
  // The master may have moved since the last connection: ask first. A
  // lookup that fails at once has set the pause (on_master).
  sentinels_->start();
  return sentinels_->busy();
}

bool Client::connect_to(const Address& at) {
  redisAsyncContext* ac = redisAsyncConnect(at.host.c_str(), at.port);
  if (ac == nullptr || ac->err) {
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: cannot connect to %s:%d: %s", at.host.c_str(), at.port,
                  ac != nullptr ? ac->errstr : "out of memory");
    if (ac != nullptr) redisAsyncFree(ac);
    count(mr::metrics::RedisError::connect);
    retry_at_ = ngx_current_msec + kReconnectPause;
    return false;
  }
  if (!attach(ac, log_, mr::redis::defer_write)) {
    redisAsyncFree(ac);
    retry_at_ = ngx_current_msec + kReconnectPause;
    return false;
  }
  ac->data = this;
  redisAsyncSetConnectCallback(ac, connect_cb);
  redisAsyncSetDisconnectCallback(ac, disconnect_cb);
  ac_ = ac;
  connected_ = false;
  auth_logged_ = false;
  // The connect completes on writability; commands queue in hiredis, AUTH
  // first, so every command after it runs authenticated.
  if (!settings_.password.empty()) {
    std::vector<const char*> args{"AUTH"};
    std::vector<size_t> lens{4};
    if (!settings_.username.empty()) {
      args.push_back(settings_.username.data());
      lens.push_back(settings_.username.size());
    }
    args.push_back(settings_.password.data());
    lens.push_back(settings_.password.size());
    const auto auth_cb = mr::ngx::c_entry(+[](redisAsyncContext* c, void* reply, void*) noexcept {
      if (auto* client = static_cast<Client*>(c->data)) {
        mr::ngx::guarded(client->log(), [&] { client->on_auth_reply(static_cast<redisReply*>(reply)); });
      }
    });
    redisAsyncCommandArgv(ac, auth_cb, nullptr, static_cast<int>(args.size()), args.data(), lens.data());
  }
  want_write(ac);
  ngx_add_timer(&connect_timer_, settings_.connect_timeout);
  return true;
}

void Client::on_master(const std::optional<Address>& master) {
  if (!master) {
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: no Sentinel named the master \"%s\"",
                  settings_.sentinel_master.c_str());
    count(mr::metrics::RedisError::connect);
    retry_at_ = ngx_current_msec + kReconnectPause;
    fail_parked();
    return;
  }
  if (!(*master == master_)) {
    ngx_log_error(NGX_LOG_NOTICE, log_, 0, "mr redis: Sentinel names %s:%d as master \"%s\"", master->host.c_str(),
                  master->port, settings_.sentinel_master.c_str());
    master_ = *master;
  }
  if (!connect_to(master_)) {
    fail_parked();
    return;
  }
  send_parked();
}

// Behind AUTH on the new connection, in the order they were issued.
// Commands of requests that have gone meanwhile are not sent (a claim no
// request waits for would only hold its key).
void Client::send_parked() {
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& p : parked) {
    Call* handle = p.call.get();
    if (handle->finished || ac_ == nullptr) {
      if (!handle->finished) count(mr::metrics::RedisError::no_reply);
      finish(handle, nullptr);
      continue;
    }
    std::vector<const char*> args;
    std::vector<size_t> lens;
    for (const auto& a : p.argv) {
      args.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAsyncCommandArgv(ac_, reply_cb, handle, static_cast<int>(args.size()), args.data(), lens.data()) !=
        REDIS_OK) {
      finish(handle, nullptr);
      continue;
    }
    p.call.release();  // owned by hiredis until reply_cb; its timer runs on
  }
}

void Client::fail_parked() {
  auto parked = std::move(parked_);
  parked_.clear();
  for (auto& p : parked) {
    if (!p.call->finished) count(mr::metrics::RedisError::no_reply);
    finish(p.call.get(), nullptr);
  }
}

void Client::on_connected(const redisAsyncContext* ac, int status) {
  if (ac != ac_) return;
  if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
  if (status != REDIS_OK) {
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: connect to %s:%d failed: %s", master_.host.c_str(),
                  master_.port, ac->errstr);
    count(mr::metrics::RedisError::connect);
    // hiredis frees the context after a failed connect; no disconnect follows.
    ac_ = nullptr;
    connected_ = false;
    retry_at_ = ngx_current_msec + kReconnectPause;
    return;
  }
  connected_ = true;
}

void Client::on_auth_reply(const redisReply* reply) {
  // A refused AUTH leaves the connection up; every command then fails
  // (NOAUTH) and requests go on to the database path.
  if (reply != nullptr && reply->type == REDIS_REPLY_ERROR) {
    count(mr::metrics::RedisError::auth);
    ngx_log_error(NGX_LOG_ERR, log_, 0, "mr redis: AUTH refused: %s", reply->str);
    auth_logged_ = true;
  }
}

// Once per connection, at error (Debian's default error_log level): every
// POST now goes to the database without Redis, until the configuration
// gives the password (mr_redis_password_file) and nginx is reloaded.
void Client::on_noauth(const redisAsyncContext* ac, const redisReply* reply) {
  if (ac != ac_ || auth_logged_) return;
  auth_logged_ = true;
  if (settings_.password.empty()) {
    ngx_log_error(NGX_LOG_ERR, log_, 0,
                  "mr redis: %s:%d requires a password (%s) and none is configured: set "
                  "mr_redis_password_file (and mr_redis_username for an ACL user); until then every POST "
                  "goes to the database without Redis",
                  master_.host.c_str(), master_.port, reply->str);
  }
}

// Only for the current context: one freed inside its own callback reports
// its disconnect after a new one may have been made.
void Client::on_disconnected(const redisAsyncContext* ac) {
  if (ac != ac_) return;
  if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
  ac_ = nullptr;
  connected_ = false;
}

// Only with Sentinels: a fixed address would give the same server again.
// hiredis frees the context once this reply's callback returns; the next
// command asks the Sentinels after the pause (a Sentinel that still names
// this server is not asked in a loop).
void Client::on_wrong_master(redisAsyncContext* ac, const redisReply* reply) {
  if (!sentinels_ || ac != ac_) return;
  ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: %s:%d answered %s; asking the Sentinels again",
                master_.host.c_str(), master_.port, reply->str);
  if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
  ac_ = nullptr;
  connected_ = false;
  retry_at_ = ngx_current_msec + kReconnectPause;
  ac->data = nullptr;  // its remaining callbacks (null replies) find no client
  redisAsyncFree(ac);
}

void Client::drop(ngx_msec_t pause) {
  // The pause first: callbacks run below may issue commands, which must
  // not connect again at once.
  retry_at_ = ngx_current_msec + pause;
  if (sentinels_) sentinels_->cancel();
  fail_parked();
  if (ac_ == nullptr) return;
  redisAsyncContext* ac = ac_;
  ac_ = nullptr;
  connected_ = false;
  redisAsyncFree(ac);
}

void Client::on_timeout(Call* call) {
  count(mr::metrics::RedisError::timeout);
  for (auto it = parked_.begin(); it != parked_.end(); ++it) {
    if (it->call.get() != call) continue;
    // Still waiting for the Sentinels: this command alone gives up. The
    // lookup goes on under its own deadline (a Sentinel that hangs is
    // left for the next one), for the commands behind it.
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: command timed out waiting for the Sentinels");
    Parked gone = std::move(*it);
    parked_.erase(it);
    finish(call, nullptr);
    return;
  }
  ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: command timed out; reconnecting");
  finish(call, nullptr);
  // A server that does not answer in time is dropped: the pending calls
  // get null replies, and the next command reconnects after a pause.
  drop(kReconnectPause);
}

Call* Client::command(const std::vector<std::string_view>& argv,
                      std::function<void(const redisReply*)> done, Flush flush) {
  if (!ensure_connected()) {
    count(mr::metrics::RedisError::no_reply);
    done(nullptr);
    return nullptr;
  }
  auto call = std::make_unique<Call>();
  call->done = std::move(done);
  call->client = this;
  call->timer.data = call.get();
  call->timer.log = log_;
  call->timer.handler = mr::ngx::c_entry(+[](ngx_event_t* ev) noexcept {
    auto* c = static_cast<Call*>(ev->data);
    mr::ngx::guarded(ev->log, [c] { c->client->on_timeout(c); });
  });
  Call* handle = call.get();
  if (ac_ == nullptr) {
    // The Sentinels are being asked: sent on the connection to the master
    // they name, or answered null if none does in time.
    parked_.push_back(Parked{std::move(call), std::vector<std::string>(argv.begin(), argv.end())});
    ngx_add_timer(&handle->timer, settings_.command_timeout);
    return handle;
  }
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (auto a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  if (redisAsyncCommandArgv(ac_, reply_cb, handle, static_cast<int>(args.size()), args.data(),
                            lens.data()) != REDIS_OK) {
    finish(handle, nullptr);
    return nullptr;
  }
  call.release();  // owned by hiredis until reply_cb
  ngx_add_timer(&handle->timer, settings_.command_timeout);
  // Flush::now writes before returning. Otherwise (and inside a hiredis
  // callback, where hiredis cannot write) the posted flush, or the caller's
  // flush(), writes at the end of this loop iteration, before nginx waits
  // for events again.
  if (flush == Flush::now) this->flush();
  return handle;
}

}  // namespace mr::redis
