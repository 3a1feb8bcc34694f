// Character rules the contract gives identifiers and headers, written once.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mr {

// ASCII case and hex rules, without <cctype>'s locale lookups (a call per
// byte on the edge's hot path): headers and media types are ASCII.
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c | 0x20) : c; }
constexpr char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c & ~0x20) : c; }
// A hex digit's value (either case), -1 for any other byte: one table
// lookup, no branch (a signature's 64 random digits mispredicted a branch
// about every other byte, ~200 ns a request in bench/edge_work).
inline constexpr std::array<signed char, 256> kHexValues = [] {
  std::array<signed char, 256> table{};
  for (int c = 0; c < 256; ++c) {
    table[c] = static_cast<signed char>(c >= '0' && c <= '9'   ? c - '0'
                                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                               : -1);
  }
  return table;
}();
constexpr int hex_value(char ch) { return kHexValues[static_cast<unsigned char>(ch)]; }
// Hex digits two to a byte into `out`, for exactly 2 * N digits; false if
// any is not a hex digit. For a fixed run of digits (a signature's 64): the
// nibble loop is plain arithmetic that GCC turns into vector code, about 4x
// faster than hex_value per digit, whose table lookups it vectorised into
// byte loads from vector stores that stalled (bench/RESULTS.md).
template <std::size_t N>
bool hex_decode(std::string_view hex, std::array<unsigned char, N>& out) {
  if (hex.size() != 2 * N) return false;
  unsigned char nibbles[2 * N];
  unsigned char bad = 0;
  for (std::size_t i = 0; i < 2 * N; ++i) {
    const auto c = static_cast<unsigned char>(hex[i]);
    const auto digit = static_cast<unsigned char>(c - '0');
    const auto letter = static_cast<unsigned char>((c | 0x20) - 'a');  // either case
    nibbles[i] = digit < 10 ? digit : static_cast<unsigned char>(letter + 10);
    bad |= static_cast<unsigned char>(!(digit < 10 || letter < 6));
  }
  if (bad != 0) return false;
  for (std::size_t i = 0; i < N; ++i) out[i] = static_cast<unsigned char>(nibbles[2 * i] << 4 | nibbles[2 * i + 1]);
  return true;
}

// Identifiers (externalMemberId, partnerRef, path ids): space to tilde.
inline bool is_printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

// Header tokens (X-MR-Idempotency-Key): printable without the space.
inline bool is_visible_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
}

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 (a stray
// continuation byte, an overlong form, a surrogate, above U+10FFFF, cut off).
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return 1;
  std::size_t len;
  std::uint32_t cp;
  if (b >= 0xC2 && b <= 0xDF) {
    len = 2, cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    len = 3, cp = b & 0x0F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4, cp = b & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
  if (overlong || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
  return len;
}

namespace detail {
// Whether any byte of `s` is a `hit`, 16 bytes at a time: GCC at -O2
// turns a loop of fixed length into vector compares (one of any length it
// leaves a byte at a time), so the tail is copied into a chunk padded with
// 'a', which no rule here hits.
template <class Hit>
bool any_byte(std::string_view s, Hit hit) {
  constexpr std::size_t kChunk = 16;
  const auto chunk = [&hit](const unsigned char* p) {
    unsigned char any = 0;
    for (std::size_t i = 0; i < kChunk; ++i) any |= static_cast<unsigned char>(hit(p[i]));
    return any != 0;
  };
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  std::size_t at = 0;
  for (; s.size() - at >= kChunk; at += kChunk) {
    if (chunk(p + at)) return true;
  }
  if (at == s.size()) return false;
  unsigned char tail[kChunk];
  std::memset(tail, 'a', kChunk);
  std::memcpy(tail, p + at, s.size() - at);
  return chunk(tail);
}
}  // namespace detail

inline bool is_ascii(std::string_view s) {
  return !detail::any_byte(s, [](unsigned char c) { return c >= 0x80; });
}

// True when `s` may stand between a JSON string's quotes as it is: no '"',
// backslash or control byte (RFC 8259, section 7). Bytes from 0x80 pass,
// as RapidJSON's writer passes them. For text the server writes plain when
// nothing in it needs RapidJSON's escaping (a byte at a time there).
inline bool is_json_plain(std::string_view s) {
  return !detail::any_byte(s, [](unsigned char c) { return (c < 0x20) | (c == '"') | (c == '\\'); });
}

inline bool is_valid_utf8(std::string_view s) {
  if (is_ascii(s)) return true;  // every message and id the server writes
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

// s with every byte that is not part of well-formed UTF-8 replaced by
// U+FFFD: what an answer or a log line may carry of client bytes.
inline std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace mr
