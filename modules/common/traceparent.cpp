#include "modules/common/traceparent.hpp"

#include <algorithm>

namespace mr {
namespace {

constexpr std::size_t kLength = 55;  // 2 + 1 + 32 + 1 + 16 + 1 + 2

bool lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool all_zero(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '0'; });
}

}  // namespace

std::optional<std::string_view> valid_traceparent(std::string_view header) {
  if (header.size() < kLength) return std::nullopt;
  const std::string_view version = header.substr(0, 2), trace_id = header.substr(3, 32),
                         parent_id = header.substr(36, 16), flags = header.substr(53, 2);
  if (header[2] != '-' || header[35] != '-' || header[52] != '-') return std::nullopt;
  if (!lower_hex(version) || !lower_hex(trace_id) || !lower_hex(parent_id) || !lower_hex(flags)) {
    return std::nullopt;
  }
  if (version == "ff" || all_zero(trace_id) || all_zero(parent_id)) return std::nullopt;
  if (header.size() > kLength && (version == "00" || header[kLength] != '-')) return std::nullopt;
  return header.substr(0, kLength);
}

}  // namespace mr
