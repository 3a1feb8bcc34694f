// Pods: a directory in the catalogue sends each club to its pod.
// Two pods on one machine: "home" (a database of this test's own in the
// fixture's PostgreSQL, which is also the catalogue) and "b" (a PostgreSQL
// cluster of its own, tools/pod-cluster.sh). Each club's
// settles and reads land in its pod and nowhere else; /readyz names every
// pod; with pod b's server gone, b's clubs get 503 while home's see no
// error at all; b's clubs are served again once it is back, without a
// reload.
#include <criterion/criterion.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/own_node.hpp"
#include "tests/integration/pod_stack.hpp"
#include "tests/integration/webhook_receiver.hpp"

namespace {

using namespace mr::test;
using namespace std::chrono_literals;

// A settle of 10.00 GBP (10 points at 100 bp): its status (200 when awarded).
long settle(mr::MrClient& c, const std::string& ref, const std::string& member) {
  const std::string tx = unique("tx");
  return c.post("/api/v1/transactions/settled", settle_body(ref, member, tx, 1000), unique("idem")).status;
}

}  // namespace

Test(pods, each_club_in_its_pod_and_one_pods_outage_is_its_clubs_only, .timeout = 240) {
  Database home("pods_home");
  cr_assert_eq(home.migrate().rc, 0);
  const PodCluster b;
  // Pod b carries the whole schema too; the directory refuses a pod whose
  // schema is behind the modules'.
  b.add_to(home.dsn());
  const Club h = make_club(home.dsn(), "pod-home-club", "");
  const Club x = make_club(home.dsn(), "pod-b-club",
                           "--pod b --redemption-rate-minor 1 --payout-currency GBP --min-redemption 10");
  mrctl(home.dsn(), "capacity topup --ref pod-b-club --minor 1000000");
  // The club's row is in both databases with one id; its books only in b.
  const std::string id_x = psql_value(home.dsn(), "SELECT club_id FROM clubs WHERE partner_ref = 'pod-b-club'");
  cr_expect_eq(psql_value(b.conninfo, "SELECT club_id FROM clubs WHERE partner_ref = 'pod-b-club'"), id_x);
  cr_expect_eq(psql_value(home.dsn(), "SELECT pod FROM clubs WHERE partner_ref = 'pod-b-club'"), std::string("b"));

  Node node(home_node_conf(home.dsn(), true));
  node.start();
  mr::MrClient ch(node.base_url(), h.key_id, h.secret), cx(node.base_url(), x.key_id, x.secret);

  // Each club's webhook endpoint is kept, and its events delivered, by its pod.
  WebhookReceiver hooks;
  for (auto* c : {&ch, &cx}) {
    const std::string ref = c == &ch ? h.ref : x.ref;
    add_endpoint(*c, ref, hooks.url("/" + ref));
  }
  cr_expect_eq(psql_value(b.conninfo, "SELECT count(*) FROM webhook_endpoints"), std::string("1"));
  cr_expect_eq(psql_value(home.dsn(), "SELECT count(*) FROM webhook_endpoints"), std::string("1"));

  // Each club's member, settles and reads land in its own pod.
  const std::string mh = onboard_member(ch, h.ref), mx = onboard_member(cx, x.ref);
  for (int i = 0; i < 5; ++i) {
    cr_assert_eq(settle(ch, h.ref, mh), 200);
    cr_assert_eq(settle(cx, x.ref, mx), 200);
  }
  cr_expect_eq(points_balance(ch, mh), 50);
  cr_expect_eq(points_balance(cx, mx), 50);
  const std::string count_of = "SELECT count(*) FROM ledger_entries e JOIN clubs c USING (club_id) WHERE c.partner_ref = ";
  cr_expect_eq(psql_value(home.dsn(), count_of + "'pod-home-club'"), std::string("5"));
  cr_expect_eq(psql_value(home.dsn(), count_of + "'pod-b-club'"), std::string("0"));
  cr_expect_eq(psql_value(b.conninfo, count_of + "'pod-b-club'"), std::string("5"));
  cr_expect_eq(psql_value(b.conninfo, count_of + "'pod-home-club'"), std::string("0"));
  // A member is known in its club's pod only: the other club cannot see it.
  cr_expect_eq(cx.get("/api/v1/members/" + mh + "/balance").status, 404);
  // One member event and five settles each, delivered from each pod to its
  // club's endpoint only.
  const auto six_each = [](const std::vector<ReceivedHook>& got) {
    const auto n = [&got](const std::string& target) {
      return std::count_if(got.begin(), got.end(), [&](const ReceivedHook& r) { return r.target == target; });
    };
    return n("/pod-home-club") >= 6 && n("/pod-b-club") >= 6;
  };
  cr_expect(hooks.wait_for(six_each, 30s), "deliveries: %zu\n%s", hooks.count(), node.log().c_str());
  for (const ReceivedHook& hook : hooks.received()) {
    const bool to_b = hook.target == "/pod-b-club";
    cr_expect(hook.body.find(to_b ? mx : mh) != std::string::npos, "%s got %s", hook.target.c_str(),
              hook.body.c_str());
    cr_expect(hook.body.find(to_b ? mh : mx) == std::string::npos, "%s got %s", hook.target.c_str(),
              hook.body.c_str());
  }

  // /readyz asks every pod.
  auto ready = node.ops_get("/readyz");
  cr_expect_eq(ready.status, 200, "%s", ready.body.c_str());
  cr_expect(ready.body.find(R"({"pod":"home","status":"ready"})") != std::string::npos, "%s", ready.body.c_str());
  cr_expect(ready.body.find(R"({"pod":"b","status":"ready"})") != std::string::npos, "%s", ready.body.c_str());

  // A payout of pod b's club is completed through the ops listener, which
  // asks every pod: the one that holds it answers.
  const auto redeemed = cx.post("/api/v1/redemptions",
                                R"({"partnerRef":"pod-b-club","requestId":")" + unique("rq") +
                                    R"(","member":{"externalMemberId":")" + mx +
                                    R"("},"redemption":{"points":20,"currency":"GBP"}})",
                                unique("idem"));
  cr_assert_eq(redeemed.status, 202, "%s", redeemed.body.c_str());
  const std::string po = s(data_of(redeemed)["payout"], "payoutId");
  const auto succeeded = node.ops_post("/payouts/" + po + "/succeed");
  cr_expect_eq(succeeded.status, 200, "%s", succeeded.body.c_str());
  cr_expect_eq(psql_value(b.conninfo, "SELECT status FROM payouts WHERE payout_id = '" + po + "'"),
               std::string("succeeded"));
  const auto again = node.ops_post("/payouts/" + po + "/fail", R"({"reason":"late"})");
  cr_expect_eq(again.status, 409, "the holder's refusal, not another pod's 404: %s", again.body.c_str());
  // The ops listener's lists are every pod's: both clubs' endpoints, b's payout.
  const auto payouts = node.ops_get("/payouts?limit=10");
  cr_expect_eq(payouts.status, 200, "%s", payouts.body.c_str());
  cr_expect(payouts.body.find(po) != std::string::npos, "%s", payouts.body.c_str());
  const auto endpoints = node.ops_get("/webhooks");
  cr_expect(endpoints.body.find("\"partnerRef\":\"pod-b-club\"") != std::string::npos &&
                endpoints.body.find("\"partnerRef\":\"pod-home-club\"") != std::string::npos,
            "%s", endpoints.body.c_str());
  cr_expect_eq(node.ops_get("/webhooks/failures?limit=5").status, 200);
  const auto none = node.ops_post("/payouts/po_nothing/succeed");
  cr_expect_eq(none.status, 404, "%s", none.body.c_str());
  cr_expect_eq(points_balance(cx, mx), 30);

  // /metrics gives every pod's books, each sample with its pod; a club's
  // pool only from the pod that keeps it.
  auto metrics = node.ops_get("/metrics");
  cr_expect_eq(metrics.status, 200);
  for (const char* line : {"\nmr_books_up{pod=\"home\"} 1\n", "\nmr_books_up{pod=\"b\"} 1\n",
                           "\nmr_club_points_pool{partner_ref=\"pod-b-club\",pod=\"b\"} ",
                           "\nmr_club_points_pool{partner_ref=\"pod-home-club\",pod=\"home\"} ",
                           "\nmr_webhook_backlog{pod=\"b\"} "}) {
    cr_expect(metrics.body.find(line) != std::string::npos, "no %s in:\n%s", line, metrics.body.c_str());
  }
  cr_expect(metrics.body.find("partner_ref=\"pod-b-club\",pod=\"home\"") == std::string::npos, "%s",
            metrics.body.c_str());

  // Pod b's primary is gone: b's club is told to come back later, home's
  // club sees not one error, and /readyz names pod b.
  b.stop();
  int home_ok = 0, b_unavailable = 0;
  // The 503 tells the partner when to come back, as every 503 does.
  const std::string tx = unique("tx");
  const auto refused = cx.post("/api/v1/transactions/settled", settle_body(x.ref, mx, tx, 1000), unique("idem"));
  cr_expect_eq(refused.status, 503, "%s", refused.body.c_str());
  cr_expect_eq(header(refused, "retry-after"), std::string("1"));
  for (int i = 0; i < 20; ++i) {
    const long sh = settle(ch, h.ref, mh);
    cr_expect_eq(sh, 200, "home's club failed while pod b was down (%ld)", sh);
    home_ok += sh == 200;
    const long sx = settle(cx, x.ref, mx);
    cr_expect_eq(sx, 503, "pod b's club while its pod is down: %ld", sx);
    b_unavailable += sx == 503;
  }
  cr_expect_eq(home_ok, 20);
  cr_expect_eq(b_unavailable, 20);
  cr_expect_eq(points_balance(ch, mh), 250);
  // A list while pod b is down: refused, naming it, not silently short.
  const auto short_list = node.ops_get("/payouts");
  cr_expect_eq(short_list.status, 503, "%s", short_list.body.c_str());
  cr_expect(short_list.body.find("Pods not answering: b.") != std::string::npos, "%s", short_list.body.c_str());
  // A payout id while pod b is down: it may be there, so not a 404.
  cr_expect_eq(node.ops_post("/payouts/po_nothing/succeed").status, 503);
  ready = node.ops_get("/readyz");
  cr_expect_eq(ready.status, 503, "%s", ready.body.c_str());
  cr_expect(ready.body.find("pod b: The ledger database cannot be reached") != std::string::npos, "%s",
            ready.body.c_str());
  cr_expect(ready.body.find("pod home") == std::string::npos, "%s", ready.body.c_str());
  metrics = node.ops_get("/metrics");
  cr_expect_eq(metrics.status, 200);
  cr_expect(metrics.body.find("\nmr_books_up{pod=\"b\"} 0\n") != std::string::npos, "%s", metrics.body.c_str());
  cr_expect(metrics.body.find("\nmr_books_up{pod=\"home\"} 1\n") != std::string::npos, "%s", metrics.body.c_str());

  // Back: the pool reconnects by itself, no reload.
  b.start();
  cr_expect(eventually([&] { return settle(cx, x.ref, mx) == 200; }, 30s), "pod b's club not served again");
  cr_expect(eventually([&] { return node.ops_get("/readyz").status == 200; }, 30s));
  // Nothing of b's club ever reached home's books, outage included.
  cr_expect_eq(psql_value(home.dsn(), "SELECT count(*) FROM ledger_entries WHERE club_id = " + id_x), std::string("0"));
}

// The directory is read at reload: a club created in a new pod after nginx
// started is served from that pod once nginx reloads, and the sealed
// snapshot keeps the pods, so a reload with the catalogue down still routes.
Test(pods, a_new_pod_is_served_after_a_reload_and_kept_in_the_snapshot, .timeout = 240) {
  Database home("pods_reload");
  cr_assert_eq(home.migrate().rc, 0);
  const Club h = make_club(home.dsn(), "reload-home-club", "");
  Node node(home_node_conf(home.dsn()));
  node.start();

  const PodCluster b;
  b.add_to(home.dsn());
  const Club x = make_club(home.dsn(), "reload-b-club", "--pod b");
  mr::MrClient cx(node.base_url(), x.key_id, x.secret);
  cr_expect_eq(cx.get("/api/v1/club").status, 401, "a key issued after the last load is not known yet");

  cr_assert_eq(run(node.nginx("-s reload")).rc, 0);
  cr_assert(eventually([&] { return cx.get("/api/v1/club").status == 200; }, 30s), "%s", node.log().c_str());
  const std::string mx = onboard_member(cx, x.ref);
  cr_expect_eq(settle(cx, x.ref, mx), 200);
  cr_expect_eq(psql_value(b.conninfo, "SELECT count(*) FROM members"), std::string("1"));
  cr_expect_eq(psql_value(home.dsn(), "SELECT count(*) FROM members"), std::string("0"));

  // The catalogue's database gone (its connections refused): the reload
  // serves the snapshot, pods included.
  cr_assert_eq(run("psql '" + env("MR_DSN") + "' -XqAtc \"ALTER DATABASE " + home.name +
                   " WITH ALLOW_CONNECTIONS false\"").rc, 0);
  run("psql '" + env("MR_DSN") + "' -XqAtc \"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
      home.name + "'\"");
  cr_assert_eq(run(node.nginx("-s reload")).rc, 0);
  cr_expect(eventually([&] { return node.log().find("serving the") != std::string::npos; }, 30s), "%s",
            node.log().c_str());
  cr_expect(eventually([&] { return settle(cx, x.ref, mx) == 200; }, 30s),
            "pod b's club after a reload from the snapshot: %s", node.log().c_str());
  run("psql '" + env("MR_DSN") + "' -XqAtc \"ALTER DATABASE " + home.name + " WITH ALLOW_CONNECTIONS true\"");
  mr::MrClient ch(node.base_url(), h.key_id, h.secret);
  cr_expect(eventually([&] { return ch.get("/api/v1/club").status == 200; }, 30s), "home's club once it is back");
}
