// An API key's secret keyed into HMAC-SHA256 once, when the catalogue is
// loaded: its inner and outer padded blocks are hashed then, so a request
// hashes only its message and the inner digest, with no allocation.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

namespace mr {

using HmacDigest = std::array<unsigned char, 32>;

class HmacKey {
 public:
  explicit HmacKey(std::string_view secret);
  ~HmacKey();
  HmacKey(HmacKey&&) noexcept;
  HmacKey& operator=(HmacKey&&) noexcept;
  HmacKey(const HmacKey&) = delete;
  HmacKey& operator=(const HmacKey&) = delete;

  bool valid() const { return ctx_ != nullptr; }
  // HMAC-SHA256(secret, data); nullopt when OpenSSL fails. Works on copies
  // of the key's states: const, and safe from any thread.
  std::optional<HmacDigest> digest(std::string_view data) const;
  // The same over the pieces one after another, as if joined.
  std::optional<HmacDigest> digest(std::span<const std::string_view> pieces) const;

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

}  // namespace mr
