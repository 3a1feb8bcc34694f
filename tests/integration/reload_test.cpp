// Keys take effect on reload; a reload that cannot read the database keeps
// the running configuration serving (contract 2).
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/stack_env.hpp"

using mr::test::client;
using mr::test::env;
using mr::test::eventually;

// Reloads nginx and waits until its new workers serve alone, or the test stops.
#define RELOAD()                                          \
  do {                                                    \
    const std::string failed_ = mr::test::reload();       \
    cr_assert(failed_.empty(), "%s", failed_.c_str());    \
  } while (0)

namespace {
int sh(const std::string& cmd) { return std::system(cmd.c_str()); }
std::string mrctl() {
  // Flags rather than environment assignments, so xargs can run it too.
  return "'" + env("MR_MRCTL") + "' --dsn '" + env("MR_DSN") + "' --master-key '" + env("MR_MASTER_KEY_FILE") + "'";
}
}  // namespace

Test(reload, revoked_key_is_refused_after_reload) {
  auto c = client("REVOKE");
  const std::string p = "/api/v1/members/m1/balance";
  cr_assert_neq(mr::test::error_code(c.get(p)), std::string("unauthorized"));
  cr_assert_eq(sh(mrctl() + " key revoke --key-id " + env("MR_KEY_REVOKE_ID") + " >/dev/null"), 0);
  // Until the reload the running configuration still knows the key.
  cr_expect_neq(mr::test::error_code(c.get(p)), std::string("unauthorized"));
  RELOAD();
  EXPECT_ERROR(client("REVOKE").get(p), 401, "unauthorized");
  // Other keys are untouched.
  cr_expect_neq(mr::test::error_code(client("A").get(p)), std::string("unauthorized"));
}

Test(reload, issued_key_works_after_reload) {
  const std::string out_file = env("MR_STACK_DIR") + "/issued.json";
  cr_assert_eq(sh(mrctl() + " key issue --ref club-b --env sandbox > '" + out_file + "'"), 0);
  auto doc = mr::test::parse_json(mr::read_file(out_file));
  cr_assert(doc.HasMember("keyId") && doc.HasMember("secret"));
  mr::MrClient c(env("MR_BASE_URL"), doc["keyId"].GetString(), doc["secret"].GetString());
  const std::string p = "/api/v1/members/m1/balance";
  EXPECT_ERROR(c.get(p), 401, "unauthorized");
  RELOAD();
  cr_expect_neq(mr::test::error_code(c.get(p)), std::string("unauthorized"));
  cr_assert_eq(sh(mrctl() + " key revoke --key-id " + std::string(doc["keyId"].GetString()) + " >/dev/null"), 0);
}

Test(reload, database_down_keeps_old_configuration) {
  const std::string dir = env("MR_STACK_DIR");
  const std::string pg = "runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D '" + dir +
                         "/pg/data' ";
  const std::string error_log = dir + "/nginx/logs/error.log";
  const pid_t master = mr::test::nginx_master();
  std::ifstream log(error_log);
  log.seekg(0, std::ios::end);  // what the master writes from here on
  cr_assert_eq(sh(pg + "-m fast -w stop >/dev/null"), 0);
  // SIGHUP to the master directly: the master cannot read the database
  // and says so; it serves the keys of the last-known-good snapshot (a
  // snapshot refused too keeps the old cycle: catalogue_fallback_test).
  const int signal_rc = sh("kill -HUP " + std::to_string(master));
  std::string said;
  const bool logged = eventually(
      [&] {
        log.clear();  // past the end last time: read on from there
        said.append(std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>());
        return said.find("cannot load keys") != std::string::npos;
      },
      std::chrono::seconds(10));
  // The old configuration still authenticates, with the database down.
  const std::string code = mr::test::error_code(client("A").get("/api/v1/members/m1/balance"));
  const int start_rc = sh(pg + "-w -l '" + dir + "/pg/postgres.log' start >/dev/null");
  cr_assert_eq(start_rc, 0);
  cr_expect_eq(signal_rc, 0);
  cr_expect(logged, "the failed reload is not in the error log within 10 s: %s", said.c_str());
  cr_expect_neq(code, std::string("unauthorized"));
  cr_expect_neq(code, std::string("invalid_signature"));
}

Test(reload, under_load_nothing_lost_nothing_doubled) {
  // Four clients award points while nginx reloads twice: every request gets
  // its answer, and the balance is exactly the sum of the awards.
  auto c0 = client("A");
  const std::string id = mr::test::unique("reload");
  cr_assert_eq(c0.post("/api/v1/members",
                       R"({"partnerRef":"club-a","member":{"externalMemberId":")" + id +
                           R"(","firstName":"A","lastName":"B","email":"a@b.c"}})",
                       mr::test::unique("k")).status, 201);
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto c = client("A");
      for (int i = 0; !stop; ++i) {
        const std::string tx = "rl-" + id + "-" + std::to_string(t) + "-" + std::to_string(i);
        const std::string body =
            R"({"partnerRef":"club-a","eventId":"e","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":")" +
            id + R"("},"transaction":{"externalTransactionId":")" + tx +
            R"(","merchantId":"m","merchantName":"S","amountMinor":100,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"}})";
        // A retry with the same key is what a client does after a dropped
        // connection; it must never award twice.
        mr::HttpResponse r = c.post("/api/v1/transactions/settled", body, "k-" + tx);
        if (r.status == 0) r = c.post("/api/v1/transactions/settled", body, "k-" + tx);
        if (r.status == 200) ok++; else bad++;
      }
    });
  }
  // Some answers before each reload, and after it some from the new
  // workers alone (reload() returns once the old ones have exited).
  const auto answered = [&] { return ok.load() + bad.load(); };
  const auto answers_go_on = [&] {
    const int from = answered();
    return eventually([&] { return answered() >= from + 20; }, std::chrono::seconds(20));
  };
  const bool before = answers_go_on();
  const std::string r1 = mr::test::reload();
  const bool between = answers_go_on();
  const std::string r2 = mr::test::reload();
  const bool after = answers_go_on();
  stop = true;
  for (auto& th : threads) th.join();
  cr_expect(r1.empty(), "first reload: %s", r1.c_str());
  cr_expect(r2.empty(), "second reload: %s", r2.c_str());
  cr_expect(before && between && after, "the load stalled (before %d, between %d, after %d)", before, between, after);
  cr_expect_eq(bad.load(), 0, "%d requests failed across the reloads", bad.load());
  auto bal = mr::parse_json(c0.get("/api/v1/members/" + id + "/balance").body);
  cr_assert(bal.IsObject() && bal.HasMember("data"));
  cr_expect_eq(bal["data"]["pointsBalance"].GetInt64(), static_cast<std::int64_t>(ok.load()),
               "one point per processed award");
}

// A master key file that group or others may read is refused by nginx -t,
// and a reload with it keeps the running one.
Test(reload, open_master_key_file_is_refused) {
  const std::string key = env("MR_MASTER_KEY_FILE"), dir = env("MR_STACK_DIR") + "/nginx";
  const std::string test_conf = mr::test::nginx_command() + " -t -p '" + dir + "' -c '" + dir + "/nginx.conf' -e '" +
                                dir + "/logs/error.log' > '" + dir + "/t.out' 2>&1";
  cr_assert_eq(sh("chmod 644 '" + key + "'"), 0);
  const int refused = sh(test_conf);
  const std::string said = mr::read_file(dir + "/t.out");
  cr_assert_eq(sh("chmod 600 '" + key + "'"), 0);
  cr_expect_neq(refused, 0, "nginx -t accepted a world-readable master key: %s", said.c_str());
  cr_expect(said.find("chmod 600") != std::string::npos, "%s", said.c_str());
  cr_expect_eq(sh(test_conf), 0, "%s", mr::read_file(dir + "/t.out").c_str());
}

// The node's counters live in a shared memory zone that a reload with the
// same modules keeps; the master writes the catalogue's figures at each load.
Test(reload, metrics_survive_a_reload) {
  auto outside = mr::MrClient(env("MR_BASE_URL"), "", "");
  for (int i = 0; i < 3; i++) cr_assert_eq(outside.send("GET", "/", "", {}).status, 404);
  const std::string before = mr::test::scrape();
  const std::string not_found = mr::test::requests_series("other", 404, "not_found");
  cr_assert_geq(mr::test::metric(before, not_found), 3);
  RELOAD();  // the master loads the catalogue before it starts the new workers
  const std::string after = mr::test::scrape();
  cr_expect_geq(mr::test::metric(after, not_found), mr::test::metric(before, not_found), "counters kept");
  cr_expect_gt(mr::test::metric(after, "mr_catalogue_loaded_timestamp_seconds"),
               mr::test::metric(before, "mr_catalogue_loaded_timestamp_seconds"), "the reload loaded the catalogue");
  cr_expect_geq(mr::test::metric(after, "mr_catalogue_keys"), 1);
}

// The operator guide's rotation: a second key beside the first, a third
// refused, traffic moved over, the old key revoked; a retry sent with the
// new key after the switch replays what the old key's request got
// (idempotency belongs to the club, not the key).
Test(reload, key_rotation_as_the_operator_guide_says) {
  const std::string ref = mr::test::unique("rot");
  cr_assert_eq(sh(mrctl() + " club create --ref " + ref + " --name Rot --earn-rate-bp 100 --payout-currency GBP "
                  "--currencies GBP >/dev/null"), 0);
  const std::string dir = env("MR_STACK_DIR");
  const auto issue = [&](const std::string& file) {
    return sh(mrctl() + " key issue --ref " + ref + " --env sandbox > '" + dir + "/" + file + "' 2>/dev/null");
  };
  cr_assert_eq(issue(ref + "-old.json"), 0);
  cr_assert_eq(issue(ref + "-new.json"), 0);
  cr_expect_neq(issue(ref + "-third.json"), 0, "a third active key per environment must be refused");
  auto old_doc = mr::test::parse_json(mr::read_file(dir + "/" + ref + "-old.json"));
  auto new_doc = mr::test::parse_json(mr::read_file(dir + "/" + ref + "-new.json"));
  const std::string old_id = old_doc["keyId"].GetString();
  mr::MrClient old_key(env("MR_BASE_URL"), old_id, old_doc["secret"].GetString());
  mr::MrClient new_key(env("MR_BASE_URL"), new_doc["keyId"].GetString(), new_doc["secret"].GetString());
  RELOAD();

  const std::string body = R"({"partnerRef":")" + ref + R"(","member":{"externalMemberId":"m-rot","firstName":"A",)"
                           R"("lastName":"B","email":"a@b.c"}})";
  const std::string idem = mr::test::unique("rot-idem");
  const auto first = old_key.post("/api/v1/members", body, idem);
  cr_assert_eq(first.status, 201, "%s", first.body.c_str());
  cr_expect_eq(new_key.get("/api/v1/members/m-rot/balance").status, 200);

  cr_assert_eq(sh(mrctl() + " key revoke --key-id " + old_id + " >/dev/null"), 0);
  RELOAD();
  EXPECT_ERROR(old_key.get("/api/v1/members/m-rot/balance"), 401, "unauthorized");
  const auto again = new_key.post("/api/v1/members", body, idem);
  cr_expect_eq(again.status, 201, "%s", again.body.c_str());
  cr_expect_eq(mr::test::header(again, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_eq(again.body, first.body);
}
