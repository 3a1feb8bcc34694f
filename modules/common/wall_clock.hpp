// The wall clock as of this event loop iteration: nginx reads it once per
// iteration (ngx_timeofday), so a request's checks cost no clock_gettime
// of their own. Stale by at most one iteration (or timer_resolution).
#pragma once

#include <chrono>
#include <cstdint>

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

inline std::chrono::system_clock::time_point wall_clock() {
  const ngx_time_t* tp = ngx_timeofday();
  return std::chrono::system_clock::time_point(std::chrono::seconds(tp->sec) + std::chrono::milliseconds(tp->msec));
}

// Unix ms of wall_clock().
inline std::int64_t wall_clock_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(wall_clock().time_since_epoch()).count();
}

}  // namespace mr::ngx
