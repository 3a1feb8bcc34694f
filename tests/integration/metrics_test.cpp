// The node's counters at the ops listener's /metrics: what requests,
// idempotency outcomes, the pool and the catalogue add, the text as
// promtool checks it, and the traceparent in the JSON access log.
// Other tests run beside this one: counts are compared as at least.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"

using namespace mr::test;

namespace {

// The access log line of the request with this id (it is written just
// after the answer: waits a little for it).
std::string access_log_line(const std::string& request_id) {
  const std::string path = env("MR_STACK_DIR") + "/nginx/logs/access.log";
  for (int i = 0; i < 50; i++) {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
      if (line.find("\"requestId\":\"" + request_id + "\"") != std::string::npos) return line;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return {};
}

std::string field(const std::string& json_line, const char* name) {
  rapidjson::Document d = mr::parse_json(json_line);
  cr_assert(d.IsObject() && d.HasMember(name) && d[name].IsString(), "no %s in %s", name, json_line.c_str());
  return d[name].GetString();
}

}  // namespace

Test(metrics, requests_and_idempotency_outcomes_are_counted) {
  const std::string before = scrape();
  auto c = client("A");
  const std::string id = unique("met"), key = unique("idem");
  const std::string body = member_body("club-a", id);
  const auto first = c.post("/api/v1/members", body, key);
  cr_assert_eq(first.status, 201);
  const auto replay = c.post("/api/v1/members", body, key);
  cr_assert_eq(replay.status, 201, "replayed");
  // The access log tells the replay from the first answer ($mr_log_fields).
  const std::string first_line = access_log_line(header(first, "x-request-id"));
  const std::string replay_line = access_log_line(header(replay, "x-request-id"));
  cr_assert(!first_line.empty() && !replay_line.empty());
  cr_expect_eq(field(first_line, "idempotentReplay"), std::string(), "%s", first_line.c_str());
  cr_expect_eq(field(first_line, "idempotency"), std::string("claimed"), "%s", first_line.c_str());
  cr_expect_eq(field(replay_line, "idempotentReplay"), std::string("true"), "%s", replay_line.c_str());
  cr_expect_eq(field(replay_line, "idempotency"), std::string("replayed"), "%s", replay_line.c_str());
  EXPECT_ERROR(c.post("/api/v1/members", member_body("club-a", unique("other")), key), 422,
               "duplicate_idempotency_conflict");
  auto unsigned_client = mr::MrClient(env("MR_BASE_URL"), "", "");
  EXPECT_ERROR(unsigned_client.send("GET", "/api/v1/members/" + id + "/balance", "", {}), 401, "unauthorized");
  EXPECT_ERROR(c.get("/api/v1/nothing/here"), 404, "not_found");
  cr_assert_eq(c.get("/api/v1/members/" + id + "/balance").status, 200);
  const std::string after = scrape();

  const auto grew = [&](const std::string& series, double by) { EXPECT_GREW(before, after, series, by); };
  grew(requests_series("members_create", 201, "none"), 2);
  grew(requests_series("members_create", 422, "duplicate_idempotency_conflict"), 1);
  grew(requests_series("member_balance", 401, "unauthorized"), 1);
  grew(requests_series("member_balance", 200, "none"), 1);
  grew(requests_series("other", 404, "not_found"), 1);
  grew(requests_series("ops_metrics", 200, "none"), 1);  // the first scrape, counted once it was logged
  grew("mr_http_request_duration_seconds_count{route=\"members_create\"}", 3);
  grew("mr_http_request_duration_seconds_bucket{route=\"members_create\",le=\"+Inf\"}", 3);
  grew("mr_idempotency_requests_total{outcome=\"claimed\"}", 1);
  grew("mr_idempotency_requests_total{outcome=\"replayed\"}", 1);
  grew("mr_idempotency_requests_total{outcome=\"conflict\"}", 1);

  for (const char* pool : {"\nmr_ledger_pool_connections_in_use ", "\nmr_ledger_pool_queued ",
                           "\nmr_ledger_pool_timeouts_total ", "\nmr_ledger_pool_reconnects_total ",
                           "\nmr_ledger_batches_total ", "\nmr_ledger_batched_settles_total ",
                           "\nmr_ledger_batch_fallbacks_total ", "\nmr_ledger_write_batches_total ",
                           "\nmr_ledger_batched_writes_total "}) {
    cr_expect(after.find(pool) != std::string::npos, "no%s", pool);
  }
  cr_expect_geq(metric(after, "mr_catalogue_keys"), 1);
  cr_expect_gt(metric(after, "mr_catalogue_loaded_timestamp_seconds"), 1.7e9);
  cr_expect_eq(metric(after, "mr_books_up"), 1);
  cr_expect(after.find("mr_club_points_pool{partner_ref=\"club-a\"}") != std::string::npos);
  // Routes are a fixed set: a raw path never becomes a label.
  cr_expect(after.find("/api/") == std::string::npos && after.find(id) == std::string::npos);
}

Test(metrics, promtool_accepts_the_text) {
  // Some traffic first so that every kind of family has series.
  auto c = client("A");
  cr_assert_eq(post(c, "/api/v1/members", member_body("club-a", unique("prom"))).status, 201);
  const std::string text = scrape();
  const std::string file = env("MR_STACK_DIR") + "/metrics-" + std::to_string(::getpid()) + ".txt";
  {
    std::ofstream out(file);
    out << text;
  }
  const std::string cmd = "promtool check metrics < '" + file + "' > '" + file + ".out' 2>&1";
  const int rc = sh(cmd);
  cr_expect_eq(rc, 0, "promtool: %s", mr::read_file(file + ".out").c_str());
  std::remove(file.c_str());
  std::remove((file + ".out").c_str());
}

Test(metrics, traceparent_is_logged_beside_the_request_id) {
  auto c = mr::MrClient(env("MR_BASE_URL"), "", "");
  const std::string trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  auto r = c.send("GET", "/api/v1/members/x/balance", "", {{"traceparent", trace}});
  std::string line = access_log_line(header(r, "x-request-id"));
  cr_assert(!line.empty(), "no access log line for %s", header(r, "x-request-id").c_str());
  cr_expect_eq(field(line, "traceparent"), trace);
  cr_expect_eq(field(line, "routeName"), std::string("member_balance"));
  cr_expect_eq(field(line, "errorCode"), std::string("unauthorized"));
  // Invalid ones are ignored: upper case, all-zero trace id, version ff.
  for (const std::string bad : {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01",
                                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}) {
    auto bad_r = c.send("GET", "/api/v1/members/x/balance", "", {{"traceparent", bad}});
    line = access_log_line(header(bad_r, "x-request-id"));
    cr_assert(!line.empty());
    cr_expect_eq(field(line, "traceparent"), std::string(), "%s kept", bad.c_str());
  }
}
