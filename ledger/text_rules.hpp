// Character rules the contract gives identifiers and headers, written once.
#pragma once

#include <algorithm>
#include <string_view>

namespace mr {

// Identifiers (externalMemberId, partnerRef, path ids): space to tilde.
inline bool is_printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// Header tokens (X-MR-Idempotency-Key): printable without the space.
inline bool is_visible_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

}  // namespace mr
