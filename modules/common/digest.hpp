// SHA-256 over OpenSSL's EVP interface, and the two digests of a request:
// the body's (signed, contract section 2) and the idempotency fingerprint
// (SHA-256 of method, path and body, contract section 3). The auth edge
// hashes the body; the fingerprint is computed once, by the first module
// that needs it (modules/common/request_context). No nginx header: unit
// tests, mr-sign and the tests link it.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

namespace mr {

std::string to_hex(const unsigned char* data, std::size_t len);  // lower-case

class Sha256 {
 public:
  Sha256();
  void update(std::string_view data);
  std::string hex_final();  // lower-case hex

 private:
  struct Free {
    void operator()(void* ctx) const;
  };
  std::unique_ptr<void, Free> ctx_;
};

// SHA-256 of the pieces one after another, lower-case hex.
std::string sha256_hex(std::initializer_list<std::string_view> pieces);
inline std::string sha256_hex(std::string_view data) { return sha256_hex({data}); }

// The idempotency fingerprint: SHA-256 of method \n path \n body.
std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body);

}  // namespace mr
