// JSON text written by RapidJSON's Writer<StringBuffer>: every body,
// command and record the service renders, written one way.
//
// A default StringBuffer and Writer each allocate an allocator object from
// malloc before their first byte; here both use one shared CrtAllocator
// (it holds no state), which takes two of the five allocations a refusal's
// JSON made at the edge (bench/RESULTS.md).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <rapidjson/allocators.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mr::ledger {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

namespace detail {
inline rapidjson::CrtAllocator g_crt_allocator;  // stateless: safe to share

// A base, so the buffer exists before the writer that points to it.
struct JsonTextBuffer {
  explicit JsonTextBuffer(std::size_t capacity) : buffer(&g_crt_allocator, capacity) {}
  rapidjson::StringBuffer buffer;
};
}  // namespace detail

// A writer (use it as the JsonWriter it is) and the text it wrote.
class JsonText : private detail::JsonTextBuffer, public JsonWriter {
 public:
  // `capacity`: the text's expected size, so that it is not regrown.
  explicit JsonText(std::size_t capacity = 256)
      : JsonTextBuffer(capacity), JsonWriter(buffer, &detail::g_crt_allocator) {}
  JsonText(const JsonText&) = delete;
  JsonText& operator=(const JsonText&) = delete;

  std::string_view view() const { return {buffer.GetString(), buffer.GetSize()}; }
  std::string str() const { return std::string(view()); }
};

}  // namespace mr::ledger
