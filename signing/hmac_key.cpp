#include "signing/hmac_key.hpp"

// OpenSSL 3 marks the SHA256_* functions deprecated in favour of EVP. They
// stay here on purpose: a SHA256_CTX is a plain struct that copies by
// value, so the key's padded states are absorbed once and a request costs
// two struct copies and the message's blocks. Through EVP the HMAC and the
// body hash allocated and freed four provider contexts per signed request
// (EVP_MAC_init's re-key and HMAC_Final each dup one); leaving EVP cut an
// nginx worker's CPU per signed request by about 0.5 µs (bench/RESULTS.md).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstring>

namespace mr {

// HMAC-SHA256 as RFC 2104 defines it: H((K ^ opad) || H((K ^ ipad) || m)),
// K the secret, hashed first when longer than a block, zero padded.
struct HmacKey::Ctx {
  SHA256_CTX inner;  // after (K ^ ipad)
  SHA256_CTX outer;  // after (K ^ opad)
  ~Ctx() { OPENSSL_cleanse(this, sizeof(*this)); }
};

namespace {

// Fills `block` with K zero padded; false if OpenSSL fails.
bool key_block(std::string_view secret, unsigned char (&block)[SHA256_CBLOCK]) {
  std::memset(block, 0, sizeof(block));
  const auto* bytes = reinterpret_cast<const unsigned char*>(secret.data());
  if (secret.size() <= sizeof(block)) {
    if (!secret.empty()) std::memcpy(block, bytes, secret.size());
    return true;
  }
  return SHA256(bytes, secret.size(), block) != nullptr;
}

bool absorb_pad(SHA256_CTX& ctx, const unsigned char (&block)[SHA256_CBLOCK], unsigned char pad) {
  unsigned char padded[SHA256_CBLOCK];
  for (std::size_t i = 0; i < sizeof(padded); ++i) padded[i] = block[i] ^ pad;
  const bool ok = SHA256_Init(&ctx) == 1 && SHA256_Update(&ctx, padded, sizeof(padded)) == 1;
  OPENSSL_cleanse(padded, sizeof(padded));
  return ok;
}

}  // namespace

HmacKey::HmacKey(std::string_view secret) {
  auto ctx = std::make_unique<Ctx>();
  unsigned char block[SHA256_CBLOCK];
  const bool ok = key_block(secret, block) && absorb_pad(ctx->inner, block, 0x36) &&
                  absorb_pad(ctx->outer, block, 0x5c);
  OPENSSL_cleanse(block, sizeof(block));
  if (ok) ctx_ = std::move(ctx);
}

HmacKey::~HmacKey() = default;
HmacKey::HmacKey(HmacKey&&) noexcept = default;
HmacKey& HmacKey::operator=(HmacKey&&) noexcept = default;

std::optional<HmacDigest> HmacKey::digest(std::string_view data) const { return digest({&data, 1}); }

std::optional<HmacDigest> HmacKey::digest(std::span<const std::string_view> pieces) const {
  if (!ctx_) return std::nullopt;
  static_assert(std::tuple_size_v<HmacDigest> == SHA256_DIGEST_LENGTH);
  HmacDigest inner_hash{}, out{};
  SHA256_CTX ctx = ctx_->inner;  // a copy: the key's states serve every request
  // A short message (the edge's canonical string: seven pieces, ~120 bytes)
  // is joined on the stack and hashed in one SHA256_Update: a call per
  // piece cost more than copying the bytes.
  char joined[256];
  std::size_t total = 0;
  for (const std::string_view piece : pieces) total += piece.size();
  if (pieces.size() > 1 && total <= sizeof(joined)) {
    char* at = joined;
    for (const std::string_view piece : pieces) at = std::copy(piece.begin(), piece.end(), at);
    if (SHA256_Update(&ctx, joined, total) != 1) return std::nullopt;
  } else {
    for (const std::string_view piece : pieces) {
      if (SHA256_Update(&ctx, piece.data(), piece.size()) != 1) return std::nullopt;
    }
  }
  if (SHA256_Final(inner_hash.data(), &ctx) != 1) return std::nullopt;
  ctx = ctx_->outer;
  if (SHA256_Update(&ctx, inner_hash.data(), inner_hash.size()) != 1 || SHA256_Final(out.data(), &ctx) != 1) {
    return std::nullopt;
  }
  return out;
}

}  // namespace mr
