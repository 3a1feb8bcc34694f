// The edge's pure rules: canonical string, HMAC, timestamps, order of checks.
#include <criterion/criterion.h>

#include <chrono>
#include <string>

#include "modules/auth/auth_core.hpp"

using namespace mr::auth;
using namespace std::chrono;

namespace {
const std::string kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// printf 'ts\nGET\n/api/v1/x\n<empty hash>' | openssl dgst -sha256 -hmac secret
const std::string kVector = "v1=846dbec8087972b8caa9d46b93b550b939ebb02dfaae2ec77cf848dc9631f5ec";
}  // namespace

Test(auth_core, empty_body_hash) { cr_expect_eq(sha256_hex(""), kEmpty); }

Test(auth_core, streaming_hash_equals_one_shot) {
  Sha256 h;
  h.update("hello ");
  h.update("world");
  cr_expect_eq(h.hex_final(), sha256_hex("hello world"));
}

Test(auth_core, canonical_string) {
  cr_expect_eq(canonical_string("T", "post", "/p", "H"), std::string("T\nPOST\n/p\nH"));
}

Test(auth_core, hmac_matches_openssl) {
  cr_expect_eq(sign("secret", canonical_string("ts", "GET", "/api/v1/x", kEmpty)), kVector);
}

Test(auth_core, signature_either_case_and_format) {
  const std::string canonical = canonical_string("ts", "GET", "/api/v1/x", kEmpty);
  std::string upper = kVector;
  for (std::size_t i = 3; i < upper.size(); ++i) upper[i] = static_cast<char>(std::toupper(upper[i]));
  cr_expect(signature_matches("secret", canonical, kVector));
  cr_expect(signature_matches("secret", canonical, upper));
  cr_expect(!signature_matches("Secret", canonical, kVector));
  cr_expect(!signature_matches("secret", canonical + "x", kVector));
  cr_expect(!signature_well_formed(kVector.substr(3)));
  cr_expect(!signature_well_formed("V1=" + kVector.substr(3)));
  cr_expect(!signature_well_formed(kVector + "0"));
  cr_expect(!signature_well_formed("v1=" + std::string(64, 'g')));
}

Test(auth_core, timestamps) {
  const auto t = parse_timestamp("2026-11-22T10:00:00Z");
  cr_assert(t.has_value());
  cr_expect(parse_timestamp("2026-11-22T10:00:00+00:00") == t);
  cr_expect(parse_timestamp("2026-11-22T10:00:00.5Z") == *t + milliseconds(500));
  cr_expect(parse_timestamp("2026-11-22T10:00:00.123456789Z") == *t + nanoseconds(123456789));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00.1234567890Z"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00.Z"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00+01:00"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00"));
  cr_expect(!parse_timestamp("2026-11-22 10:00:00Z"));
  cr_expect(!parse_timestamp("2026-11-22t10:00:00z"));
  cr_expect(parse_timestamp("2024-02-29T00:00:00Z").has_value());
  cr_expect(!parse_timestamp("2026-02-29T00:00:00Z"));
  cr_expect(!parse_timestamp("2026-13-01T00:00:00Z"));
  cr_expect(!parse_timestamp("2026-11-22T24:00:00Z"));
  cr_expect(!parse_timestamp("yesterday"));
  cr_expect_eq(format_timestamp(system_clock::time_point(seconds(0))), std::string("1970-01-01T00:00:00Z"));
}

Test(auth_core, idempotency_keys_and_content_types) {
  cr_expect(idempotency_key_valid("a"));
  cr_expect(idempotency_key_valid(std::string(255, 'k')));
  cr_expect(!idempotency_key_valid(""));
  cr_expect(!idempotency_key_valid(std::string(256, 'k')));
  cr_expect(!idempotency_key_valid("a b"));
  cr_expect(is_json_content_type("application/json"));
  cr_expect(is_json_content_type("Application/JSON; charset=utf-8"));
  cr_expect(!is_json_content_type("text/plain"));
  cr_expect(!is_json_content_type("application/jsonx"));
}

namespace {
struct Fixture {
  std::string ts = format_timestamp(system_clock::now());
  std::string body = "{}";
  RequestFacts facts;
  KeyLookup lookup = [](std::string_view id) -> std::optional<KeyView> {
    if (id != "mrk_sbx_a") return std::nullopt;
    return KeyView{"secret", 7, "club-a"};
  };
  std::string sig;
  Fixture() {
    facts.method = "POST";
    facts.path = "/api/v1/members";
    facts.key_id = "mrk_sbx_a";
    facts.timestamp = ts;
    facts.idempotency_key = "k1";
    facts.content_type = "application/json";
    facts.body_sha256_hex = hash;
    sig = sign("secret", canonical_string(ts, "POST", "/api/v1/members", hash));
    facts.signature = sig;
  }
  std::string hash = sha256_hex("{}");
  Verdict check(std::chrono::seconds skew = seconds(0)) {
    return check_request(facts, lookup, system_clock::now() + skew);
  }
};
std::string code(const Verdict& v) { return v.error ? std::string(mr::code_name(*v.error)) : "ok"; }
}  // namespace

Test(auth_core, order_of_checks) {
  Fixture f;
  cr_expect_eq(code(f.check()), std::string("ok"));
  cr_expect_eq(f.check().key->club_id, 7);
  { Fixture g; g.facts.key_id.reset(); cr_expect_eq(code(g.check()), std::string("unauthorized")); }
  { Fixture g; g.facts.key_id = "mrk_sbx_b"; g.facts.signature.reset(); cr_expect_eq(code(g.check()), std::string("unauthorized")); }
  { Fixture g; g.facts.timestamp.reset(); cr_expect_eq(code(g.check()), std::string("invalid_request")); }
  { Fixture g; g.facts.signature.reset(); cr_expect_eq(code(g.check()), std::string("invalid_request")); }
  { Fixture g; g.facts.idempotency_key.reset(); cr_expect_eq(code(g.check()), std::string("invalid_request")); }
  { Fixture g; g.facts.content_type = "text/plain"; cr_expect_eq(code(g.check()), std::string("invalid_request")); }
  { Fixture g; g.facts.timestamp = "bad"; cr_expect_eq(code(g.check()), std::string("invalid_request")); }
  // A missing header wins over a stale timestamp; stale wins over a bad signature.
  { Fixture g; g.facts.signature.reset(); cr_expect_eq(code(g.check(seconds(1000))), std::string("invalid_request")); }
  { Fixture g; g.facts.body_sha256_hex = kEmpty; cr_expect_eq(code(g.check(seconds(1000))), std::string("stale_timestamp")); }
  { Fixture g; g.facts.body_sha256_hex = kEmpty; cr_expect_eq(code(g.check()), std::string("invalid_signature")); }
  { Fixture g; g.facts.path = "/api/v1/other"; cr_expect_eq(code(g.check()), std::string("invalid_signature")); }
  // A GET needs neither idempotency key nor content type.
  { Fixture g; g.facts.method = "GET"; g.facts.idempotency_key.reset(); g.facts.content_type.reset();
    cr_expect_eq(code(g.check()), std::string("invalid_signature")); }
}

Test(auth_core, window_both_ways) {
  Fixture f;
  cr_expect_eq(code(f.check(seconds(299))), std::string("ok"));
  cr_expect_eq(code(f.check(seconds(-299))), std::string("ok"));
  cr_expect_eq(code(f.check(seconds(301))), std::string("stale_timestamp"));
  cr_expect_eq(code(f.check(seconds(-301))), std::string("stale_timestamp"));
}
