#include "modules/idempotency/redis_adapter.hpp"

#include <memory>

#include "modules/common/foreign_socket.hpp"

namespace mr::redis {
namespace {

struct Adapter {
  redisAsyncContext* ac;
  ngx_connection_t* c;
  DeferWrite defer_write;
};

void on_event(ngx_event_t* ev) noexcept {
  auto* c = static_cast<ngx_connection_t*>(ev->data);
  auto* a = static_cast<Adapter*>(c->data);
  if (ev->write) {
    redisAsyncHandleWrite(a->ac);
  } else {
    redisAsyncHandleRead(a->ac);
  }
}

// Level-triggered: one read of at most 16 KiB does not drain a big reply.
void add_read(void* p) noexcept {
  auto* a = static_cast<Adapter*>(p);
  if (!a->c->read->active) ngx_add_event(a->c->read, NGX_READ_EVENT, 0);
}
void del_read(void* p) noexcept {
  auto* a = static_cast<Adapter*>(p);
  if (a->c->read->active) ngx_del_event(a->c->read, NGX_READ_EVENT, 0);
}
void add_write(void* p) noexcept {
  auto* a = static_cast<Adapter*>(p);
  if (a->defer_write != nullptr && a->defer_write(a->ac)) return;
  if (!a->c->write->active) ngx_add_event(a->c->write, NGX_WRITE_EVENT, 0);
}
void del_write(void* p) noexcept {
  auto* a = static_cast<Adapter*>(p);
  if (a->c->write->active) ngx_del_event(a->c->write, NGX_WRITE_EVENT, 0);
}
// hiredis closes the fd itself after this: only release the nginx side.
void cleanup(void* p) noexcept {
  std::unique_ptr<Adapter> a(static_cast<Adapter*>(p));
  mr::ngx::unwatch_socket(a->c);
}

}  // namespace

bool attach(redisAsyncContext* ac, ngx_log_t* log, DeferWrite defer_write) {
  auto adapter = std::make_unique<Adapter>(Adapter{ac, nullptr, defer_write});
  adapter->c = mr::ngx::watch_socket(ac->c.fd, log, adapter.get(), on_event);
  if (adapter->c == nullptr) return false;
  ac->ev.data = adapter.release();
  ac->ev.addRead = add_read;
  ac->ev.delRead = del_read;
  ac->ev.addWrite = add_write;
  ac->ev.delWrite = del_write;
  ac->ev.cleanup = cleanup;
  return true;
}

void want_write(redisAsyncContext* ac) { add_write(ac->ev.data); }

}  // namespace mr::redis
