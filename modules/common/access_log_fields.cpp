#include "modules/common/access_log_fields.hpp"

#include <array>
#include <cstring>
#include <utility>

#include "ledger/text_rules.hpp"

namespace mr {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view AccessLogFields::*>, 11> kMembers{{
    {"requestId", &AccessLogFields::request_id},
    {"keyId", &AccessLogFields::key_id},
    {"traceparent", &AccessLogFields::traceparent},
    {"clubId", &AccessLogFields::club_id},
    {"method", &AccessLogFields::method},
    {"route", &AccessLogFields::route},
    {"routeName", &AccessLogFields::route_name},
    {"errorCode", &AccessLogFields::error_code},
    {"idempotentReplay", &AccessLogFields::idempotent_replay},
    {"idempotency", &AccessLogFields::idempotency},
    {"upstreamTime", &AccessLogFields::upstream_time},
}};

char* put(char* at, std::string_view s) {
  if (!s.empty()) std::memcpy(at, s.data(), s.size());  // an empty view may hold nullptr
  return at + s.size();
}

}  // namespace

std::size_t plain_access_log_members_size(const AccessLogFields& f) {
  // Each member is "name":"value" and a comma but the last.
  std::size_t size = kMembers.size() - 1;
  for (const auto& [name, field] : kMembers) size += name.size() + (f.*field).size() + 5;
  return size;
}

bool write_plain_access_log_members(const AccessLogFields& f, char* out) {
  char* at = out;
  for (const auto& [name, field] : kMembers) {
    if (!is_json_plain(f.*field)) return false;
    if (at != out) *at++ = ',';
    *at++ = '"';
    at = put(at, name);
    at = put(at, "\":\"");
    at = put(at, f.*field);
    *at++ = '"';
  }
  return true;
}

std::string_view access_log_members(ledger::JsonText& text, const AccessLogFields& f) {
  text.StartObject();
  for (const auto& [name, field] : kMembers) {
    const std::string_view value = f.*field;
    text.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    // RapidJSON asserts a non-null pointer, which an empty view may lack.
    text.String(value.empty() ? "" : value.data(), static_cast<rapidjson::SizeType>(value.size()));
  }
  text.EndObject();
  const std::string_view object = text.view();
  return object.substr(1, object.size() - 2);
}

}  // namespace mr
