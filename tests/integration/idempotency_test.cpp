// Idempotency through real nginx, Redis and PostgreSQL (contract section 3).
#include <atomic>
#include <cctype>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"

using namespace mr::test;

namespace {
const std::string kRef = "club-a";


}  // namespace

Test(idempotency, retry_after_success_replays_byte_for_byte) {
  auto c = client("A");
  const std::string id = onboard_member(c, kRef);
  const std::string key = unique("k"), body = settle_body(kRef, id, unique("tx"), 5000);
  auto first = c.post("/api/v1/transactions/settled", body, key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  cr_expect(header(first, "x-mr-idempotent-replay").empty());
  auto again = c.post("/api/v1/transactions/settled", body, key);
  cr_expect_eq(again.status, 200);
  cr_expect_eq(again.body, first.body);
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_neq(header(again, "x-request-id"), header(first, "x-request-id"));
  cr_expect_eq(points_balance(c, id), 50);
}

// A worker that stored an answer or read it back from Redis keeps it in its
// replay cache: later retries of the key are answered there, byte for byte
// as Redis would, conflicts included. Of the four retries below at most one
// reaches a worker that has not seen the key (two workers, one answered).
Test(idempotency, retries_are_answered_from_the_workers_replay_cache) {
  auto c = client("A");
  const std::string id = onboard_member(c, kRef);
  const std::string key = unique("k"), body = settle_body(kRef, id, unique("tx"), 3000);
  const std::string before = scrape();
  auto first = c.post("/api/v1/transactions/settled", body, key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  for (int i = 0; i < 3; ++i) {
    auto again = client("A").post("/api/v1/transactions/settled", body, key);
    cr_expect_eq(again.status, 200);
    cr_expect_eq(again.body, first.body);
    cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  }
  EXPECT_ERROR(client("A").post("/api/v1/transactions/settled", settle_body(kRef, id, unique("tx"), 1), key), 422,
               "duplicate_idempotency_conflict");
  const std::string after = scrape();
  EXPECT_GREW(before, after, "mr_idempotency_replay_cache_hits_total", 3);
  cr_expect_eq(points_balance(c, id), 30);
}

Test(idempotency, retry_after_business_rejection_replays_it) {
  auto c = client("A");
  const std::string key = unique("k"), body = settle_body(kRef, unique("ghost"), unique("tx"), 100);
  auto first = c.post("/api/v1/transactions/settled", body, key);
  EXPECT_ERROR(first, 404, "cardholder_not_found");
  auto again = c.post("/api/v1/transactions/settled", body, key);
  cr_expect_eq(again.status, 404);
  cr_expect_eq(again.body, first.body);
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
}

Test(idempotency, invalid_request_and_auth_failures_are_not_kept) {
  auto c = client("A");
  const std::string id = onboard_member(c, kRef);
  const std::string key = unique("k");
  const std::string good = settle_body(kRef, id, unique("tx"), 1000);
  std::string bad = good;
  bad.replace(bad.find("\"GBP\""), 5, "\"gbp\"");
  EXPECT_ERROR(c.post("/api/v1/transactions/settled", bad, key), 400, "invalid_request");
  // An auth failure with the same key (signed with the wrong secret).
  mr::MrClient wrong(env("MR_BASE_URL"), env("MR_KEY_A_ID"), env("MR_KEY_B_SECRET"));
  EXPECT_ERROR(wrong.post("/api/v1/transactions/settled", good, key), 401, "invalid_signature");
  auto fixed = c.post("/api/v1/transactions/settled", good, key);
  cr_expect_eq(fixed.status, 200, "%s", fixed.body.c_str());
  cr_expect(header(fixed, "x-mr-idempotent-replay").empty());
  cr_expect_eq(points_balance(c, id), 10);
}

Test(idempotency, changed_body_is_a_conflict) {
  auto c = client("A");
  const std::string id = onboard_member(c, kRef);
  const std::string key = unique("k");
  cr_assert_eq(c.post("/api/v1/transactions/settled", settle_body(kRef, id, unique("tx"), 1000), key).status, 200);
  EXPECT_ERROR(c.post("/api/v1/transactions/settled", settle_body(kRef, id, unique("tx"), 2000), key), 422,
               "duplicate_idempotency_conflict");
  // Reused on another endpoint: the path is part of the fingerprint.
  EXPECT_ERROR(c.post("/api/v1/members", member_body(kRef, id), key), 422, "duplicate_idempotency_conflict");
  cr_expect_eq(points_balance(c, id), 10);
}

Test(idempotency, another_clubs_record_is_never_seen) {
  auto a = client("A");
  auto b = client("B");
  const std::string key = unique("k");
  const std::string ida = onboard_member(a, kRef);
  cr_assert_eq(a.post("/api/v1/transactions/settled", settle_body(kRef, ida, unique("tx"), 1000), key).status, 200);
  const std::string idb = unique("mem");
  auto rb = b.post("/api/v1/members", member_body("club-b", idb), key);
  cr_expect_eq(rb.status, 201, "%s", rb.body.c_str());
  cr_expect(header(rb, "x-mr-idempotent-replay").empty());
}

Test(idempotency, retry_signed_with_the_clubs_other_key_replays) {
  // Scope is the club, not the API key. club-a's second sandbox key is the
  // REVOKE one; the reload test may revoke it, so tolerate unauthorized.
  auto a = client("A");
  const std::string id = onboard_member(a, kRef);
  const std::string key = unique("k"), body = settle_body(kRef, id, unique("tx"), 3000);
  auto first = a.post("/api/v1/transactions/settled", body, key);
  cr_assert_eq(first.status, 200);
  auto other = client("REVOKE").post("/api/v1/transactions/settled", body, key);
  if (other.status != 401) {
    cr_expect_eq(other.body, first.body, "%ld %s", other.status, other.body.c_str());
    cr_expect_eq(header(other, "x-mr-idempotent-replay"), std::string("true"));
  }
  cr_expect_eq(points_balance(a, id), 30);
}

namespace {
// 20 concurrent requests with one key: exactly one award; the others are
// replays or idempotency_in_progress.
void twenty_at_once(const std::string& label) {
  auto c0 = client("A");
  const std::string id = onboard_member(c0, kRef);
  const std::string key = unique("k"), body = settle_body(kRef, id, unique("tx"), 7000);
  std::atomic<int> fresh{0}, replayed{0}, in_progress{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 20; ++i) {
    threads.emplace_back([&] {
      auto c = client("A");
      auto r = c.post("/api/v1/transactions/settled", body, key);
      if (r.status == 200 && header(r, "x-mr-idempotent-replay").empty()) fresh++;
      else if (r.status == 200) replayed++;
      else if (error_code(r) == "idempotency_in_progress") in_progress++;
      else other++;
    });
  }
  for (auto& t : threads) t.join();
  cr_expect_eq(fresh.load(), 1, "%s: %d fresh answers", label.c_str(), fresh.load());
  cr_expect_eq(other.load(), 0, "%s: unexpected answers", label.c_str());
  cr_expect_eq(fresh + replayed + in_progress, 20);
  cr_expect_eq(points_balance(c0, id), 70, "%s: awarded more than once", label.c_str());
  // A retry afterwards replays.
  auto later = c0.post("/api/v1/transactions/settled", body, key);
  cr_expect_eq(later.status, 200);
  cr_expect_eq(header(later, "x-mr-idempotent-replay"), std::string("true"));
}
}  // namespace

Test(idempotency, twenty_concurrent_with_one_key) { twenty_at_once("redis up"); }

Test(idempotency, exact_after_redis_lost_its_data) {
  auto c = client("A");
  const std::string id = onboard_member(c, kRef);
  const std::string key = unique("k"), body = settle_body(kRef, id, unique("tx"), 4000);
  auto first = c.post("/api/v1/transactions/settled", body, key);
  cr_assert_eq(first.status, 200);
  cr_assert_eq(sh(redis_cli() + "FLUSHALL | grep -qx OK"), 0);
  auto again = c.post("/api/v1/transactions/settled", body, key);
  cr_expect_eq(again.status, 200);
  cr_expect_eq(again.body, first.body, "the database's record answers byte for byte");
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  EXPECT_ERROR(c.post("/api/v1/transactions/settled", settle_body(kRef, id, unique("tx"), 1), key), 422,
               "duplicate_idempotency_conflict");
  cr_expect_eq(points_balance(c, id), 40);
  cr_assert_eq(sh(redis_cli() + "FLUSHALL | grep -qx OK"), 0);
  twenty_at_once("after FLUSHALL");
}


namespace {
// The headers of one signed POST, to send again as captured, each time
// under the idempotency key given.
struct Captured {
  mr::HeaderList signed_headers;
  std::string path, body;
  HttpResponse send(MrClient& c, const std::string& key) const {
    mr::HeaderList h = signed_headers;
    h.emplace_back("Content-Type", "application/json");
    h.emplace_back("X-MR-Idempotency-Key", key);
    return c.send("POST", path, body, h);
  }
};

Captured capture_post(MrClient& c, const std::string& path, const std::string& body) {
  return Captured{c.signed_headers("POST", path, body), path, body};
}

std::size_t history_length(MrClient& c, const std::string& id) {
  auto r = c.get("/api/v1/members/" + id + "/transactions?limit=100");
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  return data_of(r)["entries"].GetArray().Size();
}
}  // namespace

// Contract section 2: a captured POST cannot be run again under another
// idempotency key. Its signature serves the first key while its timestamp
// is in the window; at the edge (Redis) and, once Redis lost it, in the
// write's own transaction (PostgreSQL). The edge's record alone is proved
// in redis_down_test, where no other test flushes Redis meanwhile.
Test(idempotency, a_signature_serves_one_idempotency_key) {
  auto c = client("A");
  const std::string id = onboard_member(c, kRef);
  const std::string tx = unique("tx");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, tx, 10000)).status, 200);
  const Captured partial = capture_post(c, "/api/v1/transactions/reversed", reverse_body(kRef, id, tx, 2500));
  const std::string key_a = unique("k"), key_b = unique("k"), key_c = unique("k");

  auto first = partial.send(c, key_a);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  cr_expect_eq(i64(data_of(first), "pointsReversed"), 25);
  cr_expect_eq(points_balance(c, id), 75);
  const std::size_t entries = history_length(c, id);
  auto other = partial.send(c, key_b);
  EXPECT_ERROR(other, 401, "invalid_signature");
  cr_expect_eq(header(other, "content-type"), std::string("application/json"));
  cr_expect(header(other, "x-mr-idempotent-replay").empty());
  cr_expect_eq(points_balance(c, id), 75, "the books are unchanged");
  cr_expect_eq(history_length(c, id), entries);

  // The MAC's bytes, not the header's text: the same signature in upper case.
  Captured upper = partial;
  for (auto& [name, value] : upper.signed_headers) {
    if (name == "X-MR-Signature") {
      for (std::size_t i = 3; i < value.size(); ++i) value[i] = static_cast<char>(std::toupper(value[i]));
    }
  }
  EXPECT_ERROR(upper.send(c, unique("k")), 401, "invalid_signature");

  auto again = partial.send(c, key_a);
  cr_expect_eq(again.status, 200);
  cr_expect_eq(again.body, first.body);
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));

  // Redis loses everything: PostgreSQL's record still holds the signature.
  cr_assert_eq(sh(redis_cli() + "FLUSHALL | grep -qx OK"), 0);
  auto after_flush = partial.send(c, key_c);
  EXPECT_ERROR(after_flush, 401, "invalid_signature");
  cr_expect_eq(points_balance(c, id), 75, "the books are unchanged after FLUSHALL");
  cr_expect_eq(history_length(c, id), entries);
  // And the first key still replays, from the database.
  cr_assert_eq(sh(redis_cli() + "FLUSHALL | grep -qx OK"), 0);
  auto replay = partial.send(c, key_a);
  cr_expect_eq(replay.status, 200);
  cr_expect_eq(replay.body, first.body);
  cr_expect_eq(header(replay, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_eq(points_balance(c, id), 75);
}

// The same captured request under eight keys at once: exactly one applies,
// every other is invalid_signature, decided by Redis's claim script (with
// Redis stopped, by PostgreSQL alone: redis_down_test).
Test(idempotency, one_signature_under_many_keys_at_once_applies_once) {
  auto c = client("A");
  const std::string id = onboard_member(c, kRef);
  const std::string tx = unique("tx");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body(kRef, id, tx, 10000)).status, 200);
  const Captured partial = capture_post(c, "/api/v1/transactions/reversed", reverse_body(kRef, id, tx, 1000));
  std::atomic<int> applied{0}, refused{0}, other{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto ci = client("A");
      auto r = partial.send(ci, unique("k"));
      if (r.status == 200) applied++;
      else if (r.status == 401 && error_code(r) == "invalid_signature") refused++;
      else other++;
    });
  }
  for (auto& t : threads) t.join();
  cr_expect_eq(applied.load(), 1, "%d applied", applied.load());
  cr_expect_eq(refused.load(), 7, "%d refused", refused.load());
  cr_expect_eq(other.load(), 0);
  cr_expect_eq(points_balance(c, id), 90, "reversed once");
}
