#include "ledger/read_requests.hpp"

#include "ledger/text_rules.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <span>
#include <utility>
#include <vector>

namespace mr::ledger {

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

namespace {

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

namespace {

// A GET's known parameters, percent-decoded, in the order sent; a name is
// decoded before it is compared ("%6Cimit" is limit). Unknown names are
// skipped with their values undecoded (contract section 9: ignored, like
// unknown JSON fields), so neither can make the request fail or be echoed.
// A known parameter whose value is not valid percent-encoding is named.
using QueryValues = std::vector<std::pair<std::string, std::string>>;

std::variant<Error, QueryValues> known_params(std::string_view query, std::span<const std::string_view> names) {
  QueryValues out;
  std::optional<Error> error;
  for_each_query_param(query, [&](std::string_view raw_name, std::string_view raw_value) {
    const auto name = percent_decode(raw_name, true);
    if (!name || std::find(names.begin(), names.end(), *name) == names.end()) return true;
    auto value = percent_decode(raw_value, true);
    if (!value) {
      error = bad(*name, "is not valid percent-encoding");
      return false;
    }
    out.emplace_back(*name, std::move(*value));
    return true;
  });
  if (error) return *error;
  return out;
}

bool is_page_param(std::string_view name) { return name == "limit" || name == "before"; }

// limit or before, as every paged read takes them (contract section 6).
std::optional<Error> read_page_param(std::string_view name, const std::string& value, int& limit,
                                     std::optional<std::int64_t>& before) {
  std::int64_t n = -1;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  const bool integer = (ec == std::errc{} || ec == std::errc::result_out_of_range) &&
                       end == value.data() + value.size() && !value.empty();
  // Digits beyond int64 are still an integer: the largest one serves
  // (limit is capped anyway; such a cursor means "from the newest").
  if (ec == std::errc::result_out_of_range) n = value.front() == '-' ? -1 : INT64_MAX;
  if (name == "limit") {
    if (!integer || n < 1) return bad("limit", "must be an integer of at least 1");
    limit = static_cast<int>(std::min<std::int64_t>(n, 100));
  } else {
    if (!integer || n < 0) return bad("before", "must be a non-negative integer of milliseconds");
    before = n;
  }
  return std::nullopt;
}

}  // namespace

std::variant<Error, HistoryQuery> parse_history_query(std::string_view query, bool with_filter) {
  static constexpr std::array kFilters = {"all", "earned", "redeemed", "reserved", "released", "reversed",
                                          "adjusted"};
  static constexpr std::array<std::string_view, 3> kWithFilter = {"limit", "before", "filter"};
  const auto names = with_filter ? std::span<const std::string_view>(kWithFilter)
                                 : std::span<const std::string_view>(kWithFilter).first(2);
  auto params = known_params(query, names);
  if (auto* e = std::get_if<Error>(&params)) return *e;
  HistoryQuery q;
  for (const auto& [name, value] : std::get<QueryValues>(params)) {
    if (is_page_param(name)) {
      if (auto e = read_page_param(name, value, q.limit, q.before)) return *e;
    } else if (std::find(kFilters.begin(), kFilters.end(), value) == kFilters.end()) {
      return bad("filter", "must be one of all, earned, redeemed, reserved, released, reversed, adjusted");
    } else {
      q.filter = value;
    }
  }
  return q;
}

std::variant<Error, RedemptionsQuery> parse_redemptions_query(std::string_view query) {
  static constexpr std::array<std::string_view, 5> kNames = {"limit", "before", "requestId", "externalMemberId",
                                                             "status"};
  auto params = known_params(query, kNames);
  if (auto* e = std::get_if<Error>(&params)) return *e;
  RedemptionsQuery q;
  for (auto& [name, value] : std::get<QueryValues>(params)) {
    if (is_page_param(name)) {
      if (auto e = read_page_param(name, value, q.limit, q.before)) return *e;
    } else if (name == "status") {
      if (value != "payout_pending" && value != "completed" && value != "failed") {
        return bad("status", "must be one of payout_pending, completed, failed");
      }
      q.status = std::move(value);
    } else {  // requestId, externalMemberId: identifiers (contract section 1)
      if (value.empty() || value.size() > 128 || !is_printable_ascii(value)) {
        return bad(name, "must be 1 to 128 printable ASCII characters");
      }
      (name == "requestId" ? q.request_id : q.external_member_id) = std::move(value);
    }
  }
  return q;
}

}  // namespace mr::ledger
