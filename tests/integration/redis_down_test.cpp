// With Redis stopped, POSTs keep working on the database alone, exactly
// once (contract section 3). Serial: it stops the stack's Redis.
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/retried_load.hpp"

using namespace mr::test;

namespace {

// Whether the stack's Redis answers PING within `within`.
bool redis_answers(const char* within = "5") {
  return sh(redis_cli(std::string("timeout ") + within + " ") + "PING 2>/dev/null | grep -qx PONG") == 0;
}

std::int64_t bypassed(const std::string& metrics) {
  return static_cast<std::int64_t>(metric(metrics, "mr_idempotency_requests_total{outcome=\"bypassed\"}"));
}

}  // namespace

Test(redis_down, database_alone_is_exact) {
  auto c = client("A");
  const std::string id = unique("mem");
  cr_assert_eq(c.post("/api/v1/members", member_body("club-a", id), unique("k")).status, 201);
  const std::string before = scrape();
  sh(redis_cli() + "shutdown nosave >/dev/null 2>&1");
  cr_assert(eventually([] { return !redis_answers(); }, std::chrono::seconds(10)), "Redis is still up");

  const std::string key = unique("k"), body = settle_body("club-a", id, unique("tx"), 2000);
  auto first = c.post("/api/v1/transactions/settled", body, key);
  auto again = c.post("/api/v1/transactions/settled", body, key);
  auto conflict = c.post("/api/v1/transactions/settled", settle_body("club-a", id, unique("tx"), 1), key);
  auto bal = c.get("/api/v1/members/" + id + "/balance");
  const std::string during = scrape();

  // The stack's own configuration (port, password).
  cr_assert_eq(sh("redis-server '" + env("MR_REDIS_CONF") + "' >/dev/null"), 0);
  cr_assert(eventually([] { return redis_answers(); }, std::chrono::seconds(10)), "Redis did not come back");
  cr_expect_eq(first.status, 200, "%s", first.body.c_str());
  cr_expect_eq(again.status, 200);
  cr_expect_eq(again.body, first.body);
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  EXPECT_ERROR(conflict, 422, "duplicate_idempotency_conflict");
  cr_expect_eq(i64(data_of(bal), "pointsBalance"), 20);
  EXPECT_GREW(before, during, "mr_idempotency_requests_total{outcome=\"bypassed\"}", 3);
  cr_expect_geq(metric(during, "mr_redis_errors_total{kind=\"connect\"}") +
                    metric(during, "mr_redis_errors_total{kind=\"no_reply\"}") -
                    metric(before, "mr_redis_errors_total{kind=\"connect\"}") -
                    metric(before, "mr_redis_errors_total{kind=\"no_reply\"}"),
                3, "%s", during.c_str());
  // Redis back: the edge serves again (a new key is claimed and replayed).
  // Until the worker's Redis client is past its pause before reconnecting
  // (a second), a request goes on to the database alone: send until one
  // was claimed in Redis. Serial test: nothing else counts meanwhile.
  const std::string key2 = unique("k"), body2 = settle_body("club-a", id, unique("tx"), 1000);
  mr::HttpResponse r1;
  const auto claimed = [](const std::string& m) { return metric(m, "mr_idempotency_requests_total{outcome=\"claimed\"}"); };
  const bool through_redis = eventually(
      [&] {
        const std::string before_send = scrape();
        r1 = c.post("/api/v1/transactions/settled", body2, key2);
        return r1.status != 200 || claimed(scrape()) > claimed(before_send);
      },
      std::chrono::seconds(10), std::chrono::milliseconds(100));
  cr_expect(through_redis, "no request was claimed in Redis 10 s after it came back");
  cr_expect_eq(r1.status, 200, "%s", r1.body.c_str());
  const std::string before_replay = scrape();
  cr_expect_eq(c.post("/api/v1/transactions/settled", body2, key2).body, r1.body);
  EXPECT_GREW(before_replay, scrape(), "mr_idempotency_requests_total{outcome=\"replayed\"}", 1);
}

// A claim that Redis runs after its answer timed out (Redis busy for longer
// than mr_redis_timeout) is owned by no request: the request went on to the
// database. It must not hold the key until mr_idempotency_lock_ttl (60 s),
// answering idempotency_in_progress to every retry. Here, where no other
// test flushes Redis meanwhile.
Test(redis_down, a_claim_whose_answer_timed_out_does_not_hold_the_key) {
  auto c = client("A");
  const std::string id = onboard_member(c, "club-a");
  const std::string key = unique("k"), body = settle_body("club-a", id, unique("tx"), 3000);
  // A script keeps Redis busy for 1.5 s; the claim waits behind it. Busy:
  // a PING goes unanswered for 0.3 s (it answers within milliseconds
  // otherwise), which leaves more than a second of the script for the
  // claim, past mr_redis_timeout (200 ms).
  const std::string busy =
      "local t = redis.call('TIME') local t0 = t[1] * 1000000 + t[2] "
      "repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] - t0 > 1500000 return 1";
  const std::string before = scrape();
  cr_assert_eq(sh(redis_cli() + "EVAL \"" + busy + "\" 0 >/dev/null 2>&1 &"), 0);
  cr_assert(eventually([] { return !redis_answers("0.3"); }, std::chrono::seconds(10), std::chrono::milliseconds(10)),
            "the script never kept Redis busy");
  auto first = c.post("/api/v1/transactions/settled", body, key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  EXPECT_GREW(before, scrape(), "mr_redis_errors_total{kind=\"timeout\"}", 1);  // the case under test
  // Retries reach Redis again once the script is over and the worker's
  // client is past its pause before reconnecting; until then they go on to
  // the database alone (and get its replay). The retry that reached Redis
  // must find the key released, not held by the orphaned claim.
  mr::HttpResponse again;
  const bool through_redis = eventually(
      [&] {
        const std::string before_retry = scrape();
        again = c.post("/api/v1/transactions/settled", body, key);
        return again.status != 200 || bypassed(scrape()) == bypassed(before_retry);
      },
      std::chrono::seconds(15), std::chrono::milliseconds(100));
  cr_expect(through_redis, "every retry for 15 s went on without Redis");
  cr_expect_eq(again.status, 200, "%s", again.body.c_str());
  cr_expect_eq(again.body, first.body);
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_eq(points_balance(c, id), 30);
}

// With Redis stopped, a POST's signature still serves one idempotency key
// (contract section 2), decided in the write's own transaction: the same
// captured partial reversal under eight keys at once applies once, every
// other is invalid_signature, and its own key replays.
Test(redis_down, one_signature_under_many_keys_applies_once_on_the_database_alone) {
  auto c = client("A");
  const std::string id = onboard_member(c, "club-a");
  const std::string tx = unique("tx");
  cr_assert_eq(c.post("/api/v1/transactions/settled", settle_body("club-a", id, tx, 10000), unique("k")).status, 200);
  const std::string path = "/api/v1/transactions/reversed", body = reverse_body("club-a", id, tx, 1000);
  const mr::HeaderList captured = c.signed_headers("POST", path, body);
  const auto send = [&](mr::MrClient& ci, const std::string& key) {
    mr::HeaderList h = captured;
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("X-MR-Idempotency-Key", key);
    return ci.send("POST", path, body, h);
  };
  sh(redis_cli() + "shutdown nosave >/dev/null 2>&1");
  cr_assert(eventually([] { return !redis_answers(); }, std::chrono::seconds(10)), "Redis is still up");

  std::vector<std::string> keys;
  for (int i = 0; i < 8; ++i) keys.push_back(unique("k"));
  std::vector<mr::HttpResponse> answers(keys.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    threads.emplace_back([&, i] {
      auto ci = client("A");
      answers[i] = send(ci, keys[i]);
    });
  }
  for (auto& t : threads) t.join();
  int applied = 0, refused = 0;
  std::string applied_key, applied_body;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (answers[i].status == 200) {
      applied++;
      applied_key = keys[i];
      applied_body = answers[i].body;
    } else if (answers[i].status == 401 && error_code(answers[i]) == "invalid_signature") {
      refused++;
    } else {
      cr_expect(false, "unexpected %ld %s", answers[i].status, answers[i].body.c_str());
    }
  }
  auto replay = applied_key.empty() ? mr::HttpResponse{} : send(c, applied_key);
  auto another = send(c, unique("k"));
  const std::int64_t balance = points_balance(c, id);

  cr_assert_eq(sh("redis-server '" + env("MR_REDIS_CONF") + "' >/dev/null"), 0);
  cr_assert(eventually([] { return redis_answers(); }, std::chrono::seconds(10)), "Redis did not come back");
  cr_expect_eq(applied, 1, "%d applied", applied);
  cr_expect_eq(refused, 7, "%d refused", refused);
  cr_expect_eq(replay.status, 200);
  cr_expect_eq(replay.body, applied_body, "its own key replays from the database");
  cr_expect_eq(header(replay, "x-mr-idempotent-replay"), std::string("true"));
  EXPECT_ERROR(another, 401, "invalid_signature");
  cr_expect_eq(balance, 90, "reversed once");
}

namespace {
// One line a redis-cli command prints, without its newline.
std::string redis_line(const std::string& command) {
  std::string out = capture(redis_cli() + command);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}
}  // namespace

// The edge's own record of a signature (Redis, mr:sig:<key id>:<MAC hex>):
// it names the first idempotency key until the timestamp leaves the window
// (300 s here, plus the 30 s margin), and it alone refuses the signature
// under another key: a record planted for a request PostgreSQL never saw
// is answered invalid_signature at the edge, nothing applied. Here, where
// no other test flushes Redis meanwhile.
Test(redis_down, the_edge_keeps_each_signatures_key_and_refuses_another) {
  auto c = client("A");
  const std::string id = onboard_member(c, "club-a");
  const std::string tx = unique("tx");
  cr_assert_eq(c.post("/api/v1/transactions/settled", settle_body("club-a", id, tx, 10000), unique("k")).status, 200);
  // After a test that stopped Redis, a worker's client waits a second
  // before it reconnects, and requests meanwhile go on without Redis: send
  // until one was claimed there (each worker's client, both of them).
  const auto claimed = [](const std::string& m) { return metric(m, "mr_idempotency_requests_total{outcome=\"claimed\"}"); };
  int through_redis = 0;
  cr_assert(eventually(
                [&] {
                  const std::string before = scrape();
                  cr_assert_eq(c.post("/api/v1/members", member_body("club-a", id), unique("k")).status, 200);
                  if (claimed(scrape()) > claimed(before)) through_redis++;
                  return through_redis >= 4;
                },
                std::chrono::seconds(15), std::chrono::milliseconds(100)),
            "Redis did not serve claims again");
  const auto sig_key = [](const mr::HeaderList& h) {
    for (const auto& [name, value] : h) {
      if (name == "X-MR-Signature") return "mr:sig:" + env("MR_KEY_A_ID") + ":" + value.substr(3);
    }
    return std::string();
  };
  const auto send = [&](const std::string& path, const std::string& body, const mr::HeaderList& signed_headers,
                        const std::string& key) {
    mr::HeaderList h = signed_headers;
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("X-MR-Idempotency-Key", key);
    return c.send("POST", path, body, h);
  };
  const std::string path = "/api/v1/transactions/reversed";
  const std::string first_body = reverse_body("club-a", id, tx, 1000);
  const mr::HeaderList first = c.signed_headers("POST", path, first_body);
  const std::string key_a = unique("k");
  cr_assert_eq(send(path, first_body, first, key_a).status, 200);
  cr_expect_eq(redis_line("GET '" + sig_key(first) + "'"), key_a);
  const std::string ttl = redis_line("PTTL '" + sig_key(first) + "'");
  cr_expect(std::stoll(ttl) > 300'000 && std::stoll(ttl) <= 331'000, "PTTL %s", ttl.c_str());

  const std::string second_body = reverse_body("club-a", id, tx, 2000);
  const mr::HeaderList second = c.signed_headers("POST", path, second_body);
  cr_assert_eq(sh(redis_cli() + "SET '" + sig_key(second) + "' planted-key PX 60000 | grep -qx OK"), 0);
  EXPECT_ERROR(send(path, second_body, second, unique("k")), 401, "invalid_signature");
  cr_expect_eq(points_balance(c, id), 90, "the edge refused it: PostgreSQL never saw it");
  cr_expect_eq(redis_line("GET '" + sig_key(second) + "'"), "planted-key");
  // Under the key its record names, it goes on (and is applied).
  cr_expect_eq(send(path, second_body, second, "planted-key").status, 200);
  cr_expect_eq(points_balance(c, id), 70);
}
