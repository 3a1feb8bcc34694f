// The receiver's side of a Standard Webhooks v1 signature, written here
// from the spec with OpenSSL alone: the tests check the modules' signing
// against an independent verifier, not against the code under test.
#pragma once

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>
#include <vector>

namespace mr::test {

inline std::string base64(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

inline std::string unbase64(const std::string& text) {
  std::string out(3 * text.size() / 4 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return {};
  std::size_t len = static_cast<std::size_t>(n);
  // EVP_DecodeBlock counts the padding's bytes too.
  for (std::size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) len--;
  out.resize(len);
  return out;
}

// "v1,<base64>" for the secret "whsec_<base64 key>".
inline std::string standard_webhooks_signature(const std::string& secret, const std::string& id,
                                               const std::string& timestamp, const std::string& body) {
  const std::string key = unbase64(secret.substr(secret.find('_') + 1));
  const std::string content = id + "." + timestamp + "." + body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(content.data()),
       content.size(), mac, &len);
  return "v1," + base64(std::string(reinterpret_cast<char*>(mac), len));
}

// The signatures of a webhook-signature header (space-separated).
inline std::vector<std::string> signatures_of(const std::string& header) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < header.size();) {
    std::size_t sp = header.find(' ', at);
    if (sp == std::string::npos) sp = header.size();
    if (sp > at) out.push_back(header.substr(at, sp - at));
    at = sp + 1;
  }
  return out;
}

}  // namespace mr::test
