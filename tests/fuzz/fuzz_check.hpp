// What every fuzz target shares: a check that aborts with a message (so
// libFuzzer records the input as a crash), a JSON validity test for the
// answers a client would receive, and a split of the input into fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#define FUZZ_CHECK(cond)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                             \
    }                                                                           \
  } while (0)

namespace mr::fuzz {

inline std::string_view bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A JSON object in valid UTF-8: what a client must be able to parse.
inline bool is_json_object(std::string_view text) {
  rapidjson::Document d;
  d.Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
  return !d.HasParseError() && d.IsObject();
}

// The first n - 1 fields end at a newline, the last takes the rest; missing
// fields are empty. Lets one input carry a method, a path, a query, a body.
inline std::vector<std::string_view> fields(std::string_view in, std::size_t n) {
  std::vector<std::string_view> out;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const auto nl = in.find('\n');
    out.push_back(in.substr(0, nl));
    in = nl == std::string_view::npos ? std::string_view{} : in.substr(nl + 1);
  }
  out.push_back(in);
  return out;
}

}  // namespace mr::fuzz
