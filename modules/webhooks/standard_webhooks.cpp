#include "modules/webhooks/standard_webhooks.hpp"

#include <openssl/crypto.h>

#include <array>
#include <charconv>
#include <vector>

#include "signing/hmac_key.hpp"
#include "keys/webhook_secret.hpp"

namespace mr::webhooks {
namespace {

constexpr std::string_view kVersion = "v1,";

// base64 of the HMAC alone (no "v1,"); "" when OpenSSL fails.
std::string mac_base64(std::string_view key, std::string_view id, std::string_view timestamp,
                       std::string_view body) {
  const mr::HmacKey hmac(key);
  const std::array<std::string_view, 5> pieces = {id, ".", timestamp, ".", body};
  const auto digest = hmac.digest(pieces);
  if (!digest) return {};
  return mr::base64_encode({reinterpret_cast<const char*>(digest->data()), digest->size()});
}

// A Unix time in seconds as the header carries it: decimal digits only.
bool parse_timestamp(std::string_view text, std::int64_t& out) {
  if (text.empty() || text.size() > 18) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

}  // namespace

std::string sign(std::string_view key, std::string_view id, std::int64_t timestamp, std::string_view body) {
  std::string mac = mac_base64(key, id, std::to_string(timestamp), body);
  if (mac.empty()) return {};
  return std::string(kVersion) + mac;
}

std::string signature_header(std::span<const std::string> keys, std::string_view id, std::int64_t timestamp,
                             std::string_view body) {
  std::string header;
  for (const std::string& key : keys) {
    std::string one = sign(key, id, timestamp, body);
    if (one.empty()) return {};
    if (!header.empty()) header.push_back(' ');
    header += one;
  }
  return header;
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::valid:
      return "valid";
    case Verdict::malformed:
      return "malformed";
    case Verdict::too_old:
      return "too_old";
    case Verdict::too_new:
      return "too_new";
    case Verdict::mismatch:
      return "mismatch";
  }
  return "unknown";
}

Verdict verify(std::span<const std::string> keys, const Received& message, std::int64_t now,
               std::int64_t tolerance_seconds) {
  std::int64_t timestamp = 0;
  if (message.id.empty() || message.signature.empty() || !parse_timestamp(message.timestamp, timestamp)) {
    return Verdict::malformed;
  }
  if (timestamp < now - tolerance_seconds) return Verdict::too_old;
  if (timestamp > now + tolerance_seconds) return Verdict::too_new;
  // Each key's expected MAC once, then every offered signature against each.
  std::vector<std::string> expected;
  expected.reserve(keys.size());
  for (const std::string& key : keys) expected.push_back(mac_base64(key, message.id, message.timestamp, message.body));
  bool match = false;
  std::string_view rest = message.signature;
  while (!rest.empty()) {
    const auto space = rest.find(' ');
    const std::string_view token = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    if (!token.starts_with(kVersion)) continue;
    const std::string_view offered = token.substr(kVersion.size());
    for (const std::string& mac : expected) {
      // Every comparison runs: the time taken says nothing of which matched.
      if (!mac.empty() && offered.size() == mac.size() &&
          CRYPTO_memcmp(offered.data(), mac.data(), offered.size()) == 0) {
        match = true;
      }
    }
  }
  for (std::string& mac : expected) OPENSSL_cleanse(mac.data(), mac.size());
  return match ? Verdict::valid : Verdict::mismatch;
}

}  // namespace mr::webhooks
