// Standard Webhooks v1 signatures: the specification's published example,
// rotation (two signatures), and a receiver's verification: timestamps
// within the tolerance, any matching key among the signatures, nothing
// else accepted.
#include <criterion/criterion.h>

#include <string>
#include <vector>

#include "keys/webhook_secret.hpp"
#include "modules/webhooks/standard_webhooks.hpp"

namespace {

namespace wh = mr::webhooks;

// The example of the specification (and of its reference libraries).
constexpr const char* kSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
constexpr const char* kId = "msg_p5jXN8AQM9LWM0D4loKWxJek";
constexpr std::int64_t kTimestamp = 1614265330;
constexpr const char* kBody = "{\"test\": 2432232314}";
constexpr const char* kSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

std::string example_key() { return mr::webhook_signing_key(kSecret).value(); }

wh::Received received(const std::string& signature, std::string_view timestamp = "1614265330",
                      std::string_view body = kBody, std::string_view id = kId) {
  return {id, timestamp, signature, body};
}

}  // namespace

Test(standard_webhooks, signs_the_specification_example) {
  cr_expect_eq(wh::sign(example_key(), kId, kTimestamp, kBody), std::string(kSignature));
}

Test(standard_webhooks, verifies_the_specification_example) {
  const std::vector<std::string> keys = {example_key()};
  cr_expect_eq(wh::verify(keys, received(kSignature), kTimestamp), wh::Verdict::valid);
  // Among other signatures, of other versions or other keys, in any place.
  cr_expect_eq(wh::verify(keys, received(std::string("v1,bm9wZQ== ") + kSignature), kTimestamp),
               wh::Verdict::valid);
  cr_expect_eq(wh::verify(keys, received(std::string(kSignature) + " v1a,abc"), kTimestamp), wh::Verdict::valid);
}

Test(standard_webhooks, rotation_signs_with_both_keys_current_first) {
  const std::vector<std::string> keys = {example_key(), mr::webhook_signing_key("whsec_Zm9vYmFy").value()};
  const std::string header = wh::signature_header(keys, kId, kTimestamp, kBody);
  const auto space = header.find(' ');
  cr_assert_neq(space, std::string::npos, "%s", header.c_str());
  cr_expect_eq(header.substr(0, space), std::string(kSignature));
  cr_expect_eq(header.substr(space + 1), wh::sign(keys[1], kId, kTimestamp, kBody));
  cr_expect_eq(header.find(' ', space + 1), std::string::npos, "exactly two signatures");
  // A receiver that knows only the old secret, or only the new, accepts it.
  for (const auto& one : keys) {
    const std::vector<std::string> known = {one};
    cr_expect_eq(wh::verify(known, received(header), kTimestamp), wh::Verdict::valid);
  }
  cr_expect_eq(wh::signature_header({}, kId, kTimestamp, kBody), std::string(""));
}

Test(standard_webhooks, any_change_breaks_the_signature) {
  const std::vector<std::string> keys = {example_key()};
  cr_expect_eq(wh::verify(keys, received(kSignature, "1614265330", "{\"test\": 2432232315}"), kTimestamp),
               wh::Verdict::mismatch);
  cr_expect_eq(wh::verify(keys, received(kSignature, "1614265331"), kTimestamp), wh::Verdict::mismatch);
  cr_expect_eq(wh::verify(keys, received(kSignature, "1614265330", kBody, "msg_other"), kTimestamp),
               wh::Verdict::mismatch);
  const std::vector<std::string> other = {mr::webhook_signing_key("whsec_Zm9vYmFy").value()};
  cr_expect_eq(wh::verify(other, received(kSignature), kTimestamp), wh::Verdict::mismatch);
  // The signature without its version, another version, a truncated MAC.
  cr_expect_eq(wh::verify(keys, received("g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="), kTimestamp),
               wh::Verdict::mismatch);
  cr_expect_eq(wh::verify(keys, received("v2,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="), kTimestamp),
               wh::Verdict::mismatch);
  cr_expect_eq(wh::verify(keys, received("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE"), kTimestamp),
               wh::Verdict::mismatch);
  cr_expect_eq(wh::verify(keys, received("v1,"), kTimestamp), wh::Verdict::mismatch);
  cr_expect_eq(wh::verify({}, received(kSignature), kTimestamp), wh::Verdict::mismatch, "no key");
}

Test(standard_webhooks, timestamp_tolerance_both_ways) {
  const std::vector<std::string> keys = {example_key()};
  cr_expect_eq(wh::verify(keys, received(kSignature), kTimestamp + 300), wh::Verdict::valid);
  cr_expect_eq(wh::verify(keys, received(kSignature), kTimestamp - 300), wh::Verdict::valid);
  cr_expect_eq(wh::verify(keys, received(kSignature), kTimestamp + 301), wh::Verdict::too_old);
  cr_expect_eq(wh::verify(keys, received(kSignature), kTimestamp - 301), wh::Verdict::too_new);
  cr_expect_eq(wh::verify(keys, received(kSignature), kTimestamp + 10, 5), wh::Verdict::too_old);
}

Test(standard_webhooks, malformed_headers) {
  const std::vector<std::string> keys = {example_key()};
  for (const char* ts : {"", "-1614265330", "1614265330.5", "1614265330 ", "0x60361c72", "16142653300000000000"}) {
    cr_expect_eq(wh::verify(keys, received(kSignature, ts), kTimestamp), wh::Verdict::malformed, "\"%s\"", ts);
  }
  cr_expect_eq(wh::verify(keys, received(""), kTimestamp), wh::Verdict::malformed);
  cr_expect_eq(wh::verify(keys, received(kSignature, "1614265330", kBody, ""), kTimestamp), wh::Verdict::malformed);
  cr_expect_eq(wh::verdict_name(wh::Verdict::too_old), std::string_view("too_old"));
}

Test(standard_webhooks, empty_body_and_binary_bytes_sign) {
  const std::string key = example_key();
  const std::string body("a\0b\xff", 4);
  const std::string sig = wh::sign(key, "evt_1", 1700000000, body);
  cr_assert(sig.starts_with("v1,"));
  cr_expect_eq(sig.size(), 3u + 44u, "base64 of 32 bytes");
  const std::vector<std::string> keys = {key};
  cr_expect_eq(wh::verify(keys, received(sig, "1700000000", body, "evt_1"), 1700000000), wh::Verdict::valid);
  cr_expect_eq(wh::verify(keys, received(sig, "1700000000", std::string_view("a", 1), "evt_1"), 1700000000),
               wh::Verdict::mismatch, "a NUL byte is part of the body");
  cr_expect_neq(wh::sign(key, "evt_1", 1700000000, ""), sig);
}
