// The edge's pure rules: timestamps, the window, headers, order of checks.
#include <criterion/criterion.h>

#include <cctype>
#include <chrono>
#include <stdexcept>
#include <string>

#include "ledger/text_rules.hpp"
#include "modules/auth/auth_core.hpp"
#include "signing/digest.hpp"
#include "signing/signature.hpp"

using namespace mr::auth;
using namespace mr::signing;
using mr::sha256_hex;
using namespace std::chrono;

namespace {
const std::string kEmpty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
// printf 'ts\nGET\n/api/v1/x\n<empty hash>' | openssl dgst -sha256 -hmac secret
const std::string kVector = "v1=846dbec8087972b8caa9d46b93b550b939ebb02dfaae2ec77cf848dc9631f5ec";
}  // namespace

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

// A passed request carries its signature's MAC (the bytes, whatever the
// hex's case: the idempotency edge and the ledger key on them) and the
// moment its timestamp leaves the window.
Test(auth_core, a_passed_verdict_names_the_mac_and_when_it_goes_stale) {
  Fixture f;
  const Verdict v = f.check();
  cr_assert_eq(code(v), std::string("ok"));
  const auto mac = mr::signing::parse_signature(f.sig);
  cr_assert(mac.has_value());
  cr_expect(v.signature == *mac);
  const auto stamp = parse_timestamp(f.ts);
  cr_assert(stamp.has_value());
  cr_expect(v.stale_at == *stamp + seconds(300));
  Fixture upper;
  std::string shouted = upper.sig;
  for (std::size_t i = 3; i < shouted.size(); ++i) shouted[i] = static_cast<char>(std::toupper(shouted[i]));
  upper.facts.signature = shouted;
  const Verdict u = upper.check();
  cr_assert_eq(code(u), std::string("ok"));
  cr_expect(u.signature == v.signature, "either case of hex names one MAC");
}

Test(auth_core, window_both_ways) {
  Fixture f;
  cr_expect_eq(code(f.check(seconds(299))), std::string("ok"));
  cr_expect_eq(code(f.check(seconds(-299))), std::string("ok"));
  cr_expect_eq(code(f.check(seconds(301))), std::string("stale_timestamp"));
  cr_expect_eq(code(f.check(seconds(-301))), std::string("stale_timestamp"));
}

// ---- Deterministic cases: a fixed "now" so the window edges are exact. ----
namespace {
const std::string kBody = R"({"partnerRef":"club-a"})";
// printf '%s' '{"partnerRef":"club-a"}' | openssl dgst -sha256
const std::string kBodyHash = "6c34401e3df90c1c209c6402cfef5d9cdb37d5e84e0c84cd328c99eaccc65f5f";
const std::string kSecret = "k3Y_s3cr3t-base64url";
const std::string kTs = "2026-11-22T10:00:00.123Z";
// printf '2026-11-22T10:00:00.123Z\nPOST\n/api/v1/members\n<kBodyHash>' |
//   openssl dgst -sha256 -hmac 'k3Y_s3cr3t-base64url'
const std::string kPostVector = "v1=c352e130fbd659e65c126f3997ba9e8e519162ffdc5bf24756933bad3d783dbf";

system_clock::time_point at(std::string_view ts) {
  return time_point_cast<system_clock::duration>(*parse_timestamp(ts));
}

struct Signed {
  std::string ts = kTs, method = "POST", path = "/api/v1/members", hash = kBodyHash, sig;
  RequestFacts facts;
  int lookups = 0;
  KeyLookup lookup = [this](std::string_view id) -> std::optional<KeyView> {
    ++lookups;
    if (id != "mrk_sbx_a") return std::nullopt;
    return KeyView{kSecret, 7, "club-a"};
  };
  explicit Signed(std::string_view m = "POST") : method(m) {
    sig = sign(kSecret, canonical_string(ts, method, path, hash));
    facts.method = method;
    facts.path = path;
    facts.key_id = "mrk_sbx_a";
    facts.timestamp = ts;
    facts.signature = sig;
    facts.body_sha256_hex = hash;
    if (method == "POST") {
      facts.idempotency_key = "order-42";
      facts.content_type = "application/json; charset=utf-8";
    }
  }
  Verdict check(system_clock::time_point now) { return check_request(facts, lookup, now); }
  Verdict check() { return check(at(kTs)); }
};
}  // namespace

Test(auth_core, body_hash_and_post_vector_match_openssl) {
  cr_expect_eq(sha256_hex(kBody), kBodyHash);
  cr_expect_eq(sign(kSecret, canonical_string(kTs, "POST", "/api/v1/members", kBodyHash)), kPostVector);
  Signed s;
  cr_expect_eq(s.sig, kPostVector);
  const Verdict v = s.check();
  cr_assert(!v.error, "%s", v.message.c_str());
  cr_expect(v.message.empty());
}

// A MAC OpenSSL could not compute (here: a key whose context moved away)
// is the server's failure: internal_error, never invalid_signature or a
// pass; and sign() throws instead of handing out an empty signature.
Test(auth_core, a_mac_that_cannot_be_computed_is_an_internal_error) {
  mr::HmacKey key(kSecret);
  const mr::HmacKey kept(std::move(key));
  Signed s;
  cr_expect(check_signature(kept, canonical_string(kTs, "POST", s.path, kBodyHash), s.sig) == SignatureCheck::matches);
  cr_expect(check_signature(key, canonical_string(kTs, "POST", s.path, kBodyHash), s.sig) == SignatureCheck::mac_failed);
  s.lookup = [&key](std::string_view) -> std::optional<KeyView> { return KeyView{kSecret, 7, "club-a", &key}; };
  cr_expect_eq(code(s.check()), std::string("internal_error"));
  s.lookup = [&kept](std::string_view) -> std::optional<KeyView> { return KeyView{kSecret, 7, "club-a", &kept}; };
  cr_expect_eq(code(s.check()), std::string("ok"));
  cr_expect_throw(sign(key, "anything"), std::runtime_error);
}

Test(auth_core, window_edges_exact) {
  Signed s;
  const auto t = at(kTs);
  cr_expect_eq(code(s.check(t + seconds(300))), std::string("ok"));
  cr_expect_eq(code(s.check(t - seconds(300))), std::string("ok"));
  cr_expect_eq(code(s.check(t + seconds(300) + nanoseconds(1))), std::string("stale_timestamp"));
  cr_expect_eq(code(s.check(t - seconds(300) - nanoseconds(1))), std::string("stale_timestamp"));
  cr_expect_eq(code(s.check(t + seconds(301))), std::string("stale_timestamp"));
  cr_expect_eq(code(s.check(t - seconds(301))), std::string("stale_timestamp"));
  // A narrower configured window, and its number in the message.
  const Verdict v = check_request(s.facts, s.lookup, t + seconds(31), seconds(30));
  cr_expect_eq(code(v), std::string("stale_timestamp"));
  cr_expect(v.message.find("30 s") != std::string::npos, "%s", v.message.c_str());
  cr_expect_eq(code(check_request(s.facts, s.lookup, t + seconds(30), seconds(30))), std::string("ok"));
}

// Far-off years must be stale, not wrap around a 64-bit nanosecond count
// (2611-06 is ~2^64 ns after 2026-11) and land back inside the window.
Test(auth_core, far_off_timestamps_are_stale) {
  for (const char* far : {"2611-06-13T12:45:28Z", "2611-06-13T12:45:28.5Z", "9999-12-31T23:59:59Z",
                          "0000-01-01T00:00:00Z", "1441-04-30T00:00:00Z"}) {
    Signed s;
    s.ts = far;
    s.facts.timestamp = s.ts;
    s.sig = sign(kSecret, canonical_string(s.ts, "POST", s.path, s.hash));
    s.facts.signature = s.sig;
    cr_expect_eq(code(s.check(at("2026-11-22T10:00:00Z"))), std::string("stale_timestamp"), "%s", far);
  }
  cr_expect(!parse_timestamp("2611-06-13T12:45:28Z"), "outside what Timestamp holds");
  cr_expect(parse_timestamp("2261-12-31T23:59:59.999999999Z").has_value());
  cr_expect(parse_timestamp("1678-01-01T00:00:00Z").has_value());
}

Test(auth_core, timestamp_details) {
  const auto base = *parse_timestamp("2024-02-29T23:59:59Z");
  cr_expect(parse_timestamp("2024-02-29T23:59:59.1Z") == base + milliseconds(100));
  cr_expect(parse_timestamp("2024-02-29T23:59:59.000000001+00:00") == base + nanoseconds(1));
  cr_expect(parse_timestamp("2000-02-29T00:00:00Z").has_value());   // divisible by 400: leap
  cr_expect(!parse_timestamp("1900-02-29T00:00:00Z"));              // divisible by 100: not leap
  cr_expect(!parse_timestamp("2026-04-31T00:00:00Z"));
  cr_expect(!parse_timestamp("2026-00-10T00:00:00Z"));
  cr_expect(!parse_timestamp("2026-11-00T00:00:00Z"));
  cr_expect(!parse_timestamp("2026-11-22T10:60:00Z"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:60Z"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00-00:00"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00+0000"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00Z "));
  cr_expect(!parse_timestamp(" 2026-11-22T10:00:00Z"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00z"));
  cr_expect(!parse_timestamp("2026-11-22t10:00:00Z"));
  cr_expect(!parse_timestamp("26-11-22T10:00:00Z"));
  cr_expect(!parse_timestamp("2026-1-22T10:00:00Z"));
  cr_expect(!parse_timestamp("+2026-11-22T10:00:00Z"));
  cr_expect(!parse_timestamp("2026-11-22T10:00:00.12a3Z"));
  cr_expect(!parse_timestamp("1763805600"));
  cr_expect(!parse_timestamp(""));
  cr_expect(!parse_timestamp(std::string_view("2026-11-22T10:00:00\0Z", 21)));
}

Test(auth_core, malformed_signatures_are_invalid_signature) {
  for (std::string bad : {std::string(""), std::string("v1="), kPostVector.substr(3), "v2=" + kPostVector.substr(3),
                          "V1=" + kPostVector.substr(3), kPostVector + "a", kPostVector.substr(0, 66),
                          " " + kPostVector, "v1=" + std::string(64, 'z'), "v1=" + std::string(64, '0')}) {
    Signed s;
    s.facts.signature = bad;
    cr_expect_eq(code(s.check()), std::string("invalid_signature"), "[%s]", bad.c_str());
  }
  Signed s;
  std::string upper = s.sig;
  for (std::size_t i = 3; i < upper.size(); ++i) upper[i] = static_cast<char>(std::toupper(upper[i]));
  s.facts.signature = upper;
  cr_expect_eq(code(s.check()), std::string("ok"));
}

Test(auth_core, anything_changed_after_signing_is_invalid_signature) {
  // The facts hold views: the other digest must outlive the check (ASan
  // found a view of a destroyed temporary here).
  { Signed s; const std::string other = sha256_hex(kBody + " "); s.facts.body_sha256_hex = other;
    cr_expect_eq(code(s.check()), std::string("invalid_signature")); }
  { Signed s; s.facts.body_sha256_hex = kEmpty; cr_expect_eq(code(s.check()), std::string("invalid_signature")); }
  { Signed s; s.facts.path = "/api/v1/members/"; cr_expect_eq(code(s.check()), std::string("invalid_signature")); }
  { Signed s; s.facts.path = "/api/v1/Members"; cr_expect_eq(code(s.check()), std::string("invalid_signature")); }
  { Signed s; s.facts.path = "/api/v1/%6Dembers"; cr_expect_eq(code(s.check()), std::string("invalid_signature")); }
  { Signed s; s.facts.method = "PUT"; cr_expect_eq(code(s.check()), std::string("invalid_signature")); }
  // Same instant, other spelling: the signature covers the header as sent.
  { Signed s; s.facts.timestamp = "2026-11-22T10:00:00.123+00:00"; cr_expect_eq(code(s.check()), std::string("invalid_signature")); }
  { Signed s; s.lookup = [](std::string_view) -> std::optional<KeyView> { return KeyView{"other", 7, "club-a"}; };
    cr_expect_eq(code(s.check()), std::string("invalid_signature")); }
}

Test(auth_core, order_and_messages) {
  const auto expect = [](Signed& s, const char* want, const char* mentions) {
    const Verdict v = s.check();
    cr_expect_eq(code(v), std::string(want), "%s", mentions);
    cr_expect(v.message.find(mentions) != std::string::npos, "[%s] lacks %s", v.message.c_str(), mentions);
    cr_expect(v.message.find(kSecret) == std::string::npos);
    cr_expect(v.message.find(s.sig.substr(3)) == std::string::npos);
  };
  { Signed s; s.facts.key_id.reset(); expect(s, "unauthorized", "X-MR-Key-Id"); cr_expect_eq(s.lookups, 0); }
  { Signed s; s.facts.key_id = ""; expect(s, "unauthorized", "X-MR-Key-Id"); }
  { Signed s; s.facts.key_id = "mrk_prd_a"; expect(s, "unauthorized", "X-MR-Key-Id"); cr_expect_eq(s.lookups, 1); }
  // An unknown key wins over everything after it.
  { Signed s; s.facts.key_id = "nope"; s.facts.timestamp.reset(); s.facts.idempotency_key.reset();
    expect(s, "unauthorized", "X-MR-Key-Id"); }
  { Signed s; s.facts.timestamp.reset(); expect(s, "invalid_request", "X-MR-Timestamp"); }
  { Signed s; s.facts.signature.reset(); expect(s, "invalid_request", "X-MR-Signature"); }
  { Signed s; s.facts.timestamp = "2026-11-22 10:00:00Z"; expect(s, "invalid_request", "X-MR-Timestamp"); }
  { Signed s; s.facts.idempotency_key.reset(); expect(s, "invalid_request", "X-MR-Idempotency-Key"); }
  { Signed s; s.facts.idempotency_key = ""; expect(s, "invalid_request", "X-MR-Idempotency-Key"); }
  { Signed s; s.facts.idempotency_key = "two words"; expect(s, "invalid_request", "X-MR-Idempotency-Key"); }
  { Signed s; s.facts.idempotency_key = std::string(256, 'k'); expect(s, "invalid_request", "X-MR-Idempotency-Key"); }
  { Signed s; s.facts.content_type.reset(); expect(s, "invalid_request", "Content-Type"); }
  { Signed s; s.facts.content_type = "application/x-www-form-urlencoded"; expect(s, "invalid_request", "Content-Type"); }
  // invalid_request wins over a stale timestamp and a bad signature.
  { Signed s; s.facts.content_type.reset(); s.facts.signature = "v1=bad";
    cr_expect_eq(code(s.check(at(kTs) + hours(1))), std::string("invalid_request")); }
  // stale_timestamp wins over a bad signature.
  { Signed s; s.facts.signature = "v1=bad";
    const Verdict v = s.check(at(kTs) + hours(1));
    cr_expect_eq(code(v), std::string("stale_timestamp"));
    cr_expect(v.message.find("X-MR-Timestamp") != std::string::npos); }
  { Signed s; s.facts.body_sha256_hex = kEmpty; expect(s, "invalid_signature", "X-MR-Signature"); }
}

Test(auth_core, get_needs_no_idempotency_key_or_content_type) {
  Signed s("GET");
  cr_expect(!s.facts.idempotency_key && !s.facts.content_type);
  cr_expect_eq(code(s.check()), std::string("ok"));
  // Only POST needs the idempotency key and a JSON content type.
  Signed d("DELETE");
  cr_expect_eq(code(d.check()), std::string("ok"));
}

// The canonical string upper-cases the method; check_request hashes it in
// pieces, copying only a method that is not upper-case already.
Test(auth_core, a_lower_case_method_is_signed_upper_case) {
  Signed s("get");
  cr_expect_eq(s.sig, sign(kSecret, canonical_string(kTs, "GET", s.path, kBodyHash)));
  cr_expect_eq(code(s.check()), std::string("ok"));
  s.sig = sign(kSecret, std::string(kTs) + "\nget\n" + s.path + "\n" + kBodyHash);
  s.facts.signature = s.sig;
  cr_expect_eq(code(s.check()), std::string("invalid_signature"));
}

// Both ways to key the HMAC (at catalogue load, or per call from the
// secret) give one verdict.
Test(auth_core, a_key_keyed_per_call_verifies_the_same) {
  const mr::HmacKey keyed(kSecret);
  for (const char* sig : {"ok", "bad"}) {
    Signed per_call, preloaded;
    if (std::string_view(sig) == "bad") per_call.facts.signature = preloaded.facts.signature = kVector;
    preloaded.lookup = [&keyed](std::string_view) -> std::optional<KeyView> {
      return KeyView{kSecret, 7, "club-a", &keyed};
    };
    const std::string want = std::string_view(sig) == "ok" ? "ok" : "invalid_signature";
    cr_expect_eq(code(per_call.check()), want, "%s", sig);
    cr_expect_eq(code(preloaded.check()), want, "%s", sig);
  }
}

Test(auth_core, content_types) {
  cr_expect(is_json_content_type("application/json"));
  cr_expect(is_json_content_type("application/json;charset=utf-8"));
  cr_expect(is_json_content_type("APPLICATION/JSON ; charset=UTF-8"));
  cr_expect(!is_json_content_type(""));
  cr_expect(!is_json_content_type("application/json-patch+json"));
  cr_expect(!is_json_content_type("application/problem+json"));
  cr_expect(!is_json_content_type("text/json"));
  cr_expect(idempotency_key_valid("~!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}"));
  cr_expect(!idempotency_key_valid("tab\there"));
  cr_expect(!idempotency_key_valid("caf\xc3\xa9"));
  cr_expect(!idempotency_key_valid(std::string_view("nul\0", 4)));
}
