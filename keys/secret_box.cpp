#include "keys/secret_box.hpp"

#include "signing/hmac_key.hpp"
#include "keys/private_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

namespace mr {
namespace {

constexpr std::size_t kNonce = 12, kTag = 16;
// OpenSSL takes int lengths; nothing sealed here comes near this (the
// largest is the catalogue snapshot, about 100 bytes a key).
constexpr std::size_t kMaxLen = std::size_t{1} << 26;

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

struct CipherFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using Cipher = std::unique_ptr<EVP_CIPHER_CTX, CipherFree>;

const unsigned char* u(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

}  // namespace

MasterKey::~MasterKey() { OPENSSL_cleanse(bytes.data(), bytes.size()); }

std::optional<MasterKey> load_master_key(std::string_view path, std::string& err) {
  FdCloser f{open_private_file(path, err)};
  if (f.fd < 0) return std::nullopt;
  const std::string p(path);
  MasterKey key;
  unsigned char extra;
  const ssize_t n = ::read(f.fd, key.bytes.data(), key.bytes.size());
  if (n != static_cast<ssize_t>(key.bytes.size()) || ::read(f.fd, &extra, 1) != 0) {
    err = p + ": a master key file holds exactly 32 bytes";
    return std::nullopt;
  }
  return key;
}

std::optional<std::array<unsigned char, 32>> derive_key(const MasterKey& master, std::string_view label) {
  const HmacKey prf(std::string_view(reinterpret_cast<const char*>(master.bytes.data()), master.bytes.size()));
  auto digest = prf.digest(label);
  if (!digest) return std::nullopt;
  std::array<unsigned char, 32> out{};
  std::copy(digest->begin(), digest->end(), out.begin());
  OPENSSL_cleanse(digest->data(), digest->size());
  return out;
}

bool create_master_key_file(std::string_view path, std::string& err) {
  MasterKey key;
  if (RAND_bytes(key.bytes.data(), static_cast<int>(key.bytes.size())) != 1) {
    err = "no random bytes";
    return false;
  }
  const std::string p(path);
  FdCloser f{::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)};
  if (f.fd < 0) {
    err = p + ": " + std::strerror(errno);
    return false;
  }
  if (::write(f.fd, key.bytes.data(), key.bytes.size()) != static_cast<ssize_t>(key.bytes.size())) {
    err = p + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

std::string seal(const MasterKey& key, std::string_view plaintext, std::string_view aad) {
  if (plaintext.size() > kMaxLen || aad.size() > kMaxLen) return {};
  std::string out(kNonce + plaintext.size() + kTag, '\0');
  auto* o = reinterpret_cast<unsigned char*>(out.data());
  if (RAND_bytes(o, kNonce) != 1) return {};
  Cipher ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  if (!ctx || EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key.bytes.data(), o) != 1 ||
      EVP_EncryptUpdate(ctx.get(), nullptr, &len, u(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_EncryptUpdate(ctx.get(), o + kNonce, &len, u(plaintext), static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), o + kNonce + len, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTag, o + kNonce + plaintext.size()) != 1) {
    return {};
  }
  return out;
}

std::optional<std::string> open(const MasterKey& key, std::string_view sealed, std::string_view aad) {
  if (sealed.size() < kNonce + kTag || sealed.size() > kMaxLen || aad.size() > kMaxLen) return std::nullopt;
  const std::size_t n = sealed.size() - kNonce - kTag;
  std::string out(n, '\0');
  Cipher ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  std::array<unsigned char, kTag> tag;
  std::memcpy(tag.data(), sealed.data() + kNonce + n, kTag);
  if (!ctx || EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, key.bytes.data(), u(sealed)) != 1 ||
      EVP_DecryptUpdate(ctx.get(), nullptr, &len, u(aad), static_cast<int>(aad.size())) != 1 ||
      EVP_DecryptUpdate(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &len, u(sealed) + kNonce,
                        static_cast<int>(n)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTag, tag.data()) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), reinterpret_cast<unsigned char*>(out.data()) + len, &len) != 1) {
    OPENSSL_cleanse(out.data(), out.size());  // plaintext of a secret that did not authenticate
    return std::nullopt;
  }
  return out;
}

std::string random_base64url(std::size_t bytes) {
  if (bytes > kMaxLen) return {};
  std::string raw(bytes, '\0');
  // Without randomness a key id or secret would be guessable: give nothing.
  if (RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) != 1) return {};
  std::string b64(4 * ((bytes + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), u(raw), static_cast<int>(bytes));
  b64.resize(static_cast<std::size_t>(n));
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  for (char& c : b64) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return b64;
}

std::string new_key_id(std::string_view environment) {
  const std::string random = random_base64url(18);
  if (random.empty()) return {};
  return std::string(environment == "production" ? "mrk_prd_" : "mrk_sbx_") + random;
}

std::string new_secret() { return random_base64url(32); }

}  // namespace mr
