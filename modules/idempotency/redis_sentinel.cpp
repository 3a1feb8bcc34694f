#include "modules/idempotency/redis_sentinel.hpp"

#include <string_view>
#include <utility>

#include "ngx-boundary/guarded.hpp"
#include "modules/idempotency/redis_adapter.hpp"

namespace mr::redis {
namespace {

SentinelLookup* owner(const redisAsyncContext* ac) { return static_cast<SentinelLookup*>(ac->data); }

// Every hiredis callback may run inside nginx's event handler: nothing
// may escape into C.
void connect_cb(const redisAsyncContext* ac, int status) noexcept {
  if (status == REDIS_OK) return;  // the queued command goes out now
  mr::ngx::guarded(ngx_cycle->log, [&] {
    if (SentinelLookup* self = owner(ac)) self->on_connect_failed(ac);
  });
}

void reply_cb(redisAsyncContext* ac, void* reply, void*) noexcept {
  mr::ngx::guarded(ngx_cycle->log, [&] {
    if (SentinelLookup* self = owner(ac)) self->on_reply(ac, static_cast<const redisReply*>(reply));
  });
}

std::string_view text(const redisReply* r) { return {r->str, static_cast<std::size_t>(r->len)}; }

}  // namespace

std::optional<Address> master_from_reply(const redisReply* reply) {
  if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) return std::nullopt;
  const redisReply* ip = reply->element[0];
  const redisReply* port = reply->element[1];
  if (ip == nullptr || port == nullptr || ip->type != REDIS_REPLY_STRING || port->type != REDIS_REPLY_STRING) {
    return std::nullopt;
  }
  return address(text(ip), text(port));
}

SentinelLookup::SentinelLookup(std::vector<Address> sentinels, std::string master, ngx_msec_t attempt_timeout,
                               ngx_log_t* log, Done done)
    : sentinels_(std::move(sentinels)), master_(std::move(master)), attempt_timeout_(attempt_timeout), log_(log),
      done_(std::move(done)) {
  timer_.data = this;
  timer_.log = log;
  timer_.cancelable = 1;
  timer_.handler = mr::ngx::c_entry(+[](ngx_event_t* ev) noexcept {
    mr::ngx::guarded(ev->log, [ev] { static_cast<SentinelLookup*>(ev->data)->on_timeout(); });
  });
}

SentinelLookup::~SentinelLookup() { cancel(); }

void SentinelLookup::start() {
  if (busy()) return;
  tried_ = 0;
  ask_next();
}

void SentinelLookup::cancel() { end_attempt(); }

// Frees the attempt's context; inside one of its callbacks hiredis frees
// it once the callback returns. Its remaining callbacks find no owner.
void SentinelLookup::end_attempt() {
  if (timer_.timer_set) ngx_del_timer(&timer_);
  if (ac_ == nullptr) return;
  redisAsyncContext* ac = ac_;
  ac_ = nullptr;
  ac->data = nullptr;
  redisAsyncFree(ac);
}

void SentinelLookup::ask_next() {
  while (tried_ < sentinels_.size()) {
    current_ = (first_ + tried_) % sentinels_.size();
    ++tried_;
    const Address& s = sentinels_[current_];
    redisAsyncContext* ac = redisAsyncConnect(s.host.c_str(), s.port);
    if (ac == nullptr || ac->err) {
      ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: cannot reach Sentinel %s:%d: %s", s.host.c_str(), s.port,
                    ac != nullptr ? ac->errstr : "out of memory");
      if (ac != nullptr) redisAsyncFree(ac);
      continue;
    }
    if (!attach(ac, log_)) {
      redisAsyncFree(ac);
      continue;
    }
    ac->data = this;
    redisAsyncSetConnectCallback(ac, connect_cb);
    // Queued until the connect completes; hiredis then writes it.
    if (redisAsyncCommand(ac, reply_cb, nullptr, "SENTINEL get-master-addr-by-name %b", master_.data(),
                          master_.size()) != REDIS_OK) {
      ac->data = nullptr;
      redisAsyncFree(ac);
      continue;
    }
    want_write(ac);
    ac_ = ac;
    ngx_add_timer(&timer_, attempt_timeout_);
    return;
  }
  done_(std::nullopt);
}

// hiredis frees the context itself after a failed connect.
void SentinelLookup::on_connect_failed(const redisAsyncContext* ac) {
  if (ac != ac_) return;
  const Address& s = sentinels_[current_];
  ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: cannot reach Sentinel %s:%d: %s", s.host.c_str(), s.port,
                ac->errstr);
  ac_ = nullptr;
  const_cast<redisAsyncContext*>(ac)->data = nullptr;
  if (timer_.timer_set) ngx_del_timer(&timer_);
  ask_next();
}

void SentinelLookup::on_reply(redisAsyncContext* ac, const redisReply* reply) {
  if (ac != ac_) return;
  const std::optional<Address> master = master_from_reply(reply);
  const Address& s = sentinels_[current_];
  if (!master) {
    const std::string why = reply == nullptr                     ? std::string("connection lost")
                            : reply->type == REDIS_REPLY_NIL     ? "does not know master \"" + master_ + "\""
                            : reply->type == REDIS_REPLY_ERROR   ? std::string(text(reply))
                                                                 : std::string("an answer that names no IP and port");
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: Sentinel %s:%d: %s", s.host.c_str(), s.port, why.c_str());
  }
  end_attempt();  // one question per connection: lookups are rare (connects only)
  if (!master) {
    ask_next();
    return;
  }
  first_ = current_;
  done_(master);
}

void SentinelLookup::on_timeout() {
  const Address& s = sentinels_[current_];
  ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: Sentinel %s:%d did not answer in time", s.host.c_str(), s.port);
  end_attempt();
  ask_next();
}

}  // namespace mr::redis
