// Fields of the JSON object a command prints, each a key and its value, in
// the order given: one place that writes them, for every command.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mr::ctl {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

inline void write_ints(JsonWriter& w, std::initializer_list<std::pair<const char*, std::int64_t>> fields) {
  for (const auto& [key, value] : fields) {
    w.Key(key);
    w.Int64(value);
  }
}

inline void write_strings(JsonWriter& w, std::initializer_list<std::pair<const char*, std::string_view>> fields) {
  for (const auto& [key, value] : fields) {
    w.Key(key);
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  }
}

}  // namespace mr::ctl
