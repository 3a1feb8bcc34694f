// RapidJSON as the service builds it writes and reads control bytes as JSON
// requires (RFC 8259, section 7): escaped when written, refused raw when
// parsed, at every offset of a long string. Debian 12's RapidJSON 1.1.0
// under RAPIDJSON_SSE2 did neither for 0x1A to 0x1F: its 16-byte scan
// compared against 0x19.
#include <criterion/criterion.h>

#include <string>

#include "ledger/json_document.hpp"
#include "ledger/json_text.hpp"

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
