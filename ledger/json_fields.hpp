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
  // 1..max bytes (UTF-8 is checked when the body is parsed).
  std::optional<std::string> text(const rapidjson::Value& obj, const std::string& path, const char* key,
                                  std::size_t max, bool required = true);
  std::optional<std::string> email(const rapidjson::Value& obj, const std::string& path, const char* key);
  std::optional<std::string> currency(const rapidjson::Value& obj, const std::string& path, const char* key);
  std::optional<std::string> timestamp(const rapidjson::Value& obj, const std::string& path, const char* key);
  std::optional<std::string> digits(const rapidjson::Value& obj, const std::string& path, const char* key,
                                    std::size_t count);
  // A JSON integer (no fraction, no exponent) in [min, max].
  std::optional<std::int64_t> integer(const rapidjson::Value& obj, const std::string& path, const char* key,
                                      std::int64_t min, std::int64_t max, bool required = true);

  void problem(const std::string& field, std::string what) { problems_.push_back({field, std::move(what)}); }

 private:
  const rapidjson::Value* member(const rapidjson::Value& obj, const std::string& path, const char* key,
                                 bool required);
  std::vector<FieldProblem>& problems_;
};

std::string join(const std::string& path, const char* key);

// Parses a body that must be a JSON object; nullopt with the reason.
std::optional<rapidjson::Document> parse_object(std::string_view body, std::string& why);

// True when "clubId" appears as a key anywhere in the document.
bool contains_club_id(const rapidjson::Value& v);

}  // namespace mr::ledger
