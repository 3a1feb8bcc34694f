// What the mr modules know of a request, for the mr_json access log line
// (conf/snippets/mr-http.conf), written by one variable, $mr_log_fields.
//
// One variable instead of eleven: nginx's log module looks up, measures,
// copies and (escape=json) escapes each variable on its own, a cost paid
// by every signed request (bench/RESULTS.md, edge work). Here the values are the modules' own
// (ids, hex, names, numbers), copied as they are when none needs escaping;
// any other goes through RapidJSON. The format's other variables are
// nginx's time, status and counters, so it needs no escape of its own.
#pragma once

#include <cstddef>
#include <string_view>

#include "ledger/json_text.hpp"

namespace mr {

struct AccessLogFields {
  std::string_view request_id, key_id, traceparent, club_id, method, route, route_name, error_code,
      idempotent_replay, idempotency, upstream_time;
};

// The fields as JSON object members without the braces,
// `"requestId":"…","keyId":"…",…,"upstreamTime":"…"`, every value a
// string ("" when empty):
// - as they are, into `out` (plain_access_log_members_size bytes): false
//   when a value is not mr::is_json_plain, and `out` is no JSON;
std::size_t plain_access_log_members_size(const AccessLogFields& fields);
bool write_plain_access_log_members(const AccessLogFields& fields, char* out);
// - any fields, escaped by RapidJSON into `text`, which the view points into.
std::string_view access_log_members(ledger::JsonText& text, const AccessLogFields& fields);

}  // namespace mr
