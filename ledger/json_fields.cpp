#include "ledger/json_fields.hpp"

#include <algorithm>

#include <rapidjson/error/en.h>

#include "ledger/timestamps.hpp"

namespace mr::ledger {

std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

const rapidjson::Value* Fields::member(const rapidjson::Value& obj, const std::string& path, const char* key,
                                       bool required) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd() || it->value.IsNull()) {
    if (required) problem(join(path, key), "is required");
    return nullptr;
  }
  return &it->value;
}

const rapidjson::Value* Fields::object(const rapidjson::Value& parent, const std::string& path, const char* key,
                                       bool required) {
  const rapidjson::Value* v = member(parent, path, key, required);
  if (v != nullptr && !v->IsObject()) {
    problem(join(path, key), "must be an object");
    return nullptr;
  }
  return v;
}

std::optional<std::string> Fields::text(const rapidjson::Value& obj, const std::string& path, const char* key,
                                        std::size_t max, bool required) {
  const rapidjson::Value* v = member(obj, path, key, required);
  if (v == nullptr) return std::nullopt;
  if (!v->IsString()) {
    problem(join(path, key), "must be a string");
    return std::nullopt;
  }
  std::string s(v->GetString(), v->GetStringLength());
  if (s.empty() || s.size() > max) {
    problem(join(path, key), "must be 1 to " + std::to_string(max) + " bytes");
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> Fields::identifier(const rapidjson::Value& obj, const std::string& path,
                                              const char* key, bool required) {
  auto s = text(obj, path, key, 128, required);
  if (!s) return s;
  for (char c : *s) {
    if (c < 0x20 || c > 0x7e) {
      problem(join(path, key), "must be printable ASCII");
      return std::nullopt;
    }
  }
  return s;
}

std::optional<std::string> Fields::email(const rapidjson::Value& obj, const std::string& path, const char* key) {
  auto s = text(obj, path, key, 254);
  if (!s) return s;
  const auto at = s->find('@');
  if (at == std::string::npos || at == 0 || at + 1 == s->size() || s->find('@', at + 1) != std::string::npos) {
    problem(join(path, key), "must be an email address with one @");
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> Fields::currency(const rapidjson::Value& obj, const std::string& path,
                                            const char* key) {
  auto s = text(obj, path, key, 3);
  if (!s) return s;
  if (s->size() != 3 || !std::all_of(s->begin(), s->end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
    problem(join(path, key), "must be three upper-case letters (ISO 4217)");
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> Fields::timestamp(const rapidjson::Value& obj, const std::string& path,
                                             const char* key) {
  auto s = text(obj, path, key, 40);
  if (!s) return s;
  if (!parse_rfc3339_utc(*s)) {
    problem(join(path, key), "must be an RFC 3339 UTC timestamp, e.g. 2026-11-22T10:00:00Z");
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> Fields::digits(const rapidjson::Value& obj, const std::string& path, const char* key,
                                          std::size_t count) {
  auto s = text(obj, path, key, count);
  if (!s) return s;
  if (s->size() != count || !std::all_of(s->begin(), s->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    problem(join(path, key), "must be exactly " + std::to_string(count) + " digits");
    return std::nullopt;
  }
  return s;
}

std::optional<std::int64_t> Fields::integer(const rapidjson::Value& obj, const std::string& path, const char* key,
                                            std::int64_t min, std::int64_t max, bool required) {
  const rapidjson::Value* v = member(obj, path, key, required);
  if (v == nullptr) return std::nullopt;
  // RapidJSON keeps 100.0 and 1e3 as doubles: only a plain integer token
  // is an Int64 here.
  if (!v->IsInt64()) {
    problem(join(path, key), "must be an integer (no fraction or exponent)");
    return std::nullopt;
  }
  const std::int64_t n = v->GetInt64();
  if (n < min || n > max) {
    problem(join(path, key), "must be from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return n;
}

std::optional<rapidjson::Document> parse_object(std::string_view body, std::string& why) {
  rapidjson::Document d;
  // Iterative: a deeply nested body cannot exhaust the worker's stack.
  d.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (d.HasParseError()) {
    why = std::string("The body is not valid JSON: ") + rapidjson::GetParseError_En(d.GetParseError()) +
          " (at byte " + std::to_string(d.GetErrorOffset()) + ").";
    return std::nullopt;
  }
  if (!d.IsObject()) {
    why = "The body must be a JSON object.";
    return std::nullopt;
  }
  return d;
}

bool contains_club_id(const rapidjson::Value& v) {
  if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (std::string_view(m.name.GetString(), m.name.GetStringLength()) == "clubId") return true;
      if (contains_club_id(m.value)) return true;
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) {
      if (contains_club_id(e)) return true;
    }
  }
  return false;
}

}  // namespace mr::ledger
