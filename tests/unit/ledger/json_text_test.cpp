// RapidJSON as the service builds it writes and reads control bytes as JSON
// requires (RFC 8259, section 7): escaped when written, refused raw when
// parsed, at every offset of a long string. Debian 12's RapidJSON 1.1.0
// under RAPIDJSON_SSE2 did neither for 0x1A to 0x1F: its 16-byte scan
// compared against 0x19.
#include <criterion/criterion.h>

#include <string>
#include <vector>

#include "ledger/json_document.hpp"
#include "ledger/errors.hpp"
#include "ledger/json_text.hpp"
#include "ledger/text_rules.hpp"

namespace {

constexpr std::size_t kLength = 48;  // three 16-byte blocks

std::string with_byte_at(unsigned char byte, std::size_t at) {
  std::string s(kLength, 'a');
  s[at] = static_cast<char>(byte);
  return s;
}

}  // namespace

Test(json_text, every_control_byte_is_escaped_at_every_offset) {
  for (unsigned byte = 0; byte < 0x20; ++byte) {
    for (std::size_t at = 0; at < kLength; ++at) {
      const std::string value = with_byte_at(static_cast<unsigned char>(byte), at);
      mr::ledger::JsonText text;
      text.StartArray();
      text.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
      text.EndArray();
      const std::string_view json = text.view();
      bool raw = false;
      for (const char c : json) raw |= static_cast<unsigned char>(c) < 0x20;
      cr_expect(!raw, "byte 0x%02x at %zu written raw", byte, at);
      mr::ledger::JsonDocument d;
      d.Parse(json.data(), json.size());
      cr_assert(!d.HasParseError(), "byte 0x%02x at %zu: not JSON", byte, at);
      cr_expect_eq(std::string(d[0].GetString(), d[0].GetStringLength()), value, "byte 0x%02x at %zu", byte, at);
    }
  }
}

Test(json_text, a_raw_control_byte_in_a_string_is_refused_at_every_offset) {
  for (unsigned byte = 1; byte < 0x20; ++byte) {
    for (std::size_t at = 0; at < kLength; ++at) {
      const std::string body = "{\"merchantName\":\"" + with_byte_at(static_cast<unsigned char>(byte), at) + "\"}";
      mr::ledger::JsonDocument d;
      d.Parse(body.data(), body.size());
      cr_expect(d.HasParseError(), "raw byte 0x%02x at %zu accepted", byte, at);
    }
  }
}

// render_error writes text that needs no escaping as it is: the same bytes
// RapidJSON writes, for every code; anything else (a quote, a backslash, a
// control byte at any offset, invalid UTF-8, details) still goes through
// RapidJSON, and every answer parses back to what was asked.
Test(json_text, render_error_plain_and_escaped_agree) {
  // The envelope as a RapidJSON document, written by RapidJSON's writer.
  const auto rapidjson_envelope = [](std::string_view code, std::string_view message, std::string_view id) {
    rapidjson::Document doc(rapidjson::kObjectType);
    auto& a = doc.GetAllocator();
    const auto str = [&a](std::string_view s) {
      return rapidjson::Value(s.empty() ? "" : s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
    };
    rapidjson::Value error(rapidjson::kObjectType);
    error.AddMember("code", str(code), a).AddMember("message", str(message), a).AddMember("requestId", str(id), a);
    doc.AddMember("ok", false, a).AddMember("error", error, a);
    mr::ledger::JsonText w;
    doc.Accept(w);
    return w.str();
  };
  std::vector<std::string> messages = {"", "X-MR-Key-Id names no active key of this environment.",
                                       "caf\xc3\xa9 \x7f /", "say \"no\"", "back\\slash", "bad \xff utf-8"};
  for (unsigned byte = 0; byte < 0x20; ++byte) {
    for (std::size_t at : {std::size_t{0}, std::size_t{15}, std::size_t{16}, std::size_t{40}}) {
      messages.push_back(with_byte_at(static_cast<unsigned char>(byte), at));
    }
  }
  for (int c = 0; c <= static_cast<int>(mr::ErrorCode::service_unavailable); ++c) {
    const auto code = static_cast<mr::ErrorCode>(c);
    for (const std::string& message : messages) {
      for (const std::string id : {"", "9d96fefc1c00e19c0000000000001ecc", "id\"1"}) {
        const std::string body = mr::render_error(code, message, id);
        const std::string_view shown = message.empty() ? mr::default_message(code) : std::string_view(message);
        if (mr::is_valid_utf8(shown)) {
          cr_expect_eq(body, rapidjson_envelope(mr::code_name(code), shown, id), "code %d message %s", c,
                       message.c_str());
        }
        bool raw = false;
        for (const char ch : body) raw |= static_cast<unsigned char>(ch) < 0x20;
        cr_expect(!raw, "%s", body.c_str());
        mr::ledger::JsonDocument d;
        d.Parse(body.data(), body.size());
        cr_assert(!d.HasParseError(), "%s", body.c_str());
        cr_expect_eq(std::string(d["error"]["code"].GetString()), std::string(mr::code_name(code)));
        cr_expect_eq(std::string(d["error"]["requestId"].GetString()), id);
        cr_expect_eq(std::string(d["error"]["message"].GetString(), d["error"]["message"].GetStringLength()),
                     mr::is_valid_utf8(shown) ? std::string(shown) : mr::to_valid_utf8(shown));
      }
    }
  }
  // Details always take RapidJSON's path.
  const std::vector<mr::FieldProblem> details = {{"member.email", "must be an email address with one @"}};
  mr::ledger::JsonDocument d;
  const std::string body = mr::render_error(mr::ErrorCode::invalid_request, "", "r", details);
  d.Parse(body.data(), body.size());
  cr_assert(!d.HasParseError() && d["error"]["details"].Size() == 1, "%s", body.c_str());
}
