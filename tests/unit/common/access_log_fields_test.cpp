// $mr_log_fields' text: the plain path writes exactly what RapidJSON would,
// and refuses every value that needs escaping, wherever it sits in the line
// (the scan goes in 16-byte chunks), so the escaped path takes it.
#include <criterion/criterion.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "modules/common/access_log_fields.hpp"

namespace {

using Field = std::string_view mr::AccessLogFields::*;
const std::vector<std::pair<const char*, Field>> kFields = {
    {"requestId", &mr::AccessLogFields::request_id},
    {"keyId", &mr::AccessLogFields::key_id},
    {"traceparent", &mr::AccessLogFields::traceparent},
    {"clubId", &mr::AccessLogFields::club_id},
    {"method", &mr::AccessLogFields::method},
    {"route", &mr::AccessLogFields::route},
    {"routeName", &mr::AccessLogFields::route_name},
    {"errorCode", &mr::AccessLogFields::error_code},
    {"idempotentReplay", &mr::AccessLogFields::idempotent_replay},
    {"idempotency", &mr::AccessLogFields::idempotency},
    {"upstreamTime", &mr::AccessLogFields::upstream_time},
};

mr::AccessLogFields usual() {
  mr::AccessLogFields f;
  f.request_id = "9d96fefc1c00e19c0000000000001ecc";
  f.key_id = "mrk_sbx_2C9m6G_N5fIn--3Z4KVJeANN";
  f.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  f.club_id = "1";
  f.method = "POST";
  f.route = "/api/v1/members/%FF<script>/balance";
  f.route_name = "member_balance";
  f.idempotency = "claimed";
  return f;  // errorCode, idempotentReplay, upstreamTime empty
}

std::string escaped(const mr::AccessLogFields& f) {
  mr::ledger::JsonText text;
  return std::string(mr::access_log_members(text, f));
}

// Plain text, or "" when the plain path refused; the bytes past the
// announced size are checked untouched.
std::string plain(const mr::AccessLogFields& f, bool& wrote_plain) {
  const std::size_t size = mr::plain_access_log_members_size(f);
  std::string out(size + 8, '#');
  wrote_plain = mr::write_plain_access_log_members(f, out.data());
  cr_expect_eq(out.substr(size), std::string(8, '#'), "wrote past %zu bytes", size);
  return out.substr(0, size);
}

// The members as the log line holds them, checked to parse with every
// field, in order, holding `f`'s value.
void expect_line(const std::string& members, const mr::AccessLogFields& f) {
  const std::string line = "{\"time\":\"2026-11-26T00:00:00+00:00\"," + members + ",\"status\":200}";
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  cr_assert(!d.HasParseError() && d.IsObject(), "not JSON: %s", line.c_str());
  auto it = d.MemberBegin() + 1;
  for (const auto& [name, field] : kFields) {
    cr_assert_str_eq(it->name.GetString(), name);
    cr_expect_eq(std::string_view(it->value.GetString(), it->value.GetStringLength()), f.*field, "%s in %s",
                 name, line.c_str());
    ++it;
  }
  cr_expect_str_eq(it->name.GetString(), "status");
}

}  // namespace

Test(access_log_fields, usual_fields_are_written_plain_as_rapidjson_writes_them) {
  const mr::AccessLogFields f = usual();
  bool wrote_plain = false;
  const std::string text = plain(f, wrote_plain);
  cr_expect(wrote_plain);
  cr_expect_eq(text, escaped(f));
  expect_line(text, f);
  // Empty fields and bytes from 0x80 (UTF-8) need no escaping either.
  mr::AccessLogFields g;
  g.route = "/caf\xc3\xa9";
  const std::string other = plain(g, wrote_plain);
  cr_expect(wrote_plain);
  cr_expect_eq(other, escaped(g));
  expect_line(other, g);
}

Test(access_log_fields, a_value_needing_escape_anywhere_goes_to_rapidjson) {
  const std::string long_value(70, 'a');
  for (const auto& [name, field] : kFields) {
    for (const char bad : {'"', '\\', '\n', '\x01', '\x1f'}) {
      // At each offset of a value longer than the scan's chunks: the bad
      // byte lands at every position of a chunk in some field.
      for (std::size_t at = 0; at < long_value.size(); at += 7) {
        std::string value = long_value;
        value[at] = bad;
        mr::AccessLogFields f = usual();
        f.*field = value;
        bool wrote_plain = true;
        plain(f, wrote_plain);
        cr_expect(!wrote_plain, "%s with byte %d at %zu written plain", name, bad, at);
        expect_line(escaped(f), f);
      }
    }
  }
}

Test(access_log_fields, a_lone_bad_byte_as_the_whole_value_is_caught) {
  for (const auto& [name, field] : kFields) {
    mr::AccessLogFields f;
    f.*field = "\"";
    bool wrote_plain = true;
    plain(f, wrote_plain);
    cr_expect(!wrote_plain, "%s", name);
    expect_line(escaped(f), f);
  }
}
