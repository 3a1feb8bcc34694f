// nginx's own errors are JSON too, on every path of the server (contract 1).
#include <set>
#include <string>
#include <vector>

#include "tests/integration/stack_env.hpp"

using mr::test::client;
using mr::test::env;

Test(error_pages, outside_api_is_not_found) {
  auto c = client("A");
  EXPECT_ERROR(c.send("GET", "/", "", {}), 404, "not_found");
  EXPECT_ERROR(c.send("GET", "/index.html", "", {}), 404, "not_found");
  EXPECT_ERROR(c.send("POST", "/anything", "{}", {{"Content-Type", "application/json"}}), 404,
               "not_found");
}

// Request ids are a random prefix per worker process plus that worker's
// counter (modules/common/request_id.hpp), not 16 fresh random bytes each:
// 200 answers over 8 connections carry 200 distinct ids of 32 lowercase hex
// digits under at most a few prefixes (2 workers; a reload may add some).
Test(error_pages, request_ids_unique_per_worker_prefix_and_counter) {
  std::set<std::string> ids, prefixes;
  for (int conn = 0; conn < 8; ++conn) {
    auto c = client("A");
    for (int i = 0; i < 25; ++i) {
      auto r = c.send("GET", "/nothing-here", "", {});
      EXPECT_ERROR(r, 404, "not_found");
      const std::string id = mr::test::header(r, "x-request-id");
      cr_expect_eq(id.size(), 32u, "id %s", id.c_str());
      cr_expect(id.find_first_not_of("0123456789abcdef") == std::string::npos, "id %s", id.c_str());
      ids.insert(id);
      prefixes.insert(id.substr(0, 16));
    }
  }
  cr_expect_eq(ids.size(), 200u, "request ids repeat");
  cr_expect(prefixes.size() <= 4, "%zu prefixes: ids are not prefix + counter", prefixes.size());
}

Test(error_pages, unsigned_api_request_meets_auth) {
  auto c = client("A");
  EXPECT_ERROR(c.send("GET", "/api/v1/members/m1/balance", "", {}), 401, "unauthorized");
  EXPECT_ERROR(c.send("GET", "/api/nothing", "", {}), 401, "unauthorized");
}

Test(error_pages, nginx_405_is_json) {
  auto c = client("A");
  EXPECT_ERROR(c.send("TRACE", "/api/v1/members", "", {}), 405, "method_not_allowed");
}

Test(error_pages, too_large_without_auth_is_json) {
  auto c = client("A");
  std::string big(20000, 'x');
  EXPECT_ERROR(c.send("POST", "/api/v1/members", big, {{"Content-Type", "application/json"}}), 413,
               "payload_too_large");
}

Test(error_pages, rate_limit_is_json_429) {
  // The production numbers (100 r/s, burst 200 per key) on a server of
  // their own: back-to-back signed requests with club B's key exceed them
  // (only verified requests count against a key). An unknown path is
  // answered after auth without the database, so requests come fast; up to
  // 5000, stopping at the first 429 past the burst.
  mr::MrClient c(env("MR_LIMITED_URL"), env("MR_KEY_B_ID"), env("MR_KEY_B_SECRET"));
  int limited = 0, other = 0;
  mr::HttpResponse last429;
  for (int i = 0; i < 5000 && limited == 0; ++i) {
    auto r = c.get("/api/v1/rate-limit-probe");
    if (r.status == 429) {
      ++limited;
      last429 = r;
    } else {
      ++other;
    }
  }
  cr_expect(other >= 200, "limited within the burst (%d)", other);
  cr_assert(limited > 0, "no 429 among %d requests", other);
  EXPECT_ERROR(last429, 429, "rate_limited");
  cr_expect_eq(mr::test::header(last429, "retry-after"), std::string("1"));
  // Answered by error_page's redirect to /mr-error, which clears every
  // module's ctx: the log line still names the verified key (the auth ctx
  // found in the request pool, modules/common redirected_ctx).
  const std::string line = mr::test::limited_log_line(mr::test::header(last429, "x-request-id"));
  cr_assert(!line.empty(), "no log line for the 429");
  cr_expect(line.find("\"keyId\":\"" + env("MR_KEY_B_ID") + "\"") != std::string::npos, "%s", line.c_str());
  cr_expect(line.find("\"status\":429") != std::string::npos, "%s", line.c_str());
}

Test(error_pages, nginx_request_errors_are_json) {
  auto c = client("A");
  // nginx's 414 (request line over large_client_header_buffers) answers as
  // the contract's invalid_request, 400.
  EXPECT_ERROR(c.send("GET", "/api/" + std::string(9000, 'a'), "", {}), 400, "invalid_request");
  // 501: a transfer coding nginx does not know.
  EXPECT_ERROR(c.send("POST", "/api/v1/members", "{}", {{"Transfer-Encoding", "gzip"}, {"Content-Type", "application/json"}}),
               501, "not_implemented");
}

Test(error_pages, unknown_path_404_is_not_kept_for_replay) {
  auto c = client("A");
  const std::string key = mr::test::unique("k");
  EXPECT_ERROR(c.post("/api/v1/membrs", "{}", key), 404, "not_found");
  // The path fixed, the same key: processed afresh, not a conflict.
  auto fixed = c.post("/api/v1/members", R"({"partnerRef":"club-a","member":{"externalMemberId":")" +
                                             mr::test::unique("m") + R"(","firstName":"A","lastName":"B","email":"a@b.c"}})",
                      key);
  cr_expect_eq(fixed.status, 201, "%s", fixed.body.c_str());
}
