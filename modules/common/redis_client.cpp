#include "modules/common/redis_client.hpp"

#include "modules/common/foreign_socket.hpp"
#include "modules/common/node_metrics.hpp"

namespace mr::redis {
namespace {

void count(mr::metrics::RedisError kind) {
  if (mr::metrics::Block* block = mr::ngx::node_metrics()) mr::metrics::count(*block, kind);
}

// The adapter: hiredis asks for read/write interest, nginx delivers events.
struct Adapter {
  redisAsyncContext* ac;
  ngx_connection_t* c;
};

void on_event(ngx_event_t* ev) {
  auto* c = static_cast<ngx_connection_t*>(ev->data);
  auto* a = static_cast<Adapter*>(c->data);
  if (ev->write) {
    redisAsyncHandleWrite(a->ac);
  } else {
    redisAsyncHandleRead(a->ac);
  }
}

// Level-triggered: one read of at most 16 KiB does not drain a big reply.
void add_read(void* p) {
  auto* a = static_cast<Adapter*>(p);
  if (!a->c->read->active) ngx_add_event(a->c->read, NGX_READ_EVENT, 0);
}
void del_read(void* p) {
  auto* a = static_cast<Adapter*>(p);
  if (a->c->read->active) ngx_del_event(a->c->read, NGX_READ_EVENT, 0);
}
void add_write(void* p) {
  auto* a = static_cast<Adapter*>(p);
  if (!a->c->write->active) ngx_add_event(a->c->write, NGX_WRITE_EVENT, 0);
}
void del_write(void* p) {
  auto* a = static_cast<Adapter*>(p);
  if (a->c->write->active) ngx_del_event(a->c->write, NGX_WRITE_EVENT, 0);
}
// hiredis closes the fd itself after this: only release the nginx side.
void cleanup(void* p) {
  std::unique_ptr<Adapter> a(static_cast<Adapter*>(p));
  mr::ngx::unwatch_socket(a->c);
}

void connect_cb(const redisAsyncContext* ac, int status) {
  static_cast<Client*>(ac->data)->on_connected(status);
}
void disconnect_cb(const redisAsyncContext* ac, int) {
  static_cast<Client*>(ac->data)->on_disconnected();
}

void finish(Call* call, const redisReply* reply) {
  if (call->timer.timer_set) ngx_del_timer(&call->timer);
  if (call->finished) return;
  call->finished = true;
  try {
    call->done(reply);
  } catch (...) {
  }
}

// hiredis calls this exactly once per command: with the reply, or with
// null when the context is freed. The call is owned here from then on.
void reply_cb(redisAsyncContext*, void* r, void* privdata) {
  std::unique_ptr<Call> call(static_cast<Call*>(privdata));
  const auto* reply = static_cast<const redisReply*>(r);
  if (!call->finished) {  // a call that timed out was counted then
    if (reply == nullptr) count(mr::metrics::RedisError::no_reply);
    else if (reply->type == REDIS_REPLY_ERROR) count(mr::metrics::RedisError::error_reply);
  }
  finish(call.get(), static_cast<const redisReply*>(r));
}

}  // namespace

Client::Client(Settings settings, ngx_log_t* log) : settings_(std::move(settings)), log_(log) {
  connect_timer_.data = this;
  connect_timer_.log = log;
  connect_timer_.cancelable = 1;
  connect_timer_.handler = [](ngx_event_t* ev) {
    auto* self = static_cast<Client*>(ev->data);
    ngx_log_error(NGX_LOG_WARN, self->log(), 0, "mr redis: connect timed out");
    count(mr::metrics::RedisError::connect);
    self->drop();
    self->retry_at_ = ngx_current_msec + 1000;
  };
}

Client::~Client() {
  if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
  drop();
}

bool Client::ensure_connected() {
  if (ac_ != nullptr) return true;
  if (ngx_current_msec < retry_at_) return false;
  redisAsyncContext* ac = redisAsyncConnect(settings_.host.c_str(), settings_.port);
  if (ac == nullptr || ac->err) {
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: cannot connect: %s",
                  ac != nullptr ? ac->errstr : "out of memory");
    if (ac != nullptr) redisAsyncFree(ac);
    count(mr::metrics::RedisError::connect);
    retry_at_ = ngx_current_msec + 1000;
    return false;
  }
  auto adapter = std::make_unique<Adapter>(Adapter{ac, nullptr});
  adapter->c = mr::ngx::watch_socket(ac->c.fd, log_, adapter.get(), on_event);
  if (adapter->c == nullptr) {
    redisAsyncFree(ac);
    retry_at_ = ngx_current_msec + 1000;
    return false;
  }
  ac->ev.data = adapter.release();
  ac->ev.addRead = add_read;
  ac->ev.delRead = del_read;
  ac->ev.addWrite = add_write;
  ac->ev.delWrite = del_write;
  ac->ev.cleanup = cleanup;
  ac->data = this;
  redisAsyncSetConnectCallback(ac, connect_cb);
  redisAsyncSetDisconnectCallback(ac, disconnect_cb);
  ac_ = ac;
  connected_ = false;
  // The connect completes on writability; commands queue in hiredis.
  add_write(ac->ev.data);
  ngx_add_timer(&connect_timer_, settings_.connect_timeout);
  return true;
}

void Client::on_connected(int status) {
  if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
  if (status != REDIS_OK) {
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: connect failed: %s", ac_ ? ac_->errstr : "");
    count(mr::metrics::RedisError::connect);
    // hiredis frees the context after a failed connect; no disconnect follows.
    ac_ = nullptr;
    connected_ = false;
    retry_at_ = ngx_current_msec + 1000;
    return;
  }
  connected_ = true;
}

void Client::on_disconnected() {
  if (connect_timer_.timer_set) ngx_del_timer(&connect_timer_);
  ac_ = nullptr;
  connected_ = false;
}

void Client::drop() {
  if (ac_ == nullptr) return;
  redisAsyncContext* ac = ac_;
  ac_ = nullptr;
  connected_ = false;
  redisAsyncFree(ac);
}

void Client::on_timeout(Call* call) {
  ngx_log_error(NGX_LOG_WARN, log_, 0, "mr redis: command timed out; reconnecting");
  count(mr::metrics::RedisError::timeout);
  finish(call, nullptr);
  // A server that does not answer in time is dropped: the pending calls
  // get null replies, and the next command reconnects after a pause.
  drop();
  retry_at_ = ngx_current_msec + 1000;
}

Call* Client::command(const std::vector<std::string_view>& argv,
                      std::function<void(const redisReply*)> done) {
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
  call->timer.handler = [](ngx_event_t* ev) {
    auto* c = static_cast<Call*>(ev->data);
    c->client->on_timeout(c);
  };
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (auto a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  Call* handle = call.get();
  if (redisAsyncCommandArgv(ac_, reply_cb, handle, static_cast<int>(args.size()), args.data(),
                            lens.data()) != REDIS_OK) {
    finish(handle, nullptr);
    return nullptr;
  }
  call.release();  // owned by hiredis until reply_cb
  ngx_add_timer(&handle->timer, settings_.command_timeout);
  // Write now rather than on the next loop iteration: a command issued
  // just before an HTTP response (the stored idempotent answer) then
  // reaches Redis before the client can send its retry.
  if (connected_ && !(ac_->c.flags & REDIS_IN_CALLBACK)) redisAsyncHandleWrite(ac_);
  return handle;
}

}  // namespace mr::redis
