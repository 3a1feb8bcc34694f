// HmacKey builds HMAC-SHA256 from OpenSSL's SHA-256 states (RFC 2104):
// checked against RFC 4231's vectors and against OpenSSL's own HMAC
// (EVP_Q_mac) for every key length around the block size.
#include <criterion/criterion.h>

#include <openssl/evp.h>

#include <string>

#include "signing/hmac_key.hpp"
#include "signing/digest.hpp"

namespace {

std::string hex_mac(const mr::HmacKey& key, std::string_view data) {
  const auto mac = key.digest(data);
  cr_assert(mac.has_value());
  return mr::to_hex(mac->data(), mac->size());
}

std::string openssl_mac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  std::size_t len = 0;
  cr_assert(EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA256", nullptr, key.data(), key.size(),
                      reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, sizeof(out),
                      &len) != nullptr);
  return mr::to_hex(out, len);
}

std::string bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out.push_back(static_cast<char>(v));
  return out;
}

}  // namespace

// RFC 4231 section 4: test cases 1-4, 6 and 7 (5 truncates the output).
Test(hmac_key, rfc4231_vectors) {
  struct Case {
    std::string key, data, mac;
  };
  const Case cases[] = {
      {std::string(20, '\x0b'), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"Jefe", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {std::string(20, '\xaa'), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {bytes({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25}),
       std::string(50, '\xcd'), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {std::string(131, '\xaa'),
       "This is a test using a larger than block-size key and a larger than block-size data. The key needs to "
       "be hashed before being used by the HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (const Case& c : cases) {
    const mr::HmacKey key(c.key);
    cr_expect(key.valid());
    cr_expect_eq(hex_mac(key, c.data), c.mac, "key of %zu bytes", c.key.size());
  }
}

// Keys of 0 to 130 bytes (below, at and above the 64-byte block) and
// messages of 0 to 200 bytes, each against OpenSSL's HMAC.
Test(hmac_key, equals_openssl_hmac_for_every_key_length) {
  std::string key, data;
  for (std::size_t k = 0; k <= 130; ++k) {
    key.assign(k, '\0');
    for (std::size_t i = 0; i < k; ++i) key[i] = static_cast<char>((i * 131 + k * 7) & 0xff);
    const mr::HmacKey mac(key);
    for (std::size_t n = 0; n <= 200; n += 13) {
      data.assign(n, '\0');
      for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<char>((i * 17 + n) & 0xff);
      cr_assert_eq(hex_mac(mac, data), openssl_mac(key, data), "key %zu bytes, message %zu bytes", k, n);
    }
  }
}

// The key's states are copied per call, never consumed: the same message
// gives the same MAC however often and after whatever else was signed.
Test(hmac_key, one_key_serves_many_messages) {
  const mr::HmacKey key("secret");
  const std::string first = hex_mac(key, "a message");
  cr_expect_eq(hex_mac(key, "another message"), openssl_mac("secret", "another message"));
  cr_expect_eq(hex_mac(key, "a message"), first);
  cr_expect_eq(first, openssl_mac("secret", "a message"));
}

// Pieces hash as the string they join into, whether they are joined on the
// stack first (256 bytes or fewer) or fed one by one (longer).
Test(hmac_key, pieces_digest_as_joined) {
  const mr::HmacKey key("lE4BNLPUju9T2mJOAB0ts2rc2Tx_L323LeuxBX8A8DQ");
  for (std::size_t len : {0, 1, 63, 64, 65, 120, 255, 256, 257, 600}) {
    std::string whole(len, '\0');
    for (std::size_t i = 0; i < len; ++i) whole[i] = static_cast<char>('a' + i % 26);
    const std::string want = openssl_mac("lE4BNLPUju9T2mJOAB0ts2rc2Tx_L323LeuxBX8A8DQ", whole);
    for (std::size_t cut = 0; cut <= len; cut += std::max<std::size_t>(1, len / 7)) {
      const std::string_view w = whole;
      const std::string_view pieces[] = {w.substr(0, cut / 2), "", w.substr(cut / 2, cut - cut / 2), w.substr(cut)};
      const auto mac = key.digest(std::span<const std::string_view>(pieces));
      cr_assert(mac.has_value());
      cr_expect_eq(mr::to_hex(mac->data(), mac->size()), want, "length %zu cut at %zu", len, cut);
    }
  }
}
