// A worker's own periodic timer (payout simulator, pool metrics): its
// handler re-arms it unless the worker is exiting; cancelable, so it never
// keeps an old worker alive after a reload.
#pragma once

#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

inline void start_worker_timer(ngx_event_t& ev, EventHandler handler, ngx_log_t* log, ngx_msec_t delay) {
  ev = ngx_event_t{};
  ev.handler = handler;
  ev.log = log;
  ev.cancelable = 1;
  ngx_add_timer(&ev, delay);
}

inline void stop_worker_timer(ngx_event_t& ev) {
  if (ev.timer_set) ngx_del_timer(&ev);
}

}  // namespace mr::ngx
