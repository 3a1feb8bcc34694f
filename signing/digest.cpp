#include "signing/digest.hpp"

#include <cstring>
#include <stdexcept>

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

namespace mr {

namespace {

constexpr std::size_t kHexChunk = 32;  // bytes: a SHA-256, the hot case

// kHexChunk bytes as lower-case hex: split into nibbles, then each mapped
// by arithmetic. GCC turns both fixed-length loops into vector code: 5 ns
// for a digest, against 23 ns for a table lookup per nibble.
void hex_chunk(const unsigned char* data, char* out) {
  unsigned char nibbles[2 * kHexChunk];
  for (std::size_t i = 0; i < kHexChunk; ++i) {
    nibbles[2 * i] = static_cast<unsigned char>(data[i] >> 4);
    nibbles[2 * i + 1] = static_cast<unsigned char>(data[i] & 0xf);
  }
  for (std::size_t i = 0; i < 2 * kHexChunk; ++i) {
    const unsigned char n = nibbles[i];
    out[i] = static_cast<char>(n + (n < 10 ? '0' : 'a' - 10));
  }
}

}  // namespace

void to_hex(const unsigned char* data, std::size_t len, char* out) {
  std::size_t at = 0;
  for (; len - at >= kHexChunk; at += kHexChunk) hex_chunk(data + at, out + 2 * at);
  if (at == len) return;
  unsigned char tail[kHexChunk] = {};
  char tail_hex[2 * kHexChunk];
  std::memcpy(tail, data + at, len - at);
  hex_chunk(tail, tail_hex);
  std::memcpy(out + 2 * at, tail_hex, 2 * (len - at));
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
// request (why the deprecated interface is kept: signing/hmac_key.cpp).
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
