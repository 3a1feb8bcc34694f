#include "ledger/read_requests.hpp"

#include "ledger/text_rules.hpp"

#include <array>
#include <algorithm>
#include <charconv>
#include <climits>

namespace mr::ledger {
namespace {

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const int hi = hex_value(s[i + 1]), lo = hex_value(s[i + 2]);
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
  if (!decoded || decoded->empty() || decoded->size() > 128 || !is_printable_ascii(*decoded)) return std::nullopt;
  return decoded;
}

bool for_each_query_param(std::string_view query,
                          const std::function<bool(std::string_view name, std::string_view raw_value)>& visit) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    if (!visit(pair.substr(0, eq), eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1))) {
      return false;
    }
  }
  return true;
}

bool query_has_club_id(std::string_view query) {
  return !for_each_query_param(query, [](std::string_view name, std::string_view) {
    auto decoded = percent_decode(name, true);
    return !(decoded && *decoded == "clubId");
  });
}

Error club_id_in_query_error() {
  return Error{ErrorCode::invalid_request, "clubId is not accepted in the query string.",
               {{"clubId", "the club is taken from the key; remove clubId"}}};
}

std::variant<Error, HistoryQuery> parse_history_query(std::string_view query, bool with_filter) {
  static constexpr std::array kFilters = {"all", "earned", "redeemed", "reserved", "released", "reversed",
                                          "adjusted"};
  HistoryQuery q;
  std::optional<Error> error;
  const auto fail = [&error](Error e) {
    error = std::move(e);
    return false;
  };
  for_each_query_param(query, [&](std::string_view name, std::string_view raw_value) {
    auto value = percent_decode(raw_value, true);
    // Only a parameter this endpoint knows is named back: an unknown name is
    // client bytes (invalid UTF-8, markup) that the answer must not echo.
    if (!value) {
      const bool known = name == "limit" || name == "before" || (name == "filter" && with_filter);
      if (known) return fail(bad(std::string(name), "is not valid percent-encoding"));
      return fail(Error{ErrorCode::invalid_request, "The query string is not valid percent-encoding.",
                        {{"query", "is not valid percent-encoding"}}});
    }
    if (name == "limit" || name == "before") {
      std::int64_t n = -1;
      auto [end, ec] = std::from_chars(value->data(), value->data() + value->size(), n);
      const bool integer = (ec == std::errc{} || ec == std::errc::result_out_of_range) &&
                           end == value->data() + value->size() && !value->empty();
      // Digits beyond int64 are still an integer: the largest one serves
      // (limit is capped anyway; such a cursor means "from the newest").
      if (ec == std::errc::result_out_of_range) n = value->front() == '-' ? -1 : INT64_MAX;
      if (name == "limit") {
        if (!integer || n < 1) return fail(bad("limit", "must be an integer of at least 1"));
        q.limit = static_cast<int>(std::min<std::int64_t>(n, 100));
      } else {
        if (!integer || n < 0) return fail(bad("before", "must be a non-negative integer of milliseconds"));
        q.before = n;
      }
    } else if (name == "filter" && with_filter) {
      if (std::find(kFilters.begin(), kFilters.end(), *value) == kFilters.end()) {
        return fail(bad("filter", "must be one of all, earned, redeemed, reserved, released, reversed, adjusted"));
      }
      q.filter = *value;
    }
    return true;
  });
  if (error) return *error;
  return q;
}

}  // namespace mr::ledger
