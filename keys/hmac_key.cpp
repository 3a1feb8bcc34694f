#include "keys/hmac_key.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>

#include <memory>

namespace mr {
namespace {

struct MacFree {
  void operator()(EVP_MAC* mac) const { EVP_MAC_free(mac); }
};

// Fetched once per process: EVP_MAC_fetch takes a global lock per call.
// Freed when the library goes: nginx unloads a module's .so at a reload or
// exit, and a plain static pointer would then leak the fetched algorithm.
EVP_MAC* hmac_algorithm() {
  static const std::unique_ptr<EVP_MAC, MacFree> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr));
  return mac.get();
}

}  // namespace

struct HmacKey::Ctx {
  EVP_MAC_CTX* mac = nullptr;
  ~Ctx() { EVP_MAC_CTX_free(mac); }
};

HmacKey::HmacKey(std::string_view secret) {
  if (hmac_algorithm() == nullptr) return;
  auto ctx = std::make_unique<Ctx>();
  ctx->mac = EVP_MAC_CTX_new(hmac_algorithm());
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                         OSSL_PARAM_construct_end()};
  if (ctx->mac == nullptr ||
      EVP_MAC_init(ctx->mac, reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), params) != 1) {
    return;
  }
  ctx_ = std::move(ctx);
}

HmacKey::~HmacKey() = default;
HmacKey::HmacKey(HmacKey&&) noexcept = default;
HmacKey& HmacKey::operator=(HmacKey&&) noexcept = default;

std::optional<HmacDigest> HmacKey::digest(std::string_view data) const {
  if (!ctx_) return std::nullopt;
  // A NULL key re-initialises with the key already set (OpenSSL 3 HMAC).
  HmacDigest out{};
  std::size_t len = 0;
  if (EVP_MAC_init(ctx_->mac, nullptr, 0, nullptr) != 1 ||
      EVP_MAC_update(ctx_->mac, reinterpret_cast<const unsigned char*>(data.data()), data.size()) != 1 ||
      EVP_MAC_final(ctx_->mac, out.data(), &len, out.size()) != 1 || len != out.size()) {
    return std::nullopt;
  }
  return out;
}

}  // namespace mr
