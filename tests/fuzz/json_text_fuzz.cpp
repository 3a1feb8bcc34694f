// JSON the server writes from any bytes: an error envelope (render_error)
// and the access log's fields (written as they are when nothing needs
// escaping, through RapidJSON otherwise) parse, hold no raw control byte,
// and give back what was put in; the plain text is RapidJSON's, byte for
// byte. Fields are split at newlines; the last may hold them.
#include <string>

#include "ledger/errors.hpp"
#include "ledger/json_text.hpp"
#include "ledger/text_rules.hpp"
#include "modules/common/access_log_fields.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

bool no_raw_control(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

std::string_view text(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

std::string as_answered(std::string_view s) { return mr::is_valid_utf8(s) ? std::string(s) : mr::to_valid_utf8(s); }

void check_error_envelope(std::string_view message, std::string_view request_id) {
  const std::string body = mr::render_error(mr::ErrorCode::invalid_request, message, request_id);
  FUZZ_CHECK(no_raw_control(body));
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  FUZZ_CHECK(!d.HasParseError() && d.IsObject() && d["error"].IsObject());
  FUZZ_CHECK(text(d["error"]["code"]) == "invalid_request");
  const std::string_view shown = message.empty() ? mr::default_message(mr::ErrorCode::invalid_request) : message;
  FUZZ_CHECK(text(d["error"]["message"]) == as_answered(shown));
  FUZZ_CHECK(text(d["error"]["requestId"]) == as_answered(request_id));
}

void check_log_fields(const std::vector<std::string_view>& f) {
  const mr::AccessLogFields fields{f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10]};
  mr::ledger::JsonText escaped;
  const std::string_view rapidjson_members = mr::access_log_members(escaped, fields);
  std::string plain(mr::plain_access_log_members_size(fields), '\0');
  const bool wrote_plain = mr::write_plain_access_log_members(fields, plain.data());
  bool all_plain = true;
  for (const std::string_view v : f) all_plain &= mr::is_json_plain(v);
  FUZZ_CHECK(wrote_plain == all_plain);
  if (wrote_plain) FUZZ_CHECK(plain == rapidjson_members);
  const std::string line = "{" + std::string(rapidjson_members) + "}";
  FUZZ_CHECK(no_raw_control(line));
  rapidjson::Document d;
  d.Parse(line.data(), line.size());
  FUZZ_CHECK(!d.HasParseError() && d.IsObject() && d.MemberCount() == f.size());
  std::size_t i = 0;
  for (auto it = d.MemberBegin(); it != d.MemberEnd(); ++it, ++i) FUZZ_CHECK(text(it->value) == f[i]);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto f = mr::fuzz::fields(mr::fuzz::bytes(data, size), 11);
  check_error_envelope(f[0], f[1]);
  check_log_fields(f);
  return 0;
}
