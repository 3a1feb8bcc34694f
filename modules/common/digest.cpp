#include "modules/common/digest.hpp"

#include <stdexcept>

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace mr {

void to_hex(const unsigned char* data, std::size_t len, char* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < len; ++i) {
    out[2 * i] = kHex[data[i] >> 4];
    out[2 * i + 1] = kHex[data[i] & 0xf];
  }
}

std::string to_hex(const unsigned char* data, std::size_t len) {
  std::string out(len * 2, '0');
  to_hex(data, len, out.data());
  return out;
}

namespace {

// A digest OpenSSL could not compute must not read as one: a hash of zeros
// would fail a signature quietly, and an idempotency fingerprint that is
// the same for every body would replay the wrong answer. The nginx entry
// points catch it and answer internal_error.
void require(bool ok) {
  if (!ok) throw std::runtime_error("OpenSSL could not compute a SHA-256");
}

}  // namespace

// SHA256_CTX on the stack rather than an EVP_MD_CTX: EVP allocates a
// context and a provider context per hash, and this runs for every signed
// request (why the deprecated interface is kept: keys/hmac_key.cpp).
Sha256Hex sha256_hex_inline(std::initializer_list<std::string_view> pieces) {
  SHA256_CTX ctx;
  require(SHA256_Init(&ctx) == 1);
  for (const std::string_view piece : pieces) require(SHA256_Update(&ctx, piece.data(), piece.size()) == 1);
  unsigned char md[SHA256_DIGEST_LENGTH];
  require(SHA256_Final(md, &ctx) == 1);
  Sha256Hex out{};
  static_assert(std::tuple_size_v<Sha256Hex> == 2 * SHA256_DIGEST_LENGTH);
  to_hex(md, sizeof(md), out.data());
  return out;
}

std::string sha256_hex(std::initializer_list<std::string_view> pieces) {
  return std::string(view(sha256_hex_inline(pieces)));
}

std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body) {
  return sha256_hex({method, "\n", path, "\n", body});
}

}  // namespace mr
