// RFC 3339 timestamps in UTC, the only form the API accepts: the edge's
// X-MR-Timestamp and the bodies' occurredAt / settledAt alike.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace mr {

using Timestamp = std::chrono::sys_time<std::chrono::nanoseconds>;

// Whole seconds plus a fraction: every year 0000-9999 fits, where a 64-bit
// nanosecond count since 1970 would wrap after 2262.
struct Rfc3339 {
  std::chrono::sys_seconds seconds;
  std::chrono::nanoseconds fraction;  // 0 .. 999'999'999
};

// YYYY-MM-DDTHH:MM:SS[.1-9 digits](Z|+00:00); nullopt for anything else.
std::optional<Rfc3339> parse_rfc3339_utc(std::string_view text);


}  // namespace mr
