#include "ledger/read_requests.hpp"

#include <array>
#include <algorithm>
#include <charconv>
#include <climits>

namespace mr::ledger {
namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(plus_is_space && s[i] == '+' ? ' ' : s[i]);
    }
  }
  return out;
}

Error bad(const std::string& field, const std::string& problem) {
  return Error{ErrorCode::invalid_request, "Invalid query parameter " + field + ".", {{field, problem}}};
}

}  // namespace

std::optional<std::string> path_identifier(std::string_view segment) {
  auto decoded = percent_decode(segment, false);
  if (!decoded || decoded->empty() || decoded->size() > 128) return std::nullopt;
  for (char c : *decoded) {
    if (c < 0x20 || c > 0x7e) return std::nullopt;
  }
  return decoded;
}

bool query_has_club_id(std::string_view query) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    auto name = percent_decode(pair.substr(0, pair.find('=')), true);
    if (name && *name == "clubId") return true;
  }
  return false;
}

std::variant<Error, HistoryQuery> parse_history_query(std::string_view query, bool with_filter) {
  static constexpr std::array kFilters = {"all", "earned", "redeemed", "reserved", "released", "reversed",
                                          "adjusted"};
  HistoryQuery q;
  while (!query.empty()) {
    const auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    auto value = percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
    if (!value) return bad(std::string(name), "is not valid percent-encoding");
    if (name == "limit" || name == "before") {
      std::int64_t n = -1;
      auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
      const bool integer = (ec == std::errc{} || ec == std::errc::result_out_of_range) &&
                           end == value->data() + value->size() && !value->empty();
      // Digits beyond int64 are still an integer: the largest one serves
      // (limit is capped anyway; such a cursor means "from the newest").
      if (ec == std::errc::result_out_of_range) n = value->front() == '-' ? -1 : INT64_MAX;
      if (name == "limit") {
        if (!integer || n < 1) return bad("limit", "must be an integer of at least 1");
        q.limit = static_cast<int>(std::min<std::int64_t>(n, 100));
      } else {
        if (!integer || n < 0) return bad("before", "must be a non-negative integer of milliseconds");
        q.before = n;
      }
    } else if (name == "filter" && with_filter) {
      if (std::find(kFilters.begin(), kFilters.end(), *value) == kFilters.end()) {
        return bad("filter", "must be one of all, earned, redeemed, reserved, released, reversed, adjusted");
      }
      q.filter = *value;
    }
  }
  return q;
}

}  // namespace mr::ledger
