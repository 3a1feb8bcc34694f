// Redis as an attacker on its network would use it: records it did not get
// from the edge are never replayed, and the edge authenticates (the
// fixture's Redis requires a password). Its own binary: idempotency_test
// flushes Redis while it runs.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {
const std::string kRef = "club-a";


std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  cr_assert(p != nullptr);
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The Redis key holding `idempotency_key`'s record and the stored value,
// once the edge has written it (as the answer goes out).
std::pair<std::string, std::string> stored_record(const std::string& idempotency_key) {
  std::string redis_key, stored;
  for (int i = 0; i < 50 && stored.find('{') == std::string::npos; ++i) {
    if (i > 0) usleep(20 * 1000);
    redis_key = capture(redis_cli() + "--scan --pattern 'mr:idem:*:" + idempotency_key + "'");
    if (!redis_key.empty()) stored = capture(redis_cli() + "GET '" + redis_key + "'");
  }
  return {redis_key, stored};
}

}  // namespace

// Redis wants a password and the edge gives it: records are written. (Before
// AUTH, every request went on without Redis.)
Test(redis_security, the_edge_authenticates_to_redis) {
  const std::string password_file = env("MR_REDIS_PASSWORD_FILE");
  cr_assert(!password_file.empty(), "the fixture's Redis has no password");
  const std::string without = capture("redis-cli -h 127.0.0.1 -p " + env("MR_REDIS_PORT") + " SET x y 2>&1");
  cr_expect(without.find("NOAUTH") != std::string::npos, "Redis served without a password: %s", without.c_str());
  auto c = client("A");
  const std::string key = unique("auth");
  auto r = c.post("/api/v1/members", member_body(kRef, unique("mem")), key);
  cr_assert_eq(r.status, 201, "%s", r.body.c_str());
  const auto [redis_key, stored] = stored_record(key);
  cr_expect(stored.find(R"("state":"done")") != std::string::npos, "no record kept: '%s'", stored.c_str());
}

// Redis records were trusted as stored: whoever reached Redis could plant a
// "done" answer that the edge replayed as ours. A record that does not
// verify now counts as absent, and the retry is answered from PostgreSQL.
Test(redis_security, forged_record_is_not_replayed) {
  auto c = client("A");
  const std::string id = onboard_member(c, kRef);
  const std::string key = unique("forge"), body = settle_body(kRef, id, unique("tx"), 5000);
  auto first = c.post("/api/v1/transactions/settled", body, key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  const auto [redis_key, stored] = stored_record(key);
  cr_assert(!redis_key.empty(), "no record for %s", key.c_str());
  const auto brace = stored.find('{');
  cr_assert(brace != std::string::npos, "%s", stored.c_str());
  // Keep whatever precedes the record (a seal), swap the answer for a forgery.
  rapidjson::Document record = mr::parse_json(stored.substr(brace));
  cr_assert(record.IsObject() && record.HasMember("body"), "%s", stored.c_str());
  const std::string forged_body = R"({"ok":true,"data":{"forged":true}})";
  record["body"].SetString(forged_body.c_str(), static_cast<rapidjson::SizeType>(forged_body.size()), record.GetAllocator());
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  record.Accept(w);
  char path[] = "/tmp/mr-forgeXXXXXX";
  const int fd = mkstemp(path);
  cr_assert(fd >= 0);
  const std::string forged = stored.substr(0, brace) + out.GetString();
  cr_assert_eq(write(fd, forged.data(), forged.size()), static_cast<ssize_t>(forged.size()));
  close(fd);
  cr_assert_eq(std::system((redis_cli() + "-x SET '" + redis_key + "' < " + path + " >/dev/null").c_str()), 0);
  unlink(path);

  // New workers: none holds the answer in its replay cache, so the retry
  // reads the forged record from Redis.
  cr_assert_eq(std::system(env("MR_RELOAD").c_str()), 0);
  auto retry = client("A").post("/api/v1/transactions/settled", body, key);
  cr_expect_eq(retry.status, 200, "%s", retry.body.c_str());
  cr_expect(retry.body.find("forged") == std::string::npos, "the forgery was replayed: %s", retry.body.c_str());
  cr_expect_eq(retry.body, first.body, "the database's kept answer");
  cr_expect_eq(header(retry, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_eq(points_balance(c, id), 50, "awarded once");
}

// A worker keeps final answers in its replay cache no longer than Redis
// keeps the record: the record carries the instant Redis drops it.
Test(redis_security, a_kept_answer_carries_when_redis_drops_it) {
  auto c = client("A");
  const std::string key = unique("expiry");
  auto r = c.post("/api/v1/members", member_body(kRef, unique("mem")), key);
  cr_assert_eq(r.status, 201, "%s", r.body.c_str());
  const auto [redis_key, stored] = stored_record(key);
  const auto brace = stored.find('{');
  cr_assert(brace != std::string::npos, "no record kept: '%s'", stored.c_str());
  rapidjson::Document record = mr::parse_json(stored.substr(brace));
  cr_assert(record.IsObject() && record.HasMember("expiresMs") && record["expiresMs"].IsInt64(), "%s",
            stored.c_str());
  const long long pttl = std::stoll(capture(redis_cli() + "PTTL '" + redis_key + "'"));
  const long long now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch()).count();
  const long long redis_drops_at = now_ms + pttl;
  cr_expect_gt(pttl, 0, "the record has no TTL in Redis");
  cr_expect_leq(std::llabs(record["expiresMs"].GetInt64() - redis_drops_at), 5000,
                "record expires at %lld, Redis drops it at %lld", static_cast<long long>(record["expiresMs"].GetInt64()),
                redis_drops_at);
}
