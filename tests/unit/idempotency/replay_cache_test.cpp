// The worker's replay cache: what it keeps, for how long, and what it
// lets go when full.
#include <criterion/criterion.h>

#include <string>

#include "modules/idempotency/replay_cache.hpp"

using namespace mr::idempotency;

namespace {

Record done(std::string fingerprint, std::string body, std::int64_t expires_ms) {
  return Record{true, std::move(fingerprint), 201, std::move(body), expires_ms};
}

}  // namespace

Test(replay_cache, keeps_a_final_answer_until_its_record_expires) {
  ReplayCache cache(1 << 20);
  cache.put("mr:idem:1:a", done("f", R"({"ok":true})", 5000), 1000);
  const Record* kept = cache.find("mr:idem:1:a", 4999);
  cr_assert_not_null(kept);
  cr_expect(kept->done);
  cr_expect_eq(kept->status, 201);
  cr_expect_eq(kept->fingerprint, std::string("f"));
  cr_expect_eq(kept->body, std::string(R"({"ok":true})"));
  cr_expect_null(cache.find("mr:idem:2:a", 4999), "another club's key");
  cr_expect_null(cache.find("mr:idem:1:a", 5000), "gone when Redis drops the record");
  cr_expect_eq(cache.size(), 0u);
  cr_expect_eq(cache.bytes(), 0u);
}

Test(replay_cache, keeps_only_final_records_with_a_future_expiry) {
  ReplayCache cache(1 << 20);
  cache.put("pending", Record{false, "f", 0, "", 5000}, 1000);
  cache.put("no expiry", done("f", "{}", 0), 1000);
  cache.put("expired", done("f", "{}", 1000), 1000);
  cr_expect_eq(cache.size(), 0u);
}

Test(replay_cache, a_newer_record_replaces_the_kept_one) {
  ReplayCache cache(1 << 20);
  cache.put("k", done("f", "first", 5000), 1000);
  const std::size_t one = cache.bytes();
  cache.put("k", done("f", "again", 9000), 2000);
  cr_expect_eq(cache.size(), 1u);
  cr_expect_eq(cache.bytes(), one);
  cr_expect_eq(cache.find("k", 6000)->body, std::string("again"));
}

Test(replay_cache, full_it_lets_the_least_recently_used_go) {
  ReplayCache probe(1 << 20);
  probe.put("a", done("f", "{}", 9000), 0);
  const std::size_t entry = probe.bytes();
  ReplayCache cache(8 * entry);  // room for eight
  for (char c = 'a'; c < 'a' + 8; ++c) cache.put(std::string(1, c), done("f", "{}", 9000), 0);
  cr_expect_eq(cache.size(), 8u);
  cr_assert_not_null(cache.find("a", 1));  // used: now the most recent
  cache.put("i", done("f", "{}", 9000), 0);
  cr_expect_eq(cache.size(), 8u);
  cr_expect_leq(cache.bytes(), 8 * entry);
  cr_expect_not_null(cache.find("a", 1), "recently used, kept");
  cr_expect_null(cache.find("b", 1), "least recently used, let go");
  cr_expect_not_null(cache.find("c", 1));
  cr_expect_not_null(cache.find("i", 1));
}

Test(replay_cache, an_answer_too_big_for_its_share_is_not_kept) {
  ReplayCache cache(8000);
  cache.put("small", done("f", "{}", 9000), 0);
  cache.put("big", done("f", std::string(1000, 'x'), 9000), 0);
  cr_expect_null(cache.find("big", 1));
  cr_expect_not_null(cache.find("small", 1), "and it pushed nothing out");
}
