#include "ledger/json_fields.hpp"

#include <algorithm>
#include <climits>
#include <vector>

#include <rapidjson/error/en.h>

#include "ledger/text_rules.hpp"
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
  if (!is_storable_utf8(s)) {
    problem(join(path, key), "must be valid UTF-8 without NUL characters");
    return std::nullopt;
  }
  return s;
}

std::optional<std::string> Fields::note(const rapidjson::Value& obj, const std::string& path, const char* key,
                                        std::size_t max) {
  const rapidjson::Value* v = member(obj, path, key, false);
  if (v == nullptr) return std::nullopt;
  if (v->IsString() && v->GetStringLength() == 0) return std::string();
  return text(obj, path, key, max, false);
}

std::optional<std::string> Fields::identifier(const rapidjson::Value& obj, const std::string& path,
                                              const char* key, bool required) {
  auto s = text(obj, path, key, 128, required);
  if (!s) return s;
  if (!is_printable_ascii(*s)) {
    problem(join(path, key), "must be printable ASCII");
    return std::nullopt;
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
  // Year 1 onwards: PostgreSQL has no year 0.
  const auto parsed = parse_rfc3339_utc(*s);
  if (!parsed || parsed->seconds < std::chrono::sys_days{std::chrono::year{1} / 1 / 1}) {
    problem(join(path, key), "must be an RFC 3339 UTC timestamp, e.g. 2026-11-22T10:00:00Z");
    return std::nullopt;
  }
  return s;
}

// The message states the rule whatever was sent (contract section 9): a
// sort code of 8 characters is not told "must be 1 to 6 bytes".
std::optional<std::string> Fields::digits(const rapidjson::Value& obj, const std::string& path, const char* key,
                                          std::size_t count) {
  const rapidjson::Value* v = member(obj, path, key, true);
  if (v == nullptr) return std::nullopt;
  const std::string rule = "exactly " + std::to_string(count) + " digits";
  if (!v->IsString()) {
    problem(join(path, key), "must be a string of " + rule);
    return std::nullopt;
  }
  std::string s(v->GetString(), v->GetStringLength());
  if (s.size() != count || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    problem(join(path, key), "must be " + rule);
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
    // A plain integer token beyond int64 is an integer out of range.
    problem(join(path, key), v->IsUint64() ? "must be from " + std::to_string(min) + " to " + std::to_string(max)
                                           : "must be an integer (no fraction or exponent)");
    return std::nullopt;
  }
  const std::int64_t n = v->GetInt64();
  if (n < min || n > max) {
    problem(join(path, key), "must be from " + std::to_string(min) + " to " + std::to_string(max));
    return std::nullopt;
  }
  return n;
}

bool is_storable_utf8(std::string_view s) {
  return s.find('\0') == std::string_view::npos && is_valid_utf8(s);
}

std::optional<std::int64_t> clamped_integer_token(std::string_view body, const char* object, const char* key) {
  JsonDocument raw;
  raw.Parse<rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (raw.HasParseError() || !raw.IsObject()) return std::nullopt;
  const auto o = raw.FindMember(object);
  if (o == raw.MemberEnd() || !o->value.IsObject()) return std::nullopt;
  const auto k = o->value.FindMember(key);
  if (k == o->value.MemberEnd() || !k->value.IsString()) return std::nullopt;
  const std::string_view token(k->value.GetString(), k->value.GetStringLength());
  const bool negative = token.starts_with('-');
  const std::string_view digits = token.substr(negative ? 1 : 0);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return negative ? INT64_MIN : INT64_MAX;
}

namespace {

// Every container of a body counts one level; far more than any endpoint
// needs, and it bounds every walk over a parsed document.
constexpr std::size_t kMaxDepth = 32;

// What RapidJSON accepts but a strict reading refuses: nesting deeper than
// kMaxDepth and a key twice in one object (which of the two would count is
// left to the reader, so a signed body could mean two things). Walks with
// its own stack, never recursion.
std::optional<std::string> structure_problem(const rapidjson::Value& root) {
  struct Frame {
    const rapidjson::Value* value;
    std::size_t depth;
  };
  std::vector<Frame> stack{{&root, 1}};
  std::vector<std::string_view> names;
  while (!stack.empty()) {
    const Frame frame = stack.back();
    stack.pop_back();
    if (frame.depth > kMaxDepth) {
      return "The body nests containers deeper than " + std::to_string(kMaxDepth) + " levels.";
    }
    if (frame.value->IsObject()) {
      names.clear();
      for (const auto& m : frame.value->GetObject()) {
        names.emplace_back(m.name.GetString(), m.name.GetStringLength());
        if (m.value.IsObject() || m.value.IsArray()) stack.push_back({&m.value, frame.depth + 1});
      }
      std::sort(names.begin(), names.end());
      if (std::adjacent_find(names.begin(), names.end()) != names.end()) {
        return std::string("The body repeats a key within one object.");
      }
    } else if (frame.value->IsArray()) {
      for (const auto& e : frame.value->GetArray()) {
        if (e.IsObject() || e.IsArray()) stack.push_back({&e, frame.depth + 1});
      }
    }
  }
  return std::nullopt;
}

}  // namespace

bool parse_object(std::string_view body, rapidjson::Document& d, std::string& why) {
  // RapidJSON reads a NUL as the end of its input and skips a UTF-8 BOM, so
  // "{...}\0anything" and a BOM-prefixed body would parse: refused first.
  if (body.find('\0') != std::string_view::npos) {
    why = "The body is not valid JSON: it contains a NUL byte.";
    return false;
  }
  if (body.starts_with("\xEF\xBB\xBF")) {
    why = "The body is not valid JSON: it starts with a byte order mark.";
    return false;
  }
  // Iterative: a deeply nested body cannot exhaust the worker's stack.
  d.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (d.HasParseError()) {
    why = std::string("The body is not valid JSON: ") + rapidjson::GetParseError_En(d.GetParseError()) +
          " (at byte " + std::to_string(d.GetErrorOffset()) + ").";
    return false;
  }
  if (!d.IsObject()) {
    why = "The body must be a JSON object.";
    return false;
  }
  if (auto problem = structure_problem(d)) {
    why = "The body is not valid JSON: " + *problem;
    return false;
  }
  return true;
}

// Recursion depth is bounded by parse_object's kMaxDepth.
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

std::optional<Error> parse_partner_body(std::string_view body, rapidjson::Document& d) {
  std::string why;
  if (!parse_object(body, d, why)) return Error{ErrorCode::invalid_request, why, {}};
  if (contains_club_id(d)) {
    return Error{ErrorCode::invalid_request, "The club is taken from the key; remove clubId.",
                 {{"clubId", "is not accepted"}}};
  }
  return std::nullopt;
}

}  // namespace mr::ledger
