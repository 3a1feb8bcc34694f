// Typed reading of a JSON body with every problem collected, so one answer
// names all the fields at fault (contract section 1's field rules).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/writer.h>
#include <rapidjson/stringbuffer.h>

#include "ledger/errors.hpp"
#include "ledger/json_document.hpp"

namespace mr::ledger {

class Fields {
 public:
  // Problems go to `problems`; paths are joined with '.'.
  explicit Fields(std::vector<FieldProblem>& problems) : problems_(problems) {}

  const rapidjson::Value* object(const rapidjson::Value& parent, const std::string& path, const char* key,
                                 bool required);
  // 1..128 bytes of printable ASCII.
  std::optional<std::string> identifier(const rapidjson::Value& obj, const std::string& path, const char* key,
                                        bool required = true);
  // 1..max bytes of UTF-8 without NUL (PostgreSQL's jsonb and text refuse
  // both a NUL and the lone surrogates an escape such as \udc00 decodes to).
  std::optional<std::string> text(const rapidjson::Value& obj, const std::string& path, const char* key,
                                  std::size_t max, bool required = true);
  // Optional free text of 0..max bytes (a reason): empty is allowed.
  std::optional<std::string> note(const rapidjson::Value& obj, const std::string& path, const char* key,
                                  std::size_t max);
  std::optional<std::string> email(const rapidjson::Value& obj, const std::string& path, const char* key);
  std::optional<std::string> currency(const rapidjson::Value& obj, const std::string& path, const char* key);
  std::optional<std::string> timestamp(const rapidjson::Value& obj, const std::string& path, const char* key);
  std::optional<std::string> digits(const rapidjson::Value& obj, const std::string& path, const char* key,
                                    std::size_t count);
  // A JSON integer (no fraction, no exponent) in [min, max]. RapidJSON keeps
  // 100.0 and 1e3 as doubles, so only a plain integer token is an Int64.
  std::optional<std::int64_t> integer(const rapidjson::Value& obj, const std::string& path, const char* key,
                                      std::int64_t min, std::int64_t max, bool required = true);

  void problem(const std::string& field, std::string what) { problems_.push_back({field, std::move(what)}); }

 private:
  const rapidjson::Value* member(const rapidjson::Value& obj, const std::string& path, const char* key,
                                 bool required);
  std::vector<FieldProblem>& problems_;
};

// Valid UTF-8 (no overlong form, no surrogate, nothing above U+10FFFF) and
// no NUL byte.
bool is_storable_utf8(std::string_view s);

// The raw token of body[object][key] when it is an integer too large for
// int64 (digits only, optional '-'), clamped to INT64_MAX / INT64_MIN; nullopt
// for anything else. Lets a business range check see 10^20 as "too big"
// where RapidJSON alone cannot tell it from the double 1e20.
std::optional<std::int64_t> clamped_integer_token(std::string_view body, const char* object, const char* key);

std::string join(const std::string& path, const char* key);

// Parses a body that must be one strict JSON object: no NUL byte, no BOM,
// nothing after the value, no key twice in an object, at most 32 nested
// containers. false with the reason (an invalid_request message).
bool parse_object(std::string_view body, rapidjson::Document& d, std::string& why);

// True when "clubId" appears as a key anywhere in a document parse_object
// accepted (its depth limit bounds the recursion).
bool contains_club_id(const rapidjson::Value& v);

// A partner POST's body: parse_object, then no clubId anywhere (the club
// comes from the key, contract section 1). The invalid_request when not.
std::optional<Error> parse_partner_body(std::string_view body, rapidjson::Document& d);

}  // namespace mr::ledger
