#include "ledger/events_query.hpp"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <vector>

#include "ledger/read_requests.hpp"
#include "ledger/text_rules.hpp"
#include "ledger/webhook_requests.hpp"

namespace mr::ledger {
namespace {

Error bad(const std::string& field, const std::string& problem) {
  return Error{ErrorCode::invalid_request, "Invalid query parameter " + field + ".", {{field, problem}}};
}

std::optional<Error> read_limit(const std::string& value, int& limit) {
  std::int64_t n = -1;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  const bool integer = (ec == std::errc{} || ec == std::errc::result_out_of_range) &&
                       end == value.data() + value.size() && !value.empty();
  // Digits beyond int64 are still an integer: capped like any other.
  if (ec == std::errc::result_out_of_range) n = value.front() == '-' ? -1 : INT64_MAX;
  if (!integer || n < 1) return bad("limit", "must be an integer of at least 1");
  limit = static_cast<int>(std::min<std::int64_t>(n, 100));
  return std::nullopt;
}

// "a,b,a" -> "a,b"; nullopt when an item is empty or not a known type.
std::optional<std::string> read_types(std::string_view value) {
  std::vector<std::string_view> types;
  for (;;) {
    const auto comma = value.find(',');
    const std::string_view item = value.substr(0, comma);
    if (!is_event_type(item)) return std::nullopt;
    if (std::find(types.begin(), types.end(), item) == types.end()) types.push_back(item);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  std::string out;
  for (const auto t : types) {
    if (!out.empty()) out += ',';
    out += t;
  }
  return out;
}

}  // namespace

std::variant<Error, EventsQuery> parse_events_query(std::string_view query) {
  EventsQuery q;
  std::optional<Error> error;
  for_each_query_param(query, [&](std::string_view raw_name, std::string_view raw_value) {
    // A name is decoded before it is compared; an unknown one is skipped
    // with its value undecoded, so it can neither fail nor be echoed.
    const auto name = percent_decode(raw_name, true);
    if (!name || (*name != "limit" && *name != "after" && *name != "types")) return true;
    const auto value = percent_decode(raw_value, true);
    if (!value) {
      error = bad(*name, "is not valid percent-encoding");
      return false;
    }
    if (*name == "limit") {
      error = read_limit(*value, q.limit);
    } else if (*name == "after") {
      if (value->empty() || value->size() > 128 || !is_printable_ascii(*value)) {
        error = bad("after", "must be a nextAfter value of this API (1 to 128 printable ASCII characters)");
      } else {
        q.after = *value;
      }
    } else {
      q.types = read_types(*value);
      if (!q.types) error = bad("types", "must be a comma-separated list of event types: " + event_type_list());
    }
    return !error;
  });
  if (error) return *error;
  return q;
}

}  // namespace mr::ledger
