// The signing rules both sides share (signing/): SHA-256, the canonical
// string, the HMAC and the signature header's format.
#include <criterion/criterion.h>

#include <cctype>
#include <string>

#include "ledger/text_rules.hpp"
#include "signing/digest.hpp"
#include "signing/signature.hpp"

using namespace mr::signing;
using mr::sha256_hex;

namespace {
const std::string kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// printf 'ts\nGET\n/api/v1/x\n<empty hash>' | openssl dgst -sha256 -hmac secret
const std::string kVector = "v1=846dbec8087972b8caa9d46b93b550b939ebb02dfaae2ec77cf848dc9631f5ec";
}  // namespace

Test(signature, empty_body_hash) { cr_expect_eq(sha256_hex(""), kEmpty); }

// FIPS 180-2's one- and two-block messages, the second hashed in pieces.
Test(signature, sha256_known_answers) {
  cr_expect_eq(sha256_hex("abc"), std::string("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  cr_expect_eq(mr::sha256_hex({"abcdbcdecdefdefgefghfghighijhijk", "ijkljklmklmnlmnomnopnopq"}),
               std::string("248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
}

Test(signature, streaming_hash_equals_one_shot) {
  cr_expect_eq(std::string(mr::view(mr::sha256_hex_inline({"hello ", "world"}))), sha256_hex("hello world"));
  cr_expect_eq(std::string(mr::view(mr::sha256_hex_inline("hello world"))), sha256_hex("hello world"));
}

// The idempotency fingerprint's exact input: records stored by an older
// build must still match a retry (printf 'POST\n/api/v1/x\n{}' | sha256sum).
Test(signature, request_fingerprint_hashes_method_path_body) {
  cr_expect_eq(mr::request_fingerprint("POST", "/api/v1/x", "{}"),
               std::string("eb3a9f1a7592619f7a29c5415bb7fc7e3481f525bdd257b4f45c633192f359fb"));
  cr_expect_eq(mr::sha256_hex({"hello ", "world"}), sha256_hex("hello world"));
}

Test(signature, canonical_string) {
  cr_expect_eq(canonical_string("T", "post", "/p", "H"), std::string("T\nPOST\n/p\nH"));
}

Test(signature, hmac_matches_openssl) {
  cr_expect_eq(sign("secret", canonical_string("ts", "GET", "/api/v1/x", kEmpty)), kVector);
}

Test(signature, signature_either_case_and_format) {
  const std::string canonical = canonical_string("ts", "GET", "/api/v1/x", kEmpty);
  std::string upper = kVector;
  for (std::size_t i = 3; i < upper.size(); ++i) upper[i] = static_cast<char>(std::toupper(upper[i]));
  cr_expect(check_signature(mr::HmacKey("secret"), canonical, kVector) == SignatureCheck::matches);
  cr_expect(check_signature(mr::HmacKey("secret"), canonical, upper) == SignatureCheck::matches);
  cr_expect(check_signature(mr::HmacKey("Secret"), canonical, kVector) == SignatureCheck::differs);
  cr_expect(check_signature(mr::HmacKey("secret"), canonical + "x", kVector) == SignatureCheck::differs);
  cr_expect(check_signature(mr::HmacKey("secret"), canonical, "v1=zz") == SignatureCheck::differs);
  cr_expect(!parse_signature(kVector.substr(3)));
  cr_expect(!parse_signature("V1=" + kVector.substr(3)));
  cr_expect(!parse_signature(kVector + "0"));
  cr_expect(!parse_signature("v1=" + std::string(64, 'g')));
}

// Every byte at or next to the hex ranges' edges, in every position: the
// table behind hex_value must accept exactly 0-9, a-f and A-F.
Test(signature, signature_digits_decoded_exactly) {
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    cr_expect_eq(mr::hex_value(c) >= 0, hex, "byte %d", b);
    if (hex) cr_expect_eq(mr::hex_value(c), std::stoi(std::string(1, c), nullptr, 16), "byte %d", b);
    for (std::size_t at : {std::size_t{3}, std::size_t{40}, std::size_t{66}}) {
      std::string header = kVector;
      header[at] = c;
      cr_expect_eq(parse_signature(header).has_value(), hex, "byte %d at %zu", b, at);
    }
  }
  std::string digits;
  for (int i = 0; i < 32; ++i) digits += "0123456789abcdefABCDEF"[(i * 7) % 22], digits += "fF0a9"[i % 5];
  const auto mac = parse_signature("v1=" + digits);
  cr_assert(mac.has_value());
  for (std::size_t i = 0; i < mac->size(); ++i) {
    cr_expect_eq((*mac)[i], std::stoi(digits.substr(2 * i, 2), nullptr, 16), "byte %zu", i);
  }
}

