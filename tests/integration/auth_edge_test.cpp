// The auth edge through the real nginx (contract section 2): every rule with
// a passing and a failing case.
#include <chrono>
#include <string>
#include <vector>

#include "tests/integration/stack_env.hpp"

using mr::test::client;
using mr::test::env;
using Headers = std::vector<std::pair<std::string, std::string>>;

namespace {

const std::string kPath = "/api/v1/members";
const std::string kBody = R"({"partnerRef":"club-a","member":{"externalMemberId":"m1"}})";

// Passed the edge: whatever answers after auth (the ledger, or 501 before
// it lands) is not one of the edge's failures.
void expect_passed_edge(const mr::HttpResponse& r) {
  const std::string code = mr::test::error_code(r);
  for (const char* edge : {"unauthorized", "invalid_signature", "stale_timestamp"}) {
    cr_expect_neq(code, std::string(edge), "edge refused: %s", r.body.c_str());
  }
  cr_expect(r.status != 401, "status 401: %s", r.body.c_str());
  cr_expect(!mr::test::header(r, "x-request-id").empty());
}

Headers without(Headers h, const std::string& name) {
  std::erase_if(h, [&](const auto& kv) { return kv.first == name; });
  return h;
}

Headers with(Headers h, const std::string& name, const std::string& value) {
  h = without(std::move(h), name);
  h.emplace_back(name, value);
  return h;
}

Headers post_headers(mr::MrClient& c, const std::string& path, const std::string& body,
                     std::optional<std::string> ts = {}) {
  Headers h = c.signed_headers("POST", path, body, ts);
  h.emplace_back("Content-Type", "application/json");
  h.emplace_back("X-MR-Idempotency-Key", mr::test::unique("idem"));
  return h;
}

std::string shifted_now(std::chrono::seconds by) {
  return mr::rfc3339(std::chrono::system_clock::now() + by);
}

}  // namespace

Test(auth, signed_get_and_post_pass) {
  auto c = client("A");
  expect_passed_edge(c.get("/api/v1/members/m1/balance"));
  expect_passed_edge(c.post(kPath, kBody, mr::test::unique("idem")));
}

Test(auth, query_string_is_not_signed) {
  auto c = client("A");
  Headers h = c.signed_headers("GET", "/api/v1/members/m1/points", "");
  expect_passed_edge(c.send("GET", "/api/v1/members/m1/points?limit=5&filter=all", "", h));
}

Test(auth, body_changed_after_signing) {
  auto c = client("A");
  Headers h = post_headers(c, kPath, kBody);
  EXPECT_ERROR(c.send("POST", kPath, kBody + " ", h), 401, "invalid_signature");
  expect_passed_edge(c.send("POST", kPath, kBody, h));
}

Test(auth, path_changed_after_signing) {
  auto c = client("A");
  Headers h = c.signed_headers("GET", "/api/v1/members/m1/balance", "");
  EXPECT_ERROR(c.send("GET", "/api/v1/members/m2/balance", "", h), 401, "invalid_signature");
}

Test(auth, method_changed_after_signing) {
  auto c = client("A");
  Headers h = c.signed_headers("GET", kPath, "");
  h.emplace_back("Content-Type", "application/json");
  h.emplace_back("X-MR-Idempotency-Key", mr::test::unique("idem"));
  EXPECT_ERROR(c.send("POST", kPath, "", h), 401, "invalid_signature");
}

Test(auth, timestamp_window_both_ways) {
  auto c = client("A");
  const std::string p = "/api/v1/members/m1/balance";
  EXPECT_ERROR(c.send("GET", p, "", c.signed_headers("GET", p, "", shifted_now(-std::chrono::seconds(301)))),
               401, "stale_timestamp");
  EXPECT_ERROR(c.send("GET", p, "", c.signed_headers("GET", p, "", shifted_now(std::chrono::seconds(301)))),
               401, "stale_timestamp");
  expect_passed_edge(c.send("GET", p, "", c.signed_headers("GET", p, "", shifted_now(-std::chrono::seconds(290)))));
  expect_passed_edge(c.send("GET", p, "", c.signed_headers("GET", p, "", shifted_now(std::chrono::seconds(290)))));
}

Test(auth, timestamp_formats) {
  auto c = client("A");
  const std::string p = "/api/v1/members/m1/balance";
  const std::string now = mr::now_rfc3339();  // ...Z
  std::string plus = now.substr(0, now.size() - 1) + "+00:00";
  expect_passed_edge(c.send("GET", p, "", c.signed_headers("GET", p, "", plus)));
  EXPECT_ERROR(c.send("GET", p, "", c.signed_headers("GET", p, "", "yesterday")), 400,
               "invalid_request");
  std::string offset = now.substr(0, now.size() - 1) + "+01:00";
  EXPECT_ERROR(c.send("GET", p, "", c.signed_headers("GET", p, "", offset)), 400, "invalid_request");
}

Test(auth, every_missing_header) {
  auto c = client("A");
  Headers h = post_headers(c, kPath, kBody);
  EXPECT_ERROR(c.send("POST", kPath, kBody, without(h, "X-MR-Key-Id")), 401, "unauthorized");
  EXPECT_ERROR(c.send("POST", kPath, kBody, without(h, "X-MR-Timestamp")), 400, "invalid_request");
  EXPECT_ERROR(c.send("POST", kPath, kBody, without(h, "X-MR-Signature")), 400, "invalid_request");
  EXPECT_ERROR(c.send("POST", kPath, kBody, without(h, "X-MR-Idempotency-Key")), 400, "invalid_request");
  EXPECT_ERROR(c.send("POST", kPath, kBody, with(h, "Content-Type", "text/plain")), 400, "invalid_request");
  // A GET needs neither an idempotency key nor a content type.
  expect_passed_edge(c.send("GET", "/api/v1/members/m1/balance", "",
                            c.signed_headers("GET", "/api/v1/members/m1/balance", "")));
}

// Header names are case-insensitive (RFC 9110): the edge finds its headers
// however the client spells them.
Test(auth, header_names_in_any_case) {
  auto c = client("A");
  const auto respelled = [](Headers h, auto spell) {
    for (auto& kv : h) kv.first = spell(kv.first);
    return h;
  };
  const auto lower = [](std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return s;
  };
  const auto upper = [](std::string s) {
    for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return s;
  };
  expect_passed_edge(c.send("POST", kPath, kBody, respelled(post_headers(c, kPath, kBody), lower)));
  expect_passed_edge(c.send("POST", kPath, kBody, respelled(post_headers(c, kPath, kBody), upper)));
  // Still every header is read: a changed body fails its signature.
  EXPECT_ERROR(c.send("POST", kPath, kBody + " ", respelled(post_headers(c, kPath, kBody), lower)), 401,
               "invalid_signature");
  EXPECT_ERROR(c.send("POST", kPath, kBody, respelled(without(post_headers(c, kPath, kBody), "X-MR-Idempotency-Key"), lower)),
               400, "invalid_request");
}

Test(auth, order_of_checks) {
  auto c = client("A");
  // Unknown key wins over everything else.
  Headers h = post_headers(c, kPath, kBody, shifted_now(-std::chrono::seconds(1000)));
  EXPECT_ERROR(c.send("POST", kPath, kBody, with(without(h, "X-MR-Signature"), "X-MR-Key-Id", "mrk_sbx_nope")),
               401, "unauthorized");
  // A missing header wins over a stale timestamp.
  EXPECT_ERROR(c.send("POST", kPath, kBody, without(h, "X-MR-Signature")), 400, "invalid_request");
  // A stale timestamp wins over a bad signature.
  EXPECT_ERROR(c.send("POST", kPath, kBody + "x", h), 401, "stale_timestamp");
}

Test(auth, signature_format) {
  auto c = client("A");
  const std::string p = "/api/v1/members/m1/balance";
  Headers h = c.signed_headers("GET", p, "");
  std::string sig;
  for (auto& [k, v] : h) if (k == "X-MR-Signature") sig = v;
  std::string upper = sig;
  for (std::size_t i = 3; i < upper.size(); ++i) upper[i] = static_cast<char>(std::toupper(upper[i]));
  expect_passed_edge(c.send("GET", p, "", with(h, "X-MR-Signature", upper)));
  EXPECT_ERROR(c.send("GET", p, "", with(h, "X-MR-Signature", sig.substr(3))), 401, "invalid_signature");
  EXPECT_ERROR(c.send("GET", p, "", with(h, "X-MR-Signature", "v2=" + sig.substr(3))), 401, "invalid_signature");
  EXPECT_ERROR(c.send("GET", p, "", with(h, "X-MR-Signature", sig + "00")), 401, "invalid_signature");
}

Test(auth, wrong_secret_and_unknown_key) {
  mr::MrClient wrong(env("MR_BASE_URL"), env("MR_KEY_A_ID"), env("MR_KEY_B_SECRET"));
  EXPECT_ERROR(wrong.get("/api/v1/members/m1/balance"), 401, "invalid_signature");
  mr::MrClient unknown(env("MR_BASE_URL"), "mrk_sbx_doesnotexist", env("MR_KEY_A_SECRET"));
  EXPECT_ERROR(unknown.get("/api/v1/members/m1/balance"), 401, "unauthorized");
}

Test(auth, production_key_on_sandbox_server) {
  auto c = client("PRD");
  EXPECT_ERROR(c.get("/api/v1/members/m1/balance"), 401, "unauthorized");
}

Test(auth, club_id_in_query_string) {
  auto c = client("A");
  EXPECT_ERROR(c.get("/api/v1/members/m1/balance?clubId=7"), 400, "invalid_request");
}

Test(auth, body_over_16k) {
  auto c = client("A");
  std::string big = R"({"partnerRef":"club-a","pad":")" + std::string(16 * 1024, 'x') + "\"}";
  EXPECT_ERROR(c.post(kPath, big, mr::test::unique("idem")), 413, "payload_too_large");
  // Chunked: no Content-Length, the limit still holds while reading.
  Headers h = post_headers(c, kPath, big);
  h.emplace_back("Transfer-Encoding", "chunked");
  EXPECT_ERROR(c.send("POST", kPath, big, h), 413, "payload_too_large");
  // Exactly 16 KiB passes the edge.
  std::string fits = R"({"partnerRef":"club-a","pad":")";
  fits += std::string(16 * 1024 - fits.size() - 2, 'y') + "\"}";
  cr_assert_eq(fits.size(), 16u * 1024u);
  expect_passed_edge(c.post(kPath, fits, mr::test::unique("idem")));
}
