#include "ledger/timestamps.hpp"

#include <cstdio>

namespace mr {
namespace {

// Exactly n digits at text[pos].
std::optional<int> digits(std::string_view text, std::size_t pos, std::size_t n) {
  if (pos + n > text.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

}  // namespace

std::optional<Timestamp> parse_rfc3339_utc(std::string_view t) {
  // YYYY-MM-DDTHH:MM:SS
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':') {
    return std::nullopt;
  }
  auto year = digits(t, 0, 4), month = digits(t, 5, 2), day = digits(t, 8, 2);
  auto hour = digits(t, 11, 2), minute = digits(t, 14, 2), second = digits(t, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*hour > 23 || *minute > 59 || *second > 59) return std::nullopt;
  const std::chrono::year_month_day ymd{std::chrono::year{*year},
                                        std::chrono::month{static_cast<unsigned>(*month)},
                                        std::chrono::day{static_cast<unsigned>(*day)}};
  if (!ymd.ok()) return std::nullopt;
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (pos < t.size() && t[pos] == '.') {
    std::size_t n = 0;
    ++pos;
    while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') {
      if (++n > 9) return std::nullopt;
      nanos = nanos * 10 + (t[pos] - '0');
      ++pos;
    }
    if (n == 0) return std::nullopt;
    for (std::size_t i = n; i < 9; ++i) nanos *= 10;
  }
  const std::string_view zone = t.substr(pos);
  if (zone != "Z" && zone != "+00:00") return std::nullopt;
  using namespace std::chrono;
  return sys_days{ymd} + hours{*hour} + minutes{*minute} + seconds{*second} + nanoseconds{nanos};
}

std::string format_rfc3339_utc(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto secs = floor<seconds>(t);
  const auto days = floor<std::chrono::days>(secs);
  const year_month_day ymd{days};
  const hh_mm_ss hms{secs - days};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

}  // namespace mr
