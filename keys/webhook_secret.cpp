#include "keys/webhook_secret.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

namespace mr {
namespace {

constexpr std::size_t kSecretBytes = 32;
// Far above any sealed secret; keeps OpenSSL's int lengths safe.
constexpr std::size_t kMaxBase64 = 1 << 16;

const unsigned char* u(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

// Wipes a string that held a secret before its memory goes back.
struct Wiped {
  std::string text;
  ~Wiped() { OPENSSL_cleanse(text.data(), text.size()); }
};

bool is_base64_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
  if (bytes.size() > kMaxBase64) return {};
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');  // EVP_EncodeBlock writes a NUL
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), u(bytes), static_cast<int>(bytes.size()));
  if (n < 0) return {};
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  // EVP_DecodeBlock skips surrounding whitespace and ignores padding when it
  // counts: the shape is checked here first, canonical form afterwards.
  if (text.empty() || text.size() % 4 != 0 || text.size() > kMaxBase64) return std::nullopt;
  std::size_t pad = 0;
  if (text.back() == '=') pad = text[text.size() - 2] == '=' ? 2 : 1;
  const std::string_view body = text.substr(0, text.size() - pad);
  if (!std::all_of(body.begin(), body.end(), is_base64_char)) return std::nullopt;
  std::string out(3 * (text.size() / 4), '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()), u(text), static_cast<int>(text.size()));
  if (n < 0 || static_cast<std::size_t>(n) != out.size()) {
    OPENSSL_cleanse(out.data(), out.size());
    return std::nullopt;
  }
  out.resize(out.size() - pad);
  // Non-zero bits under the padding: another text for the same bytes.
  if (base64_encode(out) != text) {
    OPENSSL_cleanse(out.data(), out.size());
    return std::nullopt;
  }
  return out;
}

std::optional<MasterKey> webhook_sealing_key(const MasterKey& master) {
  auto derived = derive_key(master, "mr webhook secret v1");
  if (!derived) return std::nullopt;
  MasterKey key;
  key.bytes = *derived;
  OPENSSL_cleanse(derived->data(), derived->size());
  return key;
}

std::string new_webhook_secret() {
  Wiped raw{std::string(kSecretBytes, '\0')};
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.text.data()), static_cast<int>(kSecretBytes)) != 1) return {};
  const std::string b64 = base64_encode(raw.text);
  if (b64.empty()) return {};
  return std::string(kWebhookSecretPrefix) + b64;
}

std::string seal_webhook_secret(const MasterKey& sealing_key, std::string_view endpoint_id,
                                std::string_view secret) {
  const std::string sealed = seal(sealing_key, secret, endpoint_id);
  if (sealed.empty()) return {};
  return base64_encode(sealed);
}

std::optional<std::string> open_webhook_secret(const MasterKey& sealing_key, std::string_view endpoint_id,
                                               std::string_view sealed_b64) {
  const auto sealed = base64_decode(sealed_b64);
  if (!sealed) return std::nullopt;
  return open(sealing_key, *sealed, endpoint_id);
}

std::optional<std::string> webhook_signing_key(std::string_view secret) {
  if (!secret.starts_with(kWebhookSecretPrefix)) return std::nullopt;
  auto key = base64_decode(secret.substr(kWebhookSecretPrefix.size()));
  if (!key || key->empty()) return std::nullopt;
  return key;
}

std::string new_endpoint_id() {
  std::array<unsigned char, 8> random{};
  if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) return {};
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  // 12 hex digits of milliseconds last until the year 10889.
  char text[3 + 12 + 16 + 1];
  std::snprintf(text, sizeof text, "we_%012llx%02x%02x%02x%02x%02x%02x%02x%02x",
                static_cast<unsigned long long>(ms) & 0xffffffffffffULL, random[0], random[1], random[2],
                random[3], random[4], random[5], random[6], random[7]);
  return text;
}

}  // namespace mr
