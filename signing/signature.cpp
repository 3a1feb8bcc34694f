#include "signing/signature.hpp"

#include <cstdio>
#include <stdexcept>

#include <openssl/crypto.h>

#include "ledger/text_rules.hpp"
#include "signing/digest.hpp"

namespace mr::signing {

CanonicalPieces canonical_pieces(std::string_view timestamp, std::string_view upper_method, std::string_view path,
                                 std::string_view body_sha256_hex) {
  return {timestamp, "\n", upper_method, "\n", path, "\n", body_sha256_hex};
}

std::string canonical_string(std::string_view timestamp, std::string_view method, std::string_view path,
                             std::string_view body_sha256_hex) {
  std::string method_upper(method);
  for (char& c : method_upper) c = ascii_upper(c);
  std::string out;
  for (const std::string_view piece : canonical_pieces(timestamp, method_upper, path, body_sha256_hex)) {
    out.append(piece);
  }
  return out;
}

std::string sign(const HmacKey& key, std::string_view canonical) {
  const auto mac = key.digest(canonical);
  if (!mac) throw std::runtime_error("OpenSSL could not compute the HMAC-SHA256 signature");
  return "v1=" + to_hex(mac->data(), mac->size());
}

std::string sign(std::string_view secret, std::string_view canonical) { return sign(HmacKey(secret), canonical); }

std::optional<HmacDigest> parse_signature(std::string_view header) {
  if (header.size() != 3 + 2 * std::tuple_size_v<HmacDigest> || !header.starts_with("v1=")) return std::nullopt;
  HmacDigest mac{};
  if (!hex_decode(header.substr(3), mac)) return std::nullopt;
  return mac;
}

SignatureCheck check_signature(const HmacKey& key, std::string_view canonical, std::string_view header) {
  return check_signature(key, std::span<const std::string_view>{&canonical, 1}, header);
}

SignatureCheck check_signature(const HmacKey& key, std::span<const std::string_view> canonical,
                               std::string_view header) {
  const auto given = parse_signature(header);
  if (!given) return SignatureCheck::differs;
  return check_signature(key, canonical, *given);
}

SignatureCheck check_signature(const HmacKey& key, std::span<const std::string_view> canonical,
                               const HmacDigest& given) {
  const auto mac = key.digest(canonical);
  if (!mac) return SignatureCheck::mac_failed;
  return CRYPTO_memcmp(mac->data(), given.data(), given.size()) == 0 ? SignatureCheck::matches
                                                                      : SignatureCheck::differs;
}

std::string format_timestamp(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto secs = floor<seconds>(t);
  const auto days = floor<std::chrono::days>(secs);
  const year_month_day ymd{days};
  const hh_mm_ss hms{secs - days};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(hms.hours().count()), static_cast<int>(hms.minutes().count()),
                static_cast<int>(hms.seconds().count()));
  return buf;
}

std::string format_timestamp_us(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  std::string text = format_timestamp(t);
  const auto us = duration_cast<microseconds>(t - floor<seconds>(t)).count();
  char fraction[16];
  std::snprintf(fraction, sizeof fraction, ".%06dZ", static_cast<int>(us));
  text.pop_back();  // the Z
  return text.append(fraction);
}

}  // namespace mr::signing
