// Webhook secrets: their shape, sealing bound to the endpoint id, the
// Standard Webhooks signing key, and the strict base64 they are written in.
#include <criterion/criterion.h>

#include <openssl/hmac.h>

#include <set>
#include <string>

#include "keys/webhook_secret.hpp"
#include "tests/unit/keys/master_key_of.hpp"

using mr::test::key_of;

Test(webhook_secret, base64_known_vectors) {
  // RFC 4648 section 10.
  cr_expect_eq(mr::base64_encode(""), std::string(""));
  cr_expect_eq(mr::base64_encode("f"), std::string("Zg=="));
  cr_expect_eq(mr::base64_encode("fo"), std::string("Zm8="));
  cr_expect_eq(mr::base64_encode("foo"), std::string("Zm9v"));
  cr_expect_eq(mr::base64_encode("foobar"), std::string("Zm9vYmFy"));
  cr_expect_eq(mr::base64_decode("Zg==").value_or("?"), std::string("f"));
  cr_expect_eq(mr::base64_decode("Zm8=").value_or("?"), std::string("fo"));
  cr_expect_eq(mr::base64_decode("Zm9vYmFy").value_or("?"), std::string("foobar"));
  const std::string all_bytes = [] {
    std::string s;
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
    return s;
  }();
  cr_expect_eq(mr::base64_decode(mr::base64_encode(all_bytes)).value_or("?"), all_bytes);
}

Test(webhook_secret, base64_decode_is_strict) {
  for (const char* bad : {"", "Zg", "Zg=", "Zg===", " Zg==", "Zg==\n", "Zh==", "Zm9=", "Z-8_", "=Zg=",
                          "Zg=a", "Zm9vYmFy===="}) {
    cr_expect(!mr::base64_decode(bad).has_value(), "accepted \"%s\"", bad);
  }
  cr_expect(!mr::base64_decode(std::string_view("Zm9v\0\0\0\0", 8)).has_value());
}

Test(webhook_secret, new_secret_shape) {
  std::set<std::string> seen;
  for (int i = 0; i < 20; ++i) {
    const std::string s = mr::new_webhook_secret();
    cr_assert(s.starts_with("whsec_"), "%s", s.c_str());
    cr_expect_eq(s.size(), 6u + 44u, "32 bytes are 44 base64 characters");
    const auto key = mr::webhook_signing_key(s);
    cr_assert(key.has_value());
    cr_expect_eq(key->size(), 32u);
    seen.insert(s);
  }
  cr_expect_eq(seen.size(), 20u, "every secret is new");
}

Test(webhook_secret, signing_key_refuses_other_shapes) {
  cr_expect(!mr::webhook_signing_key("").has_value());
  cr_expect(!mr::webhook_signing_key("whsec_").has_value());
  cr_expect(!mr::webhook_signing_key("Zm9vYmFy").has_value(), "no prefix");
  cr_expect(!mr::webhook_signing_key("whsec_Zm9v YmFy").has_value());
  cr_expect_eq(mr::webhook_signing_key("whsec_Zm9vYmFy").value_or("?"), std::string("foobar"));
}

// The Standard Webhooks specification's own example: this secret, id,
// timestamp and payload sign to this signature.
Test(webhook_secret, standard_webhooks_example_signature) {
  const auto key = mr::webhook_signing_key("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  cr_assert(key.has_value());
  const std::string content =
      "msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{\"test\": 2432232314}";
  unsigned char mac[32];
  unsigned int len = 0;
  cr_assert(HMAC(EVP_sha256(), key->data(), static_cast<int>(key->size()),
                 reinterpret_cast<const unsigned char*>(content.data()), content.size(), mac, &len) != nullptr);
  const std::string signature = mr::base64_encode(std::string_view(reinterpret_cast<const char*>(mac), len));
  cr_expect_eq(signature, std::string("g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
}

Test(webhook_secret, seal_open_round_trip_bound_to_endpoint) {
  const auto master = key_of(7);
  const auto sealing = mr::webhook_sealing_key(master);
  cr_assert(sealing.has_value());
  cr_expect(sealing->bytes != master.bytes, "a derived key, not the master key");
  const std::string secret = mr::new_webhook_secret();
  const std::string sealed = mr::seal_webhook_secret(*sealing, "we_1", secret);
  cr_assert(!sealed.empty());
  cr_expect(sealed.find(secret.substr(6)) == std::string::npos, "the sealed text does not show the secret");
  cr_expect(mr::base64_decode(sealed).has_value(), "standard base64");
  cr_expect_eq(mr::open_webhook_secret(*sealing, "we_1", sealed).value_or("?"), secret);
  cr_expect(!mr::open_webhook_secret(*sealing, "we_2", sealed).has_value(), "another endpoint's AAD");
  cr_expect(!mr::open_webhook_secret(master, "we_1", sealed).has_value(), "the master key itself");
  cr_expect(!mr::open_webhook_secret(*mr::webhook_sealing_key(key_of(8)), "we_1", sealed).has_value());
  std::string tampered = sealed;
  tampered[4] = tampered[4] == 'A' ? 'B' : 'A';
  cr_expect(!mr::open_webhook_secret(*sealing, "we_1", tampered).has_value());
  cr_expect(!mr::open_webhook_secret(*sealing, "we_1", "not base64!").has_value());
  cr_expect(!mr::open_webhook_secret(*sealing, "we_1", "").has_value());
  cr_expect_neq(mr::seal_webhook_secret(*sealing, "we_1", secret), sealed, "a fresh nonce each time");
}

Test(webhook_secret, sealing_key_is_deterministic) {
  const auto a = mr::webhook_sealing_key(key_of(3));
  const auto b = mr::webhook_sealing_key(key_of(3));
  cr_assert(a && b);
  cr_expect(a->bytes == b->bytes, "the same master key derives the same sealing key at every load");
}

Test(webhook_secret, endpoint_ids) {
  std::set<std::string> seen;
  std::string previous;
  for (int i = 0; i < 50; ++i) {
    const std::string id = mr::new_endpoint_id();
    cr_assert_eq(id.size(), 3u + 12u + 16u, "%s", id.c_str());
    cr_expect(id.starts_with("we_"));
    cr_expect(id.find_first_not_of("0123456789abcdef", 3) == std::string::npos, "%s", id.c_str());
    // Time-ordered: the millisecond prefix never goes back.
    cr_expect(id.substr(0, 15) >= previous.substr(0, std::min<std::size_t>(15, previous.size())));
    previous = id;
    seen.insert(id);
  }
  cr_expect_eq(seen.size(), 50u);
}
