// Least privilege (migration 017_least_privilege.sql, mr_apply_privileges):
// nginx logging into PostgreSQL as the API role of `mrctl roles setup`
// serves every endpoint of the partner API and of the ops listener, and
// runs webhook delivery, the payout simulator and settle batches; as that
// role psql can neither change the ledger's history, the schema nor the
// catalogue's keys (PostgreSQL's own `permission denied`); later
// migrations keep the grants (mrctl migrate puts back what one undid).
// Each test has a database and two roles of its own on the fixture's
// PostgreSQL, and nginx of its own (own_node.hpp).
#include <libpq-fe.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/own_node.hpp"
#include "tests/integration/webhook_receiver.hpp"

using namespace mr::test;

namespace {

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The owner and API roles of one test: declared before its Database, so
// that the database (which the owner owns) is dropped first.
struct Roles {
  std::string owner, api;
  explicit Roles(const std::string& what)
      : owner("lp_owner_" + what + "_" + std::to_string(::getpid())),
        api("lp_api_" + what + "_" + std::to_string(::getpid())) {}
  ~Roles() { run("psql " + quoted(env("MR_DSN")) + " -XqAtc " + quoted("DROP ROLE IF EXISTS " + owner + ", " + api)); }
  Roles(const Roles&) = delete;
  Roles& operator=(const Roles&) = delete;
};

// `dsn` logging in as `role`.
std::string as(std::string dsn, const std::string& role) {
  const auto at = dsn.find("user=postgres");
  cr_assert(at != std::string::npos, "%s", dsn.c_str());
  return dsn.replace(at, 13, "user=" + role);
}

Run psql(const std::string& dsn, const std::string& sql) {
  return run("psql " + quoted(dsn) + " -XAtq -v ON_ERROR_STOP=1 -c " + quoted(sql));
}

std::string psql_value(const std::string& dsn, const std::string& sql) {
  Run r = psql(dsn, sql);
  cr_assert_eq(r.rc, 0, "%s: %s", sql.c_str(), r.out.c_str());
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

Run mrctl(const std::string& dsn, const std::string& args) {
  return run(quoted(env("MR_MRCTL")) + " " + args + " --dsn " + quoted(dsn) + " --master-key " +
             quoted(env("MR_MASTER_KEY_FILE")));
}

rapidjson::Document mrctl_json(const std::string& dsn, const std::string& args) {
  const Run r = mrctl(dsn, args);
  cr_assert_eq(r.rc, 0, "mrctl %s: %s", args.c_str(), r.out.c_str());
  auto d = parse_json(r.out);
  cr_assert(d.IsObject(), "mrctl %s: %s", args.c_str(), r.out.c_str());
  return d;
}

// A database migrated by the superuser and set up with the test's roles.
void migrate_and_set_up(const Database& db, const Roles& roles, const std::string& migrate_args = "") {
  const Run m = db.migrate(migrate_args);
  cr_assert_eq(m.rc, 0, "%s", m.out.c_str());
  auto d = mrctl_json(db.dsn(), "roles setup --owner-role " + roles.owner + " --api-role " + roles.api);
  cr_assert(d["databases"].IsArray() && d["databases"].Size() == 1 && d["databases"][0]["pod"] == "home");
}

std::string member_cmd(const std::string& ref, const std::string& id) {
  return Json().str("partnerRef", ref).str("externalMemberId", id).str("firstName", "Ada").str("lastName", "L")
      .str("email", "ada@example.com").done();
}

std::string settle_cmd(const std::string& ref, const std::string& member, const std::string& tx) {
  return Json().str("partnerRef", ref).str("externalMemberId", member).str("eventId", "e-" + tx)
      .str("externalTransactionId", tx).str("merchantId", "m").str("merchantName", "Shop").num("amountMinor", 10000)
      .str("currency", "GBP").str("occurredAt", "2026-11-20T10:00:00Z").str("settledAt", "2026-11-20T10:00:01Z")
      .done();
}

// mr_write as the ledger calls it, from psql.
std::string write_sql(const std::string& op, const std::string& club_id, const std::string& ref,
                      const std::string& key, const std::string& cmd) {
  return "SELECT mr_write('" + op + "', " + club_id + ", '" + ref + "', '" + key + "', md5('" + key + "'), 'req-" +
         key + "', '" + cmd + "'::jsonb) ->> 'outcome'";
}

// `sql` as `dsn`'s role fails with exactly PostgreSQL's `error`.
void expect_denied(const std::string& dsn, const std::string& sql, const std::string& error) {
  const Run r = psql(dsn, sql);
  cr_expect_neq(r.rc, 0, "%s succeeded: %s", sql.c_str(), r.out.c_str());
  cr_expect(r.out.find("ERROR:  " + error + "\n") != std::string::npos, "%s: want \"%s\", got %s", sql.c_str(),
            error.c_str(), r.out.c_str());
}

// What the API role must never do, each refused by PostgreSQL itself.
void expect_history_and_schema_out_of_reach(const std::string& api_dsn, const Roles& roles) {
  const std::string entries = "permission denied for table ledger_entries";
  expect_denied(api_dsn, "UPDATE ledger_entries SET delta_available = delta_available + 1000", entries);
  expect_denied(api_dsn, "DELETE FROM ledger_entries", entries);
  expect_denied(api_dsn, "TRUNCATE ledger_entries", entries);
  expect_denied(api_dsn,
                "INSERT INTO ledger_entries (entry_id, member_id, club_id, entry_type, description, delta_available, "
                "delta_reserved, group_ref, created_ms) SELECT 'le_x', member_id, club_id, 'manual_adjustment', 'x', "
                "1000, 0, 'x', 1 FROM members LIMIT 1",
                entries);
  expect_denied(api_dsn, "ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_append_only",
                "must be owner of table ledger_entries");
  expect_denied(api_dsn, "ALTER TABLE ledger_entries ADD COLUMN note text", "must be owner of table ledger_entries");
  expect_denied(api_dsn, "DROP TABLE ledger_entries", "must be owner of table ledger_entries");
  expect_denied(api_dsn, "DROP TABLE api_keys CASCADE", "must be owner of table api_keys");
  // The catalogue's keys: no new key, no revocation, no secret swapped.
  expect_denied(api_dsn,
                "INSERT INTO api_keys (key_id, club_id, environment, secret_sealed) "
                "SELECT 'mrk_sbx_planted', club_id, 'sandbox', '\\x00' FROM clubs LIMIT 1",
                "permission denied for table api_keys");
  expect_denied(api_dsn, "UPDATE api_keys SET secret_sealed = '\\x00'", "permission denied for table api_keys");
  expect_denied(api_dsn, "DELETE FROM api_keys", "permission denied for table api_keys");
  // The caches beside the history, and the clubs' books.
  expect_denied(api_dsn, "UPDATE members SET available = available + 1000", "permission denied for table members");
  expect_denied(api_dsn, "UPDATE clubs SET funded_points = funded_points + 1000", "permission denied for table clubs");
  expect_denied(api_dsn, "UPDATE club_pool_stripes SET points = points + 1000",
                "permission denied for table club_pool_stripes");
  // The operator's functions stay invoker: they stop at the tables.
  expect_denied(api_dsn, "SELECT mr_pool_topup(partner_ref, 1000) FROM clubs LIMIT 1",
                "permission denied for table clubs");
  expect_denied(api_dsn, "SELECT mr_apply_privileges()", "permission denied for function mr_apply_privileges");
  expect_denied(api_dsn, "ALTER FUNCTION mr_write(text, bigint, text, text, text, text, jsonb, bytea) SECURITY INVOKER",
                "must be owner of function mr_write");
  // Nothing new in the schema, no way to become the owner, and what it
  // never reads stays unread (bank details, stored answers).
  expect_denied(api_dsn, "CREATE TABLE planted (x int)", "permission denied for schema public");
  expect_denied(api_dsn, "SET ROLE " + roles.owner, "permission denied to set role \"" + roles.owner + "\"");
  expect_denied(api_dsn, "SELECT count(*) FROM wallets", "permission denied for table wallets");
  expect_denied(api_dsn, "SELECT count(*) FROM idempotency_records", "permission denied for table idempotency_records");
}

}  // namespace

namespace {

constexpr const char* kRef = "lp-club";

struct Key {
  std::string id, secret;
};

// The club and its key, made by mrctl logged in as the owner role.
Key seed_club(const std::string& owner_dsn) {
  mrctl_json(owner_dsn, std::string("club create --ref ") + kRef +
                            " --name LP --earn-rate-bp 100 --redemption-rate-minor 1 --payout-currency GBP "
                            "--currencies GBP --min-redemption 1");
  mrctl_json(owner_dsn, std::string("pool topup --ref ") + kRef + " --points 100000000");
  mrctl_json(owner_dsn, std::string("capacity topup --ref ") + kRef + " --minor 100000000");
  auto k = mrctl_json(owner_dsn, std::string("key issue --ref ") + kRef + " --env sandbox");
  return {k["keyId"].GetString(), k["secret"].GetString()};
}

std::string redeem_body(const std::string& member, std::int64_t points) {
  return mr::test::redeem_body(kRef, member, unique("rq"), points);
}

// A member whose payouts go to `account`, with 100 points.
std::string funded_member(MrClient& c, const std::string& account) {
  const std::string id = unique("lpm");
  const std::string body =
      Json().str("partnerRef", kRef)
          .raw("member", Json().str("externalMemberId", id).str("firstName", "Ada").str("lastName", "L")
                             .str("email", "ada@example.com")
                             .raw("wallet", Json().str("provider", "bank").str("walletRef", "w-" + id)
                                                .raw("bankAccount", Json().str("accountNumber", account)
                                                                        .str("sortCode", "112233")
                                                                        .str("name", "Ada L").done())
                                                .done())
                             .done())
          .done();
  auto r = post(c, "/api/v1/members", body);
  cr_assert_eq(r.status, 201, "%s", r.body.c_str());
  r = post(c, "/api/v1/transactions/settled", settle_body(kRef, id, unique("tx"), 10000));
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  return id;
}

HttpResponse ops(const Node& node, const std::string& method, const std::string& path, const std::string& body = "") {
  auto headers = ops_auth();
  if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
  return MrClient(node.ops_url(), "", "").send(method, path, body, headers);
}

// A session of the test's own (the superuser's) holding a member's row.
class RowLock {
 public:
  RowLock(const std::string& dsn, const std::string& member) : pg_(PQconnectdb(dsn.c_str()), PQfinish) {
    cr_assert_eq(PQstatus(pg_.get()), CONNECTION_OK, "%s", PQerrorMessage(pg_.get()));
    exec("BEGIN");
    exec("SELECT 1 FROM members WHERE external_id = '" + member + "' FOR UPDATE");
  }
  void release() { exec("COMMIT"); }

 private:
  void exec(const std::string& sql) {
    std::unique_ptr<PGresult, decltype(&PQclear)> r(PQexec(pg_.get(), sql.c_str()), PQclear);
    const auto st = PQresultStatus(r.get());
    cr_assert(st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK, "%s: %s", sql.c_str(), PQerrorMessage(pg_.get()));
  }
  std::unique_ptr<PGconn, decltype(&PQfinish)> pg_;
};

}  // namespace

// Every route of the partner API and of the ops listener, through nginx
// whose catalogue and ledger DSNs log in as the API role; webhook delivery
// (claims and reports), the payout simulator and a settle batch too; and
// none of it needed more: the error log holds no refusal.
Test(least_privilege, nginx_as_the_api_role_serves_every_endpoint) {
  Roles roles("serve");
  Database db("lpserve");
  migrate_and_set_up(db, roles);
  const Key key = seed_club(as(db.dsn(), roles.owner));
  const std::string api_dsn = as(db.dsn(), roles.api);

  WebhookReceiver receiver;
  NodeConf conf;
  conf.catalogue_dsn = api_dsn;
  conf.ledger_dsn = api_dsn;
  conf.webhooks = "mr_webhook_delivery on; mr_webhook_schedule 0 1s; mr_webhook_poll 1s; mr_webhook_timeout 2s;";
  // Three connections: two for the gated settles below, one for the rest.
  conf.http = "mr_ledger_pool_size 3; mr_ledger_settle_connections 2; mr_ledger_query_timeout 60s;\n"
              "  mr_test_helpers on;\n"
              "  mr_payout_simulator on; mr_payout_simulator_delay 2s;\n";
  Node node(conf);
  node.start();
  MrClient c(node.base_url(), key.id, key.secret);

  auto club = c.get("/api/v1/club");
  cr_assert_eq(club.status, 200, "%s", club.body.c_str());
  cr_expect_eq(s(data_of(club), "partnerRef"), kRef);

  // Webhook endpoint first: the writes below are delivered to it.
  auto created = post(c, "/api/v1/webhook-endpoints", Json().str("partnerRef", kRef).str("url", receiver.url()).done());
  cr_assert_eq(created.status, 201, "%s", created.body.c_str());
  const std::string endpoint = s(data_of(created), "endpointId");
  const std::string endpoint_path = "/api/v1/webhook-endpoints/" + endpoint;
  cr_expect_eq(c.get("/api/v1/webhook-endpoints").status, 200);
  cr_expect_eq(c.get(endpoint_path).status, 200);

  // Members, settles, a reversal, reads of the books.
  const std::string m1 = funded_member(c, "12345678");
  auto upsert = c.post("/api/v1/members", member_body(kRef, m1), unique("k"));
  cr_expect_eq(upsert.status, 200, "%s", upsert.body.c_str());
  const std::string tx = unique("tx");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body(kRef, m1, tx, 5000)).status, 200);
  auto reversed = post(c, "/api/v1/transactions/reversed", reverse_body(kRef, m1, tx, 1000));
  cr_expect_eq(reversed.status, 200, "%s", reversed.body.c_str());
  auto balance = c.get("/api/v1/members/" + m1 + "/balance");
  cr_assert_eq(balance.status, 200, "%s", balance.body.c_str());
  cr_expect_eq(i64(data_of(balance), "pointsBalance"), 100 + 50 - 10);
  auto points = c.get("/api/v1/members/" + m1 + "/points?limit=10");
  cr_expect_eq(points.status, 200, "%s", points.body.c_str());
  cr_expect_eq(data_of(points)["entries"].Size(), 3u, "%s", points.body.c_str());
  auto earned = c.get("/api/v1/members/" + m1 + "/points?filter=earned");
  cr_expect_eq(earned.status, 200, "%s", earned.body.c_str());
  cr_expect_eq(data_of(earned)["entries"].Size(), 2u, "%s", earned.body.c_str());
  auto history = c.get("/api/v1/members/" + m1 + "/transactions");
  cr_expect_eq(history.status, 200, "%s", history.body.c_str());
  cr_expect_eq(data_of(history)["entries"].Size(), 3u, "%s", history.body.c_str());

  // Redemptions: paid through the sandbox test helper, through the ops
  // listener, and failed by the simulator (account 00000000).
  auto r1 = post(c, "/api/v1/redemptions", redeem_body(m1, 10));
  cr_assert_eq(r1.status, 202, "%s", r1.body.c_str());
  const std::string rd1 = s(data_of(r1), "redemptionId");
  auto helper = post(c, "/api/v1/test-helpers/redemptions/" + rd1 + "/payout",
                     Json().str("partnerRef", kRef).str("outcome", "succeeded").done());
  cr_expect_eq(helper.status, 200, "%s", helper.body.c_str());
  auto r2 = post(c, "/api/v1/redemptions", redeem_body(m1, 10));
  cr_assert_eq(r2.status, 202, "%s", r2.body.c_str());
  const std::string po2 = s(data_of(r2)["payout"], "payoutId");
  auto open = ops(node, "GET", "/payouts?limit=100");
  cr_expect_eq(open.status, 200, "%s", open.body.c_str());
  cr_expect(open.body.find(po2) != std::string::npos, "%s", open.body.c_str());
  auto paid = ops(node, "POST", "/payouts/" + po2 + "/succeed");
  cr_expect_eq(paid.status, 200, "%s", paid.body.c_str());
  const std::string m2 = funded_member(c, "00000000");
  auto r3 = post(c, "/api/v1/redemptions", redeem_body(m2, 20));
  cr_assert_eq(r3.status, 202, "%s", r3.body.c_str());
  const std::string rd3 = s(data_of(r3), "redemptionId");
  std::string status;
  cr_expect(eventually(
                [&] {
                  auto r = c.get("/api/v1/redemptions/" + rd3);
                  status = r.status == 200 ? s(data_of(r), "status") : r.body;
                  return status == "failed";
                },
                std::chrono::seconds(20), std::chrono::milliseconds(200)),
            "the simulator did not fail the payout of account 00000000: %s", status.c_str());
  auto listed = c.get("/api/v1/redemptions?limit=10");
  cr_expect_eq(listed.status, 200, "%s", listed.body.c_str());
  cr_expect_eq(data_of(listed)["entries"].Size(), 3u, "%s", listed.body.c_str());

  // Close a member.
  const std::string m3 = funded_member(c, "12345678");
  auto closed = post(c, "/api/v1/members/" + m3 + "/close", Json().str("partnerRef", kRef).done());
  cr_expect_eq(closed.status, 200, "%s", closed.body.c_str());

  // A settle batch: two settles held on a locked row take both settle
  // connections, four more queue behind them and go together.
  const std::string gated = funded_member(c, "12345678");
  std::vector<std::string> batched;
  for (int i = 0; i < 4; ++i) batched.push_back(funded_member(c, "12345678"));
  const double batches_before = metric(node.ops_get("/metrics").body, "mr_ledger_batches_total");
  RowLock lock(db.dsn(), gated);
  std::atomic<int> settled{0};
  std::vector<std::thread> senders;
  auto settle_in_thread = [&](const std::string& member) {
    senders.emplace_back([&, member] {
      MrClient own(node.base_url(), key.id, key.secret);
      if (own.post("/api/v1/transactions/settled", settle_body(kRef, member, unique("btx"), 1000), unique("b")).status ==
          200) {
        settled++;
      }
    });
  };
  // One after the other, each on a connection of its own (sent together
  // they could go as one batch).
  const std::string waiting = "SELECT count(*) FROM pg_stat_activity WHERE usename = '" + roles.api +
                              "' AND wait_event_type = 'Lock'";
  for (const char* n : {"1", "2"}) {
    settle_in_thread(gated);
    cr_expect(eventually([&] { return psql_value(db.dsn(), waiting) == n; }, std::chrono::seconds(10)),
              "the gated settles do not wait on the row (%s)", n);
  }
  for (const auto& m : batched) settle_in_thread(m);
  cr_expect(eventually([&] { return metric(node.ops_get("/metrics").body, "mr_ledger_pool_queued") >= 4; },
                       std::chrono::seconds(10)),
            "the settles did not queue");
  lock.release();
  for (auto& t : senders) t.join();
  cr_expect_eq(settled.load(), 6);
  const std::string after = node.ops_get("/metrics").body;
  cr_expect_gt(metric(after, "mr_ledger_batches_total"), batches_before, "no batch went: %s", after.c_str());
  cr_expect_eq(metric(after, "mr_ledger_batch_fallbacks_total"), 0, "a batch failed: %s", node.log().c_str());

  // Events, and their delivery: claimed and reported by the API role.
  std::size_t events = 0;
  cr_expect(eventually(
                [&] {
                  auto r = c.get("/api/v1/events?limit=100");
                  events = r.status == 200 ? data_of(r)["entries"].Size() : 0;
                  return events >= 10;
                },
                std::chrono::seconds(10), std::chrono::milliseconds(200)),
            "events listed: %zu", events);
  cr_expect(receiver.wait_for([](const auto& got) { return !got.empty(); }, std::chrono::seconds(10)),
            "no delivery reached the receiver");
  std::string deliveries;
  cr_expect(eventually(
                [&] {
                  auto r = c.get(endpoint_path + "/deliveries?limit=5");
                  deliveries = r.body;
                  return r.status == 200 && r.body.find("\"status\":200") != std::string::npos;
                },
                std::chrono::seconds(10), std::chrono::milliseconds(200)),
            "no attempt reported: %s", deliveries.c_str());

  // The rest of the endpoint's life, partner side and ops side.
  auto updated = post(c, endpoint_path, Json().str("partnerRef", kRef).str("description", "least privilege").done());
  cr_expect_eq(updated.status, 200, "%s", updated.body.c_str());
  auto rotated = post(c, endpoint_path + "/rotate-secret", Json().str("partnerRef", kRef).done());
  cr_expect_eq(rotated.status, 200, "%s", rotated.body.c_str());
  auto replayed = post(c, endpoint_path + "/replay", Json().str("partnerRef", kRef).str("since", "2026-01-01T00:00:00Z").done());
  cr_expect_eq(replayed.status, 200, "%s", replayed.body.c_str());
  cr_expect_geq(i64(data_of(replayed), "replayed"), 1);
  auto listed_ops = ops(node, "GET", "/webhooks?partnerRef=" + std::string(kRef));
  cr_expect_eq(listed_ops.status, 200, "%s", listed_ops.body.c_str());
  cr_expect(listed_ops.body.find(endpoint) != std::string::npos, "%s", listed_ops.body.c_str());
  cr_expect_eq(ops(node, "GET", "/webhooks/failures?limit=10").status, 200);
  auto disabled = ops(node, "POST", "/webhooks/" + endpoint + "/disable");
  cr_expect_eq(disabled.status, 200, "%s", disabled.body.c_str());
  auto enabled = ops(node, "POST", "/webhooks/" + endpoint + "/enable");
  cr_expect_eq(enabled.status, 200, "%s", enabled.body.c_str());
  auto ops_replay = ops(node, "POST", "/webhooks/" + endpoint + "/replay", R"({"since":"2026-01-01T00:00:00Z"})");
  cr_expect_eq(ops_replay.status, 200, "%s", ops_replay.body.c_str());
  auto deleted = post(c, endpoint_path + "/delete", Json().str("partnerRef", kRef).done());
  cr_expect_eq(deleted.status, 200, "%s", deleted.body.c_str());

  // Readiness and the books' gauges.
  auto ready = node.ops_get("/readyz");
  cr_expect_eq(ready.status, 200, "%s", ready.body.c_str());
  const std::string metrics = node.ops_get("/metrics").body;
  cr_expect_eq(metric(metrics, "mr_books_up"), 1, "%s", metrics.c_str());
  cr_expect(metrics.find("mr_club_points_pool{partner_ref=\"lp-club\"}") != std::string::npos, "%s", metrics.c_str());
  cr_expect(metrics.find("mr_members_estimated{status=\"active\"}") != std::string::npos, "%s", metrics.c_str());

  // Nothing above needed a privilege the role lacks, in any worker's task.
  const std::string log = node.log();
  cr_expect(log.find("permission denied") == std::string::npos && log.find("must be owner") == std::string::npos,
            "%s", log.c_str());
  // And the role is still the API role.
  expect_history_and_schema_out_of_reach(api_dsn, roles);
}

// As the API role: the writers work (they run as the owner), the history
// can be read, and everything else is refused by PostgreSQL.
Test(least_privilege, the_api_role_cannot_touch_history_schema_or_keys) {
  Roles roles("deny");
  Database db("lpdeny");
  migrate_and_set_up(db, roles);
  const std::string owner_dsn = as(db.dsn(), roles.owner), api_dsn = as(db.dsn(), roles.api);
  seed_club(owner_dsn);
  const std::string club_id = psql_value(api_dsn, "SELECT club_id FROM clubs");
  cr_assert_eq(psql_value(api_dsn, write_sql("member", club_id, kRef, "k1", member_cmd(kRef, "m1"))), "created");
  cr_assert_eq(psql_value(api_dsn, write_sql("settle", club_id, kRef, "k2", settle_cmd(kRef, "m1", "t1"))), "ok");
  const std::string books = "SELECT count(*) || ':' || sum(delta_available) FROM ledger_entries";
  cr_assert_eq(psql_value(api_dsn, books), "1:100");
  expect_history_and_schema_out_of_reach(api_dsn, roles);
  cr_expect_eq(psql_value(api_dsn, books), "1:100", "the history changed");
  cr_expect_eq(psql_value(db.dsn(), "SELECT count(*) FROM api_keys"), "1");
  // The owner runs the operator's commands (the adjustment writes an entry).
  mrctl_json(owner_dsn, std::string("member adjust --ref ") + kRef + " --member m1 --points 5 --reason goodwill");
  cr_expect_eq(psql_value(api_dsn, books), "2:105");
  // Exactly the grants api_access lists: SELECT on its tables, EXECUTE on
  // its writers, nothing on a table or function it does not list; and it
  // names nothing the newest schema lacks.
  cr_expect_eq(psql_value(db.dsn(), "SELECT string_agg(object, ',') FROM api_access WHERE CASE privilege WHEN "
                                    "'select' THEN to_regclass(object) IS NULL ELSE to_regprocedure(object) IS NULL END"),
               "", "api_access names what does not exist");
  cr_expect_eq(psql_value(db.dsn(),
                          "SELECT count(*) FROM (SELECT CASE WHEN privilege = 'select' THEN to_regclass(object) END t "
                          "FROM api_access) a WHERE t IS NOT NULL AND NOT has_table_privilege('" + roles.api +
                          "', t, 'SELECT')"),
               "0");
  cr_expect_eq(psql_value(db.dsn(),
                          "SELECT string_agg(c.relname || ':' || p, ',') FROM pg_class c, "
                          "unnest(ARRAY['SELECT','INSERT','UPDATE','DELETE','TRUNCATE','REFERENCES','TRIGGER']) p "
                          "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' "
                          "AND has_table_privilege('" + roles.api + "', c.oid, p) AND NOT (p = 'SELECT' AND c.oid IN "
                          "(SELECT CASE WHEN privilege = 'select' THEN to_regclass(object) END FROM api_access))"),
               "", "privileges beyond api_access");
  cr_expect_eq(psql_value(db.dsn(),
                          "SELECT string_agg(p.oid::regprocedure::text, ',') FROM pg_proc p "
                          "WHERE p.pronamespace = current_schema()::regnamespace AND p.prosecdef "
                          "AND (has_function_privilege('" + roles.api + "', p.oid, 'EXECUTE') <> coalesce(p.oid IN "
                          "(SELECT CASE WHEN privilege = 'execute' THEN to_regprocedure(object) END FROM api_access), "
                          "false) OR has_function_privilege('public', p.oid, 'EXECUTE'))"),
               "", "a definer callable beyond api_access");
  cr_expect_eq(psql_value(db.dsn(), "SELECT count(*) FROM pg_proc WHERE NOT prosecdef AND oid IN (SELECT CASE WHEN "
                                    "privilege = 'execute' THEN to_regprocedure(object) END FROM api_access)"),
               "0", "a writer is not a definer");
}

// A later migration run by the superuser creates a table and a definer
// and replaces a writer without SECURITY DEFINER (as CREATE OR REPLACE
// does): the API role breaks until mrctl migrate, which puts everything
// back; the real later migration (018 after 017) kept the grants too.
Test(least_privilege, migrations_keep_the_grants) {
  Roles roles("keep");
  Database db("lpkeep");
  // Books as migration 025 left them while the migrations still defined
  // the functions (fixtures/make_books_025.sh), set up with the roles: the
  // upgrade then replaces most functions, each of which must keep what
  // setup gave (owned by the owner, a definer, callable by the API role).
  const Run restored = run("zcat '" MR_FIXTURES_DIR "/books_025.sql.gz' | psql -q -X -v ON_ERROR_STOP=1 " +
                           quoted(db.dsn()) + " 2>&1 >/dev/null");
  cr_assert_eq(restored.rc, 0, "restore: %s", restored.out.c_str());
  mrctl_json(db.dsn(), "roles setup --owner-role " + roles.owner + " --api-role " + roles.api);
  const std::string owner_dsn = as(db.dsn(), roles.owner), api_dsn = as(db.dsn(), roles.api);
  const auto later = mrctl_json(db.dsn(), "migrate");
  cr_assert(later["functions"].GetInt() > 100, "the upgrade replaced %d functions", later["functions"].GetInt());
  cr_expect_eq(psql_value(db.dsn(), "SELECT count(*) FROM pg_proc WHERE pronamespace = current_schema()::regnamespace "
                                    "AND proname LIKE 'mr\\_%' AND proowner <> '" + roles.owner + "'::regrole"),
               "0", "every function the upgrade made belongs to the owner");
  cr_expect_eq(psql_value(db.dsn(), "SELECT relowner::regrole::text FROM pg_class WHERE oid = 'pods'::regclass"),
               roles.owner);
  expect_denied(api_dsn, "INSERT INTO pods VALUES ('p1', 'hostaddr=127.0.0.1')", "permission denied for table pods");
  cr_expect_eq(psql_value(api_dsn, "SELECT count(*) FROM ledger_entries WHERE club_id = "
                                   "(SELECT club_id FROM clubs WHERE partner_ref = 'club-a')") != "0",
               true, "the API role reads the books it was given");
  seed_club(owner_dsn);
  const std::string club_id = psql_value(api_dsn, std::string("SELECT club_id FROM clubs WHERE partner_ref = '") +
                                                      kRef + "'");
  cr_assert_eq(psql_value(api_dsn, write_sql("member", club_id, kRef, "k1", member_cmd(kRef, "m1"))), "created");

  cr_assert_eq(psql(db.dsn(),
                    "DO $$ DECLARE f oid := 'mr_write(text,bigint,text,text,text,text,jsonb,bytea)'::regprocedure; BEGIN "
                    "EXECUTE format('CREATE OR REPLACE FUNCTION mr_write(%s) RETURNS %s LANGUAGE plpgsql AS %L', "
                    "pg_get_function_arguments(f), pg_get_function_result(f), (SELECT prosrc FROM pg_proc WHERE oid = f)); "
                    "END $$; "
                    "CREATE TABLE later_notes (note text); "
                    "CREATE FUNCTION later_definer() RETURNS int LANGUAGE sql SECURITY DEFINER AS 'SELECT 1'")
                   .rc,
               0);
  cr_assert_eq(psql_value(db.dsn(), "SELECT prosecdef FROM pg_proc WHERE proname = 'mr_write'"), "f");
  expect_denied(api_dsn, write_sql("settle", club_id, kRef, "k2", settle_cmd(kRef, "m1", "t1")),
                "permission denied for table idempotency_records");

  const Run again = mrctl(db.dsn(), "migrate");
  cr_assert_eq(again.rc, 0, "%s", again.out.c_str());
  cr_expect(again.out.find("\"applied\":0") != std::string::npos, "%s", again.out.c_str());
  cr_expect_eq(psql_value(api_dsn, write_sql("settle", club_id, kRef, "k2", settle_cmd(kRef, "m1", "t1"))), "ok");
  cr_expect_eq(psql_value(db.dsn(), "SELECT prosecdef || ' ' || array_to_string(proconfig, ';') FROM pg_proc "
                                    "WHERE proname = 'mr_write'"),
               "true search_path=public, pg_temp");
  cr_expect_eq(psql_value(db.dsn(), "SELECT string_agg(relowner::regrole::text, ',') FROM pg_class "
                                    "WHERE relname = 'later_notes'"),
               roles.owner);
  expect_denied(api_dsn, "SELECT * FROM later_notes", "permission denied for table later_notes");
  cr_expect_eq(psql_value(db.dsn(), "SELECT proowner::regrole::text || ' ' || "
                                    "has_function_privilege('public', oid, 'EXECUTE') FROM pg_proc "
                                    "WHERE proname = 'later_definer'"),
               roles.owner + " false");
  expect_denied(api_dsn, "SELECT later_definer()", "permission denied for function later_definer");
  expect_history_and_schema_out_of_reach(api_dsn, roles);

  // Now everything matches: the owner's own migrate and roles setup again
  // change nothing.
  const Run by_owner = mrctl(owner_dsn, "migrate");
  cr_expect_eq(by_owner.rc, 0, "%s", by_owner.out.c_str());
  auto d = mrctl_json(db.dsn(), "roles setup --owner-role " + roles.owner + " --api-role " + roles.api);
  const auto& home = d["databases"][0];
  cr_expect_eq(home["created"].Size(), 0u);
  for (const char* k : {"owned", "definers", "public", "api"}) {
    cr_expect_eq(home["changed"][k].GetInt(), 0, "%s changed on the second setup", k);
  }
}

// roles setup refuses what would not be least privilege, and a database
// without the migration.
Test(least_privilege, roles_setup_refuses_roles_that_are_not_least_privilege) {
  Roles roles("refuse");
  Database bare("lpbare");
  const Run unmigrated = mrctl(bare.dsn(), "roles setup --owner-role " + roles.owner + " --api-role " + roles.api);
  cr_expect_eq(unmigrated.rc, 1, "%s", unmigrated.out.c_str());
  cr_expect(unmigrated.out.find("run `mrctl migrate` first") != std::string::npos, "%s", unmigrated.out.c_str());
  Database db("lprefuse");
  cr_assert_eq(db.migrate().rc, 0);
  const std::string setup = "roles setup --owner-role " + roles.owner + " --api-role ";
  const Run same = mrctl(db.dsn(), setup + roles.owner);
  cr_expect_eq(same.rc, 2, "%s", same.out.c_str());
  const Run odd = mrctl(db.dsn(), setup + "Mr-Api");
  cr_expect_eq(odd.rc, 2, "%s", odd.out.c_str());
  const Run super = mrctl(db.dsn(), setup + "postgres");
  cr_expect_eq(super.rc, 1, "%s", super.out.c_str());
  cr_expect(super.out.find("the API role postgres is a superuser") != std::string::npos, "%s", super.out.c_str());
  // The API role's conninfo gives its name and password. A file others may
  // read is refused before anything is made.
  char path[] = "/tmp/mr_lp_dsn_XXXXXX";
  const int fd = ::mkstemp(path);
  cr_assert(fd >= 0);
  const std::string conninfo = "host=127.0.0.1 dbname=mr user=" + roles.api + " password=lp-secret-1\n";
  cr_assert_eq(::write(fd, conninfo.data(), conninfo.size()), static_cast<ssize_t>(conninfo.size()));
  ::fchmod(fd, 0644);
  ::close(fd);
  const std::string owner_only = "roles setup --owner-role " + roles.owner;
  const Run open_file = mrctl(db.dsn(), owner_only + " --api-dsn-file " + path);
  cr_expect_eq(open_file.rc, 2, "%s", open_file.out.c_str());
  cr_expect(open_file.out.find("chmod 600") != std::string::npos, "%s", open_file.out.c_str());
  cr_expect_eq(psql_value(db.dsn(), "SELECT count(*) FROM pg_roles WHERE rolname = '" + roles.api + "'"), "0");
  const Run other_name = mrctl(db.dsn(), setup + "mr_someone_else --api-dsn-file " + path);
  cr_expect_eq(other_name.rc, 2, "%s", other_name.out.c_str());
  // With the file's mode fixed the role is made with that password (a
  // SCRAM verifier: PostgreSQL never saw it in clear); from the
  // environment (MR_API_DSN) likewise.
  ::chmod(path, 0600);
  const std::string verifier = "SELECT rolpassword FROM pg_authid WHERE rolname = '" + roles.api + "'";
  auto ok = mrctl_json(db.dsn(), owner_only + " --api-dsn-file " + path);
  ::unlink(path);
  cr_expect_eq(std::string(ok["databases"][0]["passwordSet"][0].GetString()), roles.api);
  const std::string first = psql_value(db.dsn(), verifier);
  cr_expect(first.starts_with("SCRAM-SHA-256$"), "%s", first.c_str());
  const Run from_env = run("MR_API_DSN=" + quoted("user=" + roles.api + " password=lp-secret-2") + " " +
                           quoted(env("MR_MRCTL")) + " " + owner_only + " --dsn " + quoted(db.dsn()));
  cr_expect_eq(from_env.rc, 0, "%s", from_env.out.c_str());
  const std::string second = psql_value(db.dsn(), verifier);
  cr_expect(second.starts_with("SCRAM-SHA-256$") && second != first, "%s", second.c_str());
  // The API role made a member of the owner: refused on the next setup.
  cr_assert_eq(psql(db.dsn(), "GRANT " + roles.owner + " TO " + roles.api).rc, 0);
  const Run member = mrctl(db.dsn(), setup + roles.api);
  cr_expect_eq(member.rc, 1, "%s", member.out.c_str());
  cr_expect(member.out.find("is a member of " + roles.owner) != std::string::npos, "%s", member.out.c_str());
}
