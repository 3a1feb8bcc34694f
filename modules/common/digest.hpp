// SHA-256 over OpenSSL's EVP interface, and the two digests of a request:
// the body's (signed, contract section 2) and the idempotency fingerprint
// (SHA-256 of method, path and body, contract section 3). The edge computes
// both in one pass over the body; the Redis edge and the ledger's records
// reuse them. No nginx header: unit tests, mr-sign and the tests link it.
#pragma once

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

std::string sha256_hex(std::string_view data);

struct RequestDigests {
  std::string body_sha256_hex;
  std::string fingerprint;  // empty unless asked for
};

// One pass over the body feeds both digests.
RequestDigests digest_request(std::string_view method, std::string_view path, std::string_view body,
                              bool with_fingerprint);

std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body);

}  // namespace mr
