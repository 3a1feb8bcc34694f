// Every POST body parser of the partner API, on the same bytes: a refusal
// is invalid_request rendered as JSON; an acceptance is a command PostgreSQL
// will take as jsonb (valid UTF-8, no NUL, no clubId).
#include <algorithm>
#include <cstring>

#include "ledger/json_fields.hpp"
#include "ledger/write_requests.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mr::ledger;

namespace {

// A NUL in any decoded key or string (PostgreSQL's jsonb refuses \u0000).
// On the decoded document: the text `\\u0000` (an escaped backslash, then
// "u0000") is six characters and no NUL.
bool has_nul(const rapidjson::Value& v) {
  const auto nul = [](const rapidjson::Value& s) {
    return std::memchr(s.GetString(), '\0', s.GetStringLength()) != nullptr;
  };
  if (v.IsString()) return nul(v);
  if (v.IsArray()) return std::any_of(v.Begin(), v.End(), [](const rapidjson::Value& e) { return has_nul(e); });
  if (!v.IsObject()) return false;
  return std::any_of(v.MemberBegin(), v.MemberEnd(), [&](const auto& m) { return nul(m.name) || has_nul(m.value); });
}

void check(const Parsed& parsed) {
  if (const auto* e = std::get_if<mr::Error>(&parsed)) {
    FUZZ_CHECK(e->code == mr::ErrorCode::invalid_request);
    FUZZ_CHECK(mr::fuzz::is_json_object(mr::render_error(*e, "rid")));
    return;
  }
  const auto& cmd = std::get<WriteCommand>(parsed);
  FUZZ_CHECK(!cmd.op.empty());
  FUZZ_CHECK(mr::fuzz::is_json_object(cmd.cmd_json));
  FUZZ_CHECK(is_storable_utf8(cmd.cmd_json));
  // No clubId member at any depth ("clubId" as a value is just text).
  rapidjson::Document doc;
  doc.Parse(cmd.cmd_json.data(), cmd.cmd_json.size());
  FUZZ_CHECK(!doc.HasParseError() && !contains_club_id(doc));
  FUZZ_CHECK(!has_nul(doc));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body = mr::fuzz::bytes(data, size);
  check(parse_member(body));
  check(parse_settlement(body));
  check(parse_reversal(body));
  check(parse_redemption(body));
  check(parse_close(body, "m1"));
  return 0;
}
