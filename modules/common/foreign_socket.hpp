// nginx connections over sockets that a client library owns (libpq,
// hiredis): nginx only watches them, the library opens and closes them.
#pragma once

#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/nginx.hpp"

#include <poll.h>

namespace mr::ngx {

// An nginx connection watching `fd`, with both events sent to `handler`
// and `data` in c->data; nullptr when nginx has no free connection.
inline ngx_connection_t* watch_socket(int fd, ngx_log_t* log, void* data, EventHandler handler) {
  ngx_connection_t* c = ngx_get_connection(fd, log);
  if (c == nullptr) return nullptr;
  c->data = data;
  c->log = log;
  c->read->handler = handler;
  c->write->handler = handler;
  c->read->log = log;
  c->write->log = log;
  return c;
}

// Stops watching: removes the events and any posted ones, then frees the
// nginx connection without closing the fd, which the library still owns.
// `library_closed_it`: the library has already closed that fd (libpq moving
// to another host). The kernel dropped it from epoll then, and its number
// may already name another socket: no epoll_ctl on it, or that call would
// fail (EBADF, ENOENT) or unregister somebody else's socket.
inline void unwatch_socket(ngx_connection_t*& c, bool library_closed_it = false) {
  if (c == nullptr) return;
  const ngx_uint_t flags = library_closed_it ? NGX_CLOSE_EVENT : 0;
  if (c->read->active) ngx_del_event(c->read, NGX_READ_EVENT, flags);
  if (c->write->active) ngx_del_event(c->write, NGX_WRITE_EVENT, flags);
  if (c->read->posted) {
    ngx_delete_posted_event(c->read);
  }
  if (c->write->posted) {
    ngx_delete_posted_event(c->write);
  }
  c->fd = -1;
  ngx_free_connection(c);
  c = nullptr;
}

// Whether `fd` has what a step waits for (or an error) right now, without
// waiting: a deadline's check that nginx did not miss an event
// (LibpqSocket::connect_timed_out).
inline bool socket_ready(int fd, bool for_write) {
  pollfd p{fd, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
  return ::poll(&p, 1, 0) == 1;
}

}  // namespace mr::ngx
