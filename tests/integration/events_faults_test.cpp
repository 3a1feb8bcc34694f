// Contract section 10 under faults, on a stack of its own (a short retry
// schedule): while four clients settle with retries and the receiver is
// slow, failing or down, a worker is killed, nginx reloaded, PostgreSQL
// restarted (immediate) and a worker of the new generation killed. Then:
// every committed change has exactly one event, and every event reached the
// receiver at least once, signed, duplicates only under the same
// webhook-id with the same body.
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/retried_load.hpp"
#include "tests/integration/webhook_receiver.hpp"
#include "tests/integration/webhook_signature.hpp"

using namespace mr::test;

namespace {

void pause_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

Test(events_faults, every_change_one_event_every_event_delivered, .timeout = 300) {
  const std::string dir = env("MR_STACK_DIR");
  const std::string pg = pg_ctl(env("MR_PG_DATA"));
  const std::string kill_worker = "kill -9 $(pgrep -n -P $(cat '" + dir + "/nginx/logs/nginx.pid'))";

  // Slow now and then, a first 500 for every third event, and "down" (503)
  // while the flag is set.
  WebhookReceiver receiver;
  std::atomic<bool> down{false};
  std::atomic<int> seen{0};
  receiver.answer_with([&](const ReceivedHook& h) {
    HookAnswer a;
    const int n = seen++;
    if (down) a.status = 503;
    else if (n % 3 == 0) a.status = 500;
    if (n % 5 == 0) a.delay = std::chrono::milliseconds(300);
    (void)h;
    return a;
  });

  auto c = client("A");
  HttpResponse created = c.post("/api/v1/webhook-endpoints",
                                R"({"partnerRef":"club-a","url":")" + receiver.url() + R"("})", unique("we"));
  cr_assert_eq(created.status, 201, "%s", created.body.c_str());
  const std::string secret = s(data_of(created), "secret");
  cr_assert(secret.starts_with("whsec_"), "%s", secret.c_str());

  const auto members = onboard_members(c, "evf", 4);
  const std::string prefix = unique("evf");
  auto awards = plan_awards(members, 1000, prefix);
  std::atomic<int> acked{0};
  std::atomic<bool> never{false}, stop{false};
  std::thread load([&] { run_awards(awards, 4, {env("MR_BASE_URL")}, acked, never, &stop); });

  int rc[5];
  pause_ms(500);
  rc[0] = sh(kill_worker);
  pause_ms(400);
  down = true;
  rc[1] = sh(env("MR_RELOAD") + " >/dev/null");
  pause_ms(400);
  rc[2] = sh(pg + "-m immediate -w -l '" + dir + "/pg/postgres.log' restart >/dev/null");
  pause_ms(400);
  rc[3] = sh(kill_worker);
  pause_ms(400);
  down = false;
  pause_ms(400);
  rc[4] = 0;
  stop = true;
  load.join();
  for (int i = 0; i < 5; ++i) cr_expect_eq(rc[i], 0, "fault step %d failed", i);

  std::vector<Award> started;
  for (auto& a : awards) {
    if (a.attempts > 0) started.push_back(std::move(a));
  }
  cr_assert_gt(started.size(), 10u, "the load hardly ran");
  expect_each_applied_once(c, started, prefix);

  // Exactly one transaction.settled event per settled transaction, and none
  // for anything else of the prefix.
  const auto per_tx = psql_pairs(
      "SELECT data->>'externalTransactionId', count(*) FROM events WHERE type = 'transaction.settled' "
      "AND data->>'externalTransactionId' LIKE '" + prefix + "-%' GROUP BY 1");
  int wrong = 0;
  for (const auto& a : started) {
    auto it = per_tx.find(a.tx);
    if ((it == per_tx.end() || it->second != "1") && ++wrong <= 5) {
      cr_expect(false, "%s has %s events", a.tx.c_str(), it == per_tx.end() ? "no" : it->second.c_str());
    }
  }
  cr_expect_eq(wrong, 0);
  cr_expect_eq(per_tx.size(), started.size(), "%zu transactions with events, %zu settled", per_tx.size(),
               started.size());

  // Every event of the club (each with its own id) reaches the receiver.
  const auto ids = psql_pairs("SELECT event_id, type FROM events WHERE club_id = "
                              "(SELECT club_id FROM clubs WHERE partner_ref = 'club-a')");
  cr_assert_gt(ids.size(), started.size(), "events: %zu", ids.size());
  const bool all = receiver.wait_for(
      [&](const std::vector<ReceivedHook>& got) {
        std::set<std::string> have;
        for (const auto& h : got) {
          if (h.header("webhook-id").size()) have.insert(h.header("webhook-id"));
        }
        for (const auto& [id, type] : ids) {
          if (!have.contains(id)) return false;
        }
        return true;
      },
      std::chrono::seconds(120));
  const auto got = receiver.received();
  std::set<std::string> have;
  std::map<std::string, std::string> body_of;
  int bad_signature = 0, changed_body = 0, foreign = 0;
  for (const auto& h : got) {
    const std::string id = h.header("webhook-id"), ts = h.header("webhook-timestamp");
    have.insert(id);
    if (!ids.contains(id)) foreign++;
    bool ok = false;
    for (const auto& sig : signatures_of(h.header("webhook-signature"))) {
      ok = ok || sig == standard_webhooks_signature(secret, id, ts, h.body);
    }
    if (!ok && ++bad_signature <= 3) cr_expect(ok, "signature of %s does not verify", id.c_str());
    auto [it, fresh] = body_of.emplace(id, h.body);
    if (!fresh && it->second != h.body) changed_body++;
    cr_expect_eq(h.header("content-type"), "application/json");
    cr_expect_eq(h.method, "POST");
  }
  int missing = 0;
  for (const auto& [id, type] : ids) {
    if (!have.contains(id) && ++missing <= 5) cr_expect(false, "event %s (%s) never arrived", id.c_str(), type.c_str());
  }
  cr_expect(all, "not every event arrived within 120 s: %d missing of %zu", missing, ids.size());
  cr_expect_eq(bad_signature, 0);
  cr_expect_eq(changed_body, 0, "a retry under one webhook-id sent another body");
  cr_expect_eq(foreign, 0, "%d requests for events not of this club", foreign);
  cr_expect_gt(got.size(), ids.size(), "the failures caused retries (%zu requests, %zu events)", got.size(),
               ids.size());
  const std::string faults = error_log_faults(dir, 0);
  cr_expect(faults.empty(), "nginx error log:\n%s", faults.c_str());
}
