// The socket of a non-blocking libpq connection, watched by nginx: the
// ledger pool's connections and the webhooks' listen connection. libpq
// opens and closes it: it replaces it while it connects (the next host of
// a multi-host DSN, target_session_attrs refusing a standby, an SSL retry)
// and closes it when the server goes away.
// A new socket often gets the old number back, so the number alone cannot
// tell: the inode can.
#pragma once

#include <libpq-fe.h>
#include <sys/stat.h>

#include "modules/common/connect_deadline.hpp"
#include "modules/common/foreign_socket.hpp"

namespace mr::ngx {

class LibpqSocket {
 public:
  // Called with `owner` for every event nginx hands over; it runs its body
  // through guarded() (ngx-boundary/guarded.hpp).
  using Handler = void (*)(void* owner, bool writable) noexcept;

  LibpqSocket(ngx_log_t* log, void* owner, Handler handler) : log_(log), owner_(owner), handler_(handler) {}
  LibpqSocket(const LibpqSocket&) = delete;
  LibpqSocket& operator=(const LibpqSocket&) = delete;

  // Watches the socket `pg` has now, unless it is the one watched. false:
  // libpq has none, or nginx has no free connection.
  bool follow(const PGconn* pg) {
    if (follows(pg)) return true;
    unwatch_socket(c_, true);  // the old socket is closed and out of epoll already
    const int fd = PQsocket(pg);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) return false;
    c_ = watch_socket(fd, log_, this, on_event);
    ino_ = st.st_ino;
    return c_ != nullptr;
  }

  // Read interest stays registered (level-triggered, so a read that does
  // not drain the socket is called again); write interest only while
  // `write`: libpq has unsent bytes, or a connect step waits to write.
  void want(bool write) {
    wants_write_ = write;
    if (c_ == nullptr) return;
    if (!c_->read->active) ngx_add_event(c_->read, NGX_READ_EVENT, 0);
    if (write && !c_->write->active) ngx_add_event(c_->write, NGX_WRITE_EVENT, 0);
    if (!write && c_->write->active) ngx_del_event(c_->write, NGX_WRITE_EVENT, 0);
  }
  bool wants_write() const { return wants_write_; }

  // Stops watching, before PQfinish: libpq closes the socket itself.
  void release(const PGconn* pg) {
    unwatch_socket(c_, !follows(pg));
    wants_write_ = false;
    deadline_.reset();
  }

  // A connect's `timer` fired (connect_deadline.hpp: what it means). A slow
  // or frozen server is the operator's to see: an error naming the host, and
  // true (give up on it). A socket nginx failed to watch is the owner's
  // defect: an alert, and true. A socket ready at the deadline gets one more
  // pass (the timer again) and false.
  bool connect_timed_out(const PGconn* pg, ngx_event_t* timer, const char* who, ngx_msec_t timeout) {
    const bool watched = follows(pg);
    switch (deadline_.reached(watched, watched && socket_ready(c_->fd, wants_write_))) {
      case ConnectDeadline::Verdict::one_more_pass:
        ngx_add_timer(timer, 1);
        return false;
      case ConnectDeadline::Verdict::ready_unwatched:
      case ConnectDeadline::Verdict::socket_replaced:
        ngx_log_error(NGX_LOG_ALERT, log_, 0, "%s: a connect's socket was %s but nginx did not watch it", who,
                      watched ? "ready" : "replaced");
        return true;
      case ConnectDeadline::Verdict::server_silent:
        break;
    }
    ngx_log_error(NGX_LOG_ERR, log_, 0, "%s: connecting to PostgreSQL timed out: %s:%s did not answer within %M ms",
                  who, PQhost(pg), PQport(pg), timeout);
    return true;
  }

 private:
  bool follows(const PGconn* pg) const {
    struct stat st {};
    return c_ != nullptr && pg != nullptr && PQsocket(pg) == c_->fd && fstat(c_->fd, &st) == 0 &&
           st.st_ino == ino_;
  }

  static void on_event(ngx_event_t* ev) noexcept {
    auto* self = static_cast<LibpqSocket*>(static_cast<ngx_connection_t*>(ev->data)->data);
    self->deadline_.handed_over();
    self->handler_(self->owner_, ev->write != 0);
  }

  ngx_log_t* log_;
  void* owner_;
  Handler handler_;
  ngx_connection_t* c_ = nullptr;
  ino_t ino_ = 0;  // which socket c_ watches
  bool wants_write_ = false;
  ConnectDeadline deadline_;
};

}  // namespace mr::ngx
