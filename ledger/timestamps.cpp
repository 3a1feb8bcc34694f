#include "ledger/timestamps.hpp"


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

std::optional<Rfc3339> parse_rfc3339_utc(std::string_view t) {
  using namespace std::chrono;
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':') {
    return std::nullopt;
  }
  const auto y = digits(t, 0, 4), mo = digits(t, 5, 2), d = digits(t, 8, 2);
  const auto h = digits(t, 11, 2), mi = digits(t, 14, 2), s = digits(t, 17, 2);
  if (!y || !mo || !d || !h || !mi || !s || *h > 23 || *mi > 59 || *s > 59) return std::nullopt;
  const year_month_day ymd{year{*y}, month{static_cast<unsigned>(*mo)}, day{static_cast<unsigned>(*d)}};
  if (!ymd.ok()) return std::nullopt;  // month 1-12, day within the month, leap years
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (t[pos] == '.') {
    std::size_t n = 0;
    for (++pos; pos < t.size() && t[pos] >= '0' && t[pos] <= '9'; ++pos) {
      if (++n > 9) return std::nullopt;
      nanos = nanos * 10 + (t[pos] - '0');
    }
    if (n == 0) return std::nullopt;
    for (; n < 9; ++n) nanos *= 10;
  }
  const std::string_view zone = t.substr(pos);
  if (zone != "Z" && zone != "+00:00") return std::nullopt;
  return Rfc3339{sys_days{ymd} + hours{*h} + minutes{*mi} + seconds{*s}, nanoseconds{nanos}};
}

}  // namespace mr
