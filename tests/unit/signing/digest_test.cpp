// to_hex and the SHA-256 helpers: every byte value, every length around
// to_hex's 32-byte chunk, against snprintf; SHA-256 against FIPS 180-2.
#include <criterion/criterion.h>

#include <cstdio>
#include <string>

#include "signing/digest.hpp"

namespace {

std::string printf_hex(const unsigned char* data, std::size_t len) {
  std::string out;
  char two[3];
  for (std::size_t i = 0; i < len; ++i) {
    std::snprintf(two, sizeof(two), "%02x", data[i]);
    out += two;
  }
  return out;
}

}  // namespace

Test(digest, to_hex_matches_printf_for_every_byte_and_length) {
  unsigned char bytes[300];
  for (std::size_t i = 0; i < sizeof(bytes); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 3);
  for (std::size_t len = 0; len <= sizeof(bytes); ++len) {
    // Each length from an offset too, so no chunk starts aligned by luck.
    for (std::size_t from : {std::size_t{0}, std::size_t{1}}) {
      if (from + len > sizeof(bytes)) continue;
      const std::string want = printf_hex(bytes + from, len);
      cr_expect_eq(mr::to_hex(bytes + from, len), want, "length %zu from %zu", len, from);
      std::string into(2 * len + 2, '#');  // writes exactly 2 * len chars
      mr::to_hex(bytes + from, len, into.data());
      cr_expect_eq(into, want + "##", "length %zu from %zu", len, from);
    }
  }
  unsigned char all[256];
  for (int b = 0; b < 256; ++b) all[b] = static_cast<unsigned char>(b);
  cr_expect_eq(mr::to_hex(all, sizeof(all)), printf_hex(all, sizeof(all)));
}

Test(digest, sha256_hex_vectors) {
  cr_expect_eq(mr::sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  cr_expect_eq(mr::sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // The pieces hash as if joined, inline or not.
  cr_expect_eq(mr::sha256_hex({"a", "", "bc"}), mr::sha256_hex("abc"));
  cr_expect_eq(std::string(mr::view(mr::sha256_hex_inline({"ab", "c"}))), mr::sha256_hex("abc"));
}
