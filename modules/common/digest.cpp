#include "modules/common/digest.hpp"

#include <memory>
#include <new>
#include <stdexcept>

#include <openssl/evp.h>

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

struct MdFree {
  void operator()(EVP_MD* md) const { EVP_MD_free(md); }
};

// Fetched once per process, like the HMAC (keys/hmac_key.cpp): handing
// EVP_sha256() to EVP_DigestInit_ex makes OpenSSL 3 fetch the algorithm
// again (a global lock and a lookup) for every hash, two per signed POST.
// Freed when the library is unloaded.
const EVP_MD* sha256_algorithm() {
  static const std::unique_ptr<EVP_MD, MdFree> md(EVP_MD_fetch(nullptr, "SHA256", nullptr));
  return md.get();
}

}  // namespace

void Sha256::Free::operator()(void* ctx) const { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx)); }

namespace {

// A digest OpenSSL could not compute must not read as one: a hash of zeros
// would fail a signature quietly, and an idempotency fingerprint that is
// the same for every body would replay the wrong answer. The nginx entry
// points catch it and answer internal_error.
void require(bool ok) {
  if (!ok) throw std::runtime_error("OpenSSL could not compute a SHA-256");
}

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) throw std::bad_alloc();
  require(sha256_algorithm() != nullptr &&
          EVP_DigestInit_ex2(static_cast<EVP_MD_CTX*>(ctx_.get()), sha256_algorithm(), nullptr) == 1);
}

void Sha256::update(std::string_view data) {
  require(EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_.get()), data.data(), data.size()) == 1);
}

Sha256Hex Sha256::hex_final() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  Sha256Hex out{};
  require(EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_.get()), md, &len) == 1 && len * 2 == out.size());
  to_hex(md, len, out.data());
  return out;
}

Sha256Hex sha256_hex_inline(std::initializer_list<std::string_view> pieces) {
  Sha256 h;
  for (const std::string_view piece : pieces) h.update(piece);
  return h.hex_final();
}

std::string sha256_hex(std::initializer_list<std::string_view> pieces) {
  return std::string(view(sha256_hex_inline(pieces)));
}

std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body) {
  return sha256_hex({method, "\n", path, "\n", body});
}

}  // namespace mr
