// Webhook delivery from nginx's workers (contract section 10, Delivery),
// against a receiver this test runs on loopback (the fixture's stack is a
// sandbox: http:// and loopback allowed). Each test has a club, a member and
// endpoints of its own, made in SQL; an event is queued with mr_emit, the
// outbox every change goes through. The fixture shortens the schedule
// (0 1s 1s 1s), the timeout (2s) and the poll (1s).
#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "keys/secret_box.hpp"
#include "keys/webhook_secret.hpp"
#include "pg/pg_handles.hpp"
#include "modules/webhooks/standard_webhooks.hpp"
#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/stack_env.hpp"
#include "tests/integration/webhook_receiver.hpp"
#include "tests/integration/webhook_signature.hpp"

using mr::test::env;
using Clock = std::chrono::steady_clock;

namespace {

// --- The receiver (tests/integration/webhook_receiver.hpp), answering by
// path and by how many requests with the same webhook-id came before.

using mr::test::HookAnswer;
using mr::test::ReceivedHook;
using Script = std::function<HookAnswer(const ReceivedHook&, int earlier)>;

HookAnswer answer(int status, std::vector<std::pair<std::string, std::string>> headers = {}, int delay_ms = 0) {
  return HookAnswer{status, std::move(headers), std::chrono::milliseconds(delay_ms)};
}

class Receiver {
 public:
  explicit Receiver(Script script) {
    auto seen = std::make_shared<std::map<std::string, int>>();
    // The policy runs under the receiver's lock: `seen` needs no other.
    hooks_.answer_with([script = std::move(script), seen](const ReceivedHook& h) {
      return script(h, (*seen)[h.target + " " + h.header("webhook-id")]++);
    });
  }
  std::string url(const std::string& path) const { return hooks_.url(path); }
  std::vector<ReceivedHook> requests(const std::string& path) const {
    std::vector<ReceivedHook> out;
    for (auto& h : hooks_.received()) {
      if (h.target == path) out.push_back(std::move(h));
    }
    return out;
  }
  bool wait_for(const std::string& path, std::size_t n, std::chrono::seconds within) const {
    return hooks_.wait_for(
        [&](const std::vector<ReceivedHook>& got) {
          return static_cast<std::size_t>(std::count_if(got.begin(), got.end(), [&](const ReceivedHook& h) {
                   return h.target == path;
                 })) >= n;
        },
        within);
  }

 private:
  mr::test::WebhookReceiver hooks_;
};

// --- The database, blocking libpq.

using Row = std::vector<std::optional<std::string>>;

class Db {
 public:
  Db() : conn_(PQconnectdb(env("MR_DSN").c_str())) {
    cr_assert(PQstatus(conn_.get()) == CONNECTION_OK, "%s", PQerrorMessage(conn_.get()));
  }
  std::vector<Row> query(const std::string& sql, const std::vector<std::optional<std::string>>& params = {}) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    const mr::pg::Result r(PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr,
                                        values.data(), nullptr, nullptr, 0));
    const auto status = PQresultStatus(r.get());
    cr_assert(status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK, "%s: %s", sql.c_str(),
              PQresultErrorMessage(r.get()));
    std::vector<Row> rows;
    for (int i = 0; i < PQntuples(r.get()); ++i) {
      Row row;
      for (int j = 0; j < PQnfields(r.get()); ++j) {
        row.push_back(PQgetisnull(r.get(), i, j) ? std::nullopt : std::optional<std::string>(PQgetvalue(r.get(), i, j)));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }
  std::string one(const std::string& sql, const std::vector<std::optional<std::string>>& params = {}) {
    const auto rows = query(sql, params);
    cr_assert_eq(rows.size(), 1u, "%s", sql.c_str());
    return rows[0].at(0).value_or("<null>");
  }

 private:
  mr::pg::Conn conn_;
};

std::string random_hex(int bytes) {
  static std::mt19937_64 rng(std::random_device{}());
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < bytes * 2; ++i) s.push_back(digits[rng() % 16]);
  return s;
}

// A club and a member of this test's own: no other test's events reach its endpoints.
struct World {
  Db db;
  std::string club_id, member_id, external_id;
  mr::MasterKey sealing_key;

  World() {
    const std::string ref = "wh-" + random_hex(6);
    club_id = db.one("INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies) "
                     "VALUES ($1, 'Webhook delivery test', 100, '{GBP}') RETURNING club_id",
                     {ref});
    external_id = "m-" + random_hex(4);
    member_id = db.one("INSERT INTO members (club_id, external_id, first_name, last_name, email) "
                       "VALUES ($1, $2, 'W', 'H', 'wh@example.com') RETURNING member_id",
                       {club_id, external_id});
    std::string err;
    const auto master = mr::load_master_key(env("MR_MASTER_KEY_FILE"), err);
    cr_assert(master.has_value(), "%s", err.c_str());
    sealing_key = mr::webhook_sealing_key(*master).value();
  }

  // An enabled endpoint for every type; returns its id.
  std::string endpoint(const std::string& url, const std::string& secret,
                       const std::optional<std::string>& previous_secret = std::nullopt) {
    const std::string id = mr::new_endpoint_id();
    std::optional<std::string> previous;
    if (previous_secret) previous = mr::seal_webhook_secret(sealing_key, id, *previous_secret);
    db.query("INSERT INTO webhook_endpoints (endpoint_id, club_id, url, secret_sealed, previous_secret_sealed, "
             "previous_expires_at) VALUES ($1, $2, $3, $4, $5::text, CASE WHEN $5::text IS NULL THEN NULL "
             "ELSE clock_timestamp() + interval '1 day' END)",
             {id, club_id, url, mr::seal_webhook_secret(sealing_key, id, secret), previous});
    return id;
  }

  // Queues one event (a delivery per enabled endpoint); returns its id.
  std::string emit() {
    db.query("SELECT mr_emit($1::bigint, $2::bigint, 'member.updated', "
             "'{\"status\":\"active\",\"payoutReady\":false}'::jsonb)",
             {club_id, member_id});
    return db.one("SELECT event_id FROM events WHERE club_id = $1 ORDER BY event_no DESC LIMIT 1", {club_id});
  }

  // Polls until the SQL answers `want` (its first column, first row).
  bool eventually(const std::string& sql, const std::vector<std::optional<std::string>>& params,
                  const std::string& want, std::chrono::seconds within = std::chrono::seconds(20)) {
    const auto deadline = Clock::now() + within;
    while (Clock::now() < deadline) {
      const auto rows = db.query(sql, params);
      if (!rows.empty() && rows[0].at(0).value_or("<null>") == want) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  std::string delivery_state(const std::string& endpoint_id, const std::string& event_id) {
    const auto rows = db.query(
        "SELECT d.state FROM webhook_deliveries d JOIN events e ON e.event_no = d.event_no "
        "WHERE d.endpoint_id = $1 AND e.event_id = $2",
        {endpoint_id, event_id});
    return rows.empty() ? "<none>" : rows[0].at(0).value_or("<null>");
  }
};

const char* kStateSql =
    "SELECT d.state FROM webhook_deliveries d JOIN events e ON e.event_no = d.event_no "
    "WHERE d.endpoint_id = $1 AND e.event_id = $2";

// The module's own verifier (modules/webhooks/standard_webhooks.hpp), which
// the receiver's clock judges; and an independent one, written from the
// specification (webhook_signature.hpp), must agree on a valid signature.
mr::webhooks::Verdict verify(const ReceivedHook& r, const std::vector<std::string>& secrets) {
  std::vector<std::string> keys;
  for (const auto& s : secrets) keys.push_back(mr::webhook_signing_key(s).value());
  const std::string id = r.header("webhook-id"), ts = r.header("webhook-timestamp"),
                    sig = r.header("webhook-signature");
  const auto verdict = mr::webhooks::verify(keys, {id, ts, sig, r.body}, static_cast<std::int64_t>(std::time(nullptr)));
  if (verdict == mr::webhooks::Verdict::valid) {
    const auto offered = mr::test::signatures_of(sig);
    const bool independent = std::any_of(secrets.begin(), secrets.end(), [&](const std::string& secret) {
      return std::find(offered.begin(), offered.end(), mr::test::standard_webhooks_signature(secret, id, ts, r.body)) !=
             offered.end();
    });
    cr_expect(independent, "the independent verifier disagrees: %s", sig.c_str());
  }
  return verdict;
}

std::string header(const ReceivedHook& r, const char* name) {
  const std::string v = r.header(name);
  return v.empty() ? std::string("<none>") : v;
}

}  // namespace

// The first attempt: at once (a notification, not the poll), signed with
// the endpoint's secret, the event as its body, recorded as delivered.
Test(webhook_delivery, delivered_signed_with_the_event_as_body) {
  Receiver receiver([](const ReceivedHook&, int) { return answer(204); });
  World w;
  const std::string secret = mr::new_webhook_secret();
  const std::string endpoint = w.endpoint(receiver.url("/ok"), secret);
  const auto queued = Clock::now();
  const std::string event = w.emit();
  cr_assert(receiver.wait_for("/ok", 1, std::chrono::seconds(20)), "no delivery came");
  const auto latency = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - queued);
  const ReceivedHook r = receiver.requests("/ok").at(0);
  cr_expect_eq(header(r, "webhook-id"), event);
  cr_expect_eq(header(r, "content-type"), std::string("application/json"));
  cr_expect_eq(verify(r, {secret}), mr::webhooks::Verdict::valid, "signature: %s",
               header(r, "webhook-signature").c_str());
  cr_expect_eq(verify(r, {mr::new_webhook_secret()}), mr::webhooks::Verdict::mismatch, "another secret");
  cr_expect(header(r, "webhook-signature").find(' ') == std::string::npos, "one secret: one signature");
  rapidjson::Document body = mr::parse_json(r.body);
  cr_assert(body.IsObject(), "%s", r.body.c_str());
  cr_expect_eq(std::string(body["id"].GetString()), event);
  cr_expect_eq(std::string(body["type"].GetString()), std::string("member.updated"));
  cr_expect_eq(std::string(body["environment"].GetString()), std::string("sandbox"));
  cr_expect(body.HasMember("createdAt") && body["createdAt"].IsString());
  cr_expect_eq(std::string(body["data"]["externalMemberId"].GetString()), w.external_id);
  cr_expect_eq(body["data"]["memberSequence"].GetInt64(), 1);
  // Every delivering worker listens, and an event is sent well under a
  // second after its commit. (The latency alone proves little: four workers
  // polling every second find a due delivery within 250 ms on average.)
  cr_expect_geq(std::stoi(w.db.one("SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN mr_webhooks'")), 4,
                "both nodes' two workers listen");
  cr_expect(latency < std::chrono::milliseconds(600), "first attempt after %lld ms",
            static_cast<long long>(latency.count()));
  for (std::size_t n = 2; n <= 5; ++n) {
    const auto at = Clock::now();
    w.emit();
    cr_assert(receiver.wait_for("/ok", n, std::chrono::seconds(20)));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - at).count();
    cr_expect(ms < 600, "attempt %zu after %lld ms", n, static_cast<long long>(ms));
  }
  cr_assert(w.eventually(kStateSql, {endpoint, event}, "delivered"), "state %s",
            w.delivery_state(endpoint, event).c_str());
  const auto attempts = w.db.query(
      "SELECT a.attempt, a.status, a.error FROM webhook_attempts a JOIN events e ON e.event_no = a.event_no "
      "WHERE a.endpoint_id = $1 AND e.event_id = $2",
      {endpoint, event});
  cr_assert_eq(attempts.size(), 1u);
  cr_expect_eq(attempts[0][0].value_or(""), std::string("1"));
  cr_expect_eq(attempts[0][1].value_or(""), std::string("204"));
  cr_expect(!attempts[0][2].has_value(), "no error for an HTTP answer");
}

// A 500 is a failed attempt: the next one follows the schedule, with the
// same webhook-id and a fresh timestamp and signature.
Test(webhook_delivery, a_500_is_retried_with_the_same_id) {
  Receiver receiver([](const ReceivedHook&, int earlier) { return answer(earlier == 0 ? 500 : 200); });
  World w;
  const std::string secret = mr::new_webhook_secret();
  const std::string endpoint = w.endpoint(receiver.url("/flaky"), secret);
  const std::string event = w.emit();
  cr_assert(receiver.wait_for("/flaky", 2, std::chrono::seconds(20)), "no retry came");
  const auto got = receiver.requests("/flaky");
  cr_expect_eq(header(got[0], "webhook-id"), event);
  cr_expect_eq(header(got[1], "webhook-id"), event, "the same id on every attempt");
  cr_expect_eq(verify(got[0], {secret}), mr::webhooks::Verdict::valid);
  cr_expect_eq(verify(got[1], {secret}), mr::webhooks::Verdict::valid);
  cr_expect(std::stoll(header(got[1], "webhook-timestamp")) >= std::stoll(header(got[0], "webhook-timestamp")));
  cr_assert(w.eventually(kStateSql, {endpoint, event}, "delivered"));
  const auto attempts = w.db.query(
      "SELECT attempt, status FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY attempted_ms", {endpoint});
  cr_assert_eq(attempts.size(), 2u);
  cr_expect_eq(attempts[0][0].value_or(""), std::string("1"));
  cr_expect_eq(attempts[0][1].value_or(""), std::string("500"));
  cr_expect_eq(attempts[1][0].value_or(""), std::string("2"));
  cr_expect_eq(attempts[1][1].value_or(""), std::string("200"));
  cr_expect_eq(w.db.one("SELECT status FROM webhook_endpoints WHERE endpoint_id = $1", {endpoint}),
               std::string("enabled"));
}

// 410 Gone disables the endpoint at once; nothing more is queued for it.
Test(webhook_delivery, a_410_disables_the_endpoint) {
  Receiver receiver([](const ReceivedHook&, int) { return answer(410); });
  World w;
  const std::string endpoint = w.endpoint(receiver.url("/gone"), mr::new_webhook_secret());
  const std::string event = w.emit();
  cr_assert(receiver.wait_for("/gone", 1, std::chrono::seconds(20)));
  cr_assert(w.eventually("SELECT status || '/' || coalesce(disabled_reason, '') FROM webhook_endpoints "
                         "WHERE endpoint_id = $1",
                         {endpoint}, "disabled/gone"));
  cr_expect_neq(w.delivery_state(endpoint, event), std::string("pending"), "not sent again");
  const std::string later = w.emit();
  cr_expect_eq(w.delivery_state(endpoint, later), std::string("<none>"), "a disabled endpoint gets nothing");
  cr_expect_eq(w.db.one("SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1", {endpoint}),
               std::string("1"));
}

// During a rotation both secrets sign: a receiver knowing either accepts.
Test(webhook_delivery, a_rotation_signs_with_both_secrets) {
  Receiver receiver([](const ReceivedHook&, int) { return answer(200); });
  World w;
  const std::string current = mr::new_webhook_secret(), previous = mr::new_webhook_secret();
  const std::string endpoint = w.endpoint(receiver.url("/rotating"), current, previous);
  w.emit();
  cr_assert(receiver.wait_for("/rotating", 1, std::chrono::seconds(20)));
  const ReceivedHook r = receiver.requests("/rotating").at(0);
  const std::string sig = header(r, "webhook-signature");
  const auto space = sig.find(' ');
  cr_assert_neq(space, std::string::npos, "two signatures: %s", sig.c_str());
  cr_expect_eq(sig.find(' ', space + 1), std::string::npos, "exactly two");
  cr_expect_eq(verify(r, {current}), mr::webhooks::Verdict::valid);
  cr_expect_eq(verify(r, {previous}), mr::webhooks::Verdict::valid);
  // The current secret signs first.
  ReceivedHook only_first = r;
  only_first.headers["webhook-signature"] = sig.substr(0, space);
  cr_expect_eq(verify(only_first, {current}), mr::webhooks::Verdict::valid);
}

// No answer within mr_webhook_timeout (2 s here) is a failed attempt
// recorded as a timeout; Retry-After longer than the next step is honoured.
Test(webhook_delivery, timeouts_and_retry_after) {
  Receiver receiver([](const ReceivedHook& r, int earlier) {
    if (r.target == "/slow") return answer(200, {}, earlier == 0 ? 3500 : 0);
    return answer(503, {{"Retry-After", "30"}});
  });
  World w;
  const std::string slow = w.endpoint(receiver.url("/slow"), mr::new_webhook_secret());
  const std::string busy = w.endpoint(receiver.url("/busy"), mr::new_webhook_secret());
  const std::string event = w.emit();
  // The slow endpoint: the first attempt times out, the second is delivered.
  cr_assert(w.eventually(kStateSql, {slow, event}, "delivered", std::chrono::seconds(30)), "state %s",
            w.delivery_state(slow, event).c_str());
  const auto attempts = w.db.query(
      "SELECT status, error, duration_ms FROM webhook_attempts WHERE endpoint_id = $1 ORDER BY attempted_ms",
      {slow});
  cr_assert_eq(attempts.size(), 2u);
  cr_expect(!attempts[0][0].has_value(), "no status for a timeout");
  cr_expect(attempts[0][1].value_or("").find("timed out") != std::string::npos, "%s",
            attempts[0][1].value_or("<null>").c_str());
  cr_expect(std::stoll(attempts[0][2].value_or("0")) >= 1900, "about the timeout: %s",
            attempts[0][2].value_or("").c_str());
  cr_expect_eq(attempts[1][0].value_or(""), std::string("200"));
  // The busy endpoint asked for 30 s: its next attempt waits that long, not 1 s.
  cr_assert(receiver.wait_for("/busy", 1, std::chrono::seconds(20)));
  cr_assert(w.eventually("SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1", {busy}, "1"));
  const std::string wait_s = w.db.one(
      "SELECT floor(extract(epoch FROM d.next_at - clock_timestamp()))::int FROM webhook_deliveries d "
      "JOIN events e ON e.event_no = d.event_no WHERE d.endpoint_id = $1 AND e.event_id = $2",
      {busy, event});
  cr_expect(std::stoi(wait_s) >= 25 && std::stoi(wait_s) <= 30, "next attempt in %s s", wait_s.c_str());
  cr_expect_eq(receiver.requests("/busy").size(), 1u);
}

// Every attempt failing: the schedule's four attempts, then exhausted. A
// URL libcurl may not fetch is refused without a connection.
Test(webhook_delivery, exhausted_after_the_last_attempt_and_refused_urls) {
  Receiver receiver([](const ReceivedHook&, int) { return answer(500); });
  World w;
  const std::string failing = w.endpoint(receiver.url("/down"), mr::new_webhook_secret());
  const std::string refused = w.endpoint("ftp://127.0.0.1:" + std::to_string(1) + "/x", mr::new_webhook_secret());
  const std::string unheard = w.endpoint("http://127.0.0.1:1/x", mr::new_webhook_secret());
  const std::string event = w.emit();
  cr_assert(w.eventually(kStateSql, {failing, event}, "exhausted", std::chrono::seconds(30)), "state %s",
            w.delivery_state(failing, event).c_str());
  cr_expect_eq(receiver.requests("/down").size(), 4u, "the fixture's schedule: 4 attempts");
  cr_assert(w.eventually("SELECT count(*) FROM webhook_attempts WHERE endpoint_id = $1 AND status IS NULL "
                         "AND error LIKE 'refused:%'",
                         {refused}, "4", std::chrono::seconds(30)));
  // Every failed attempt says why, and what a partner reads names the rule,
  // not the address (the error log has that).
  cr_expect_eq(w.db.one("SELECT string_agg(DISTINCT coalesce(error, '<null>'), ',') FROM webhook_attempts "
                        "WHERE endpoint_id = $1",
                        {failing}),
               std::string("HTTP 500"));
  cr_assert(w.eventually("SELECT count(*) > 0 FROM webhook_attempts WHERE endpoint_id = $1", {unheard}, "t",
                         std::chrono::seconds(30)));
  cr_expect_eq(w.db.one("SELECT string_agg(DISTINCT coalesce(error, '<null>'), ',') FROM webhook_attempts "
                        "WHERE endpoint_id = $1",
                        {unheard}),
               std::string("the connection was refused"));
}

// The sum of a series over both nodes of the fixture: any worker of either
// may make an attempt, and each node counts its own.
double both_nodes(const std::string& series) {
  const std::string node2_ops = mr::read_env_file(env("MR_NODE2_STACK_DIR") + "/stack.env").at("MR_OPS_URL");
  auto r = mr::MrClient(node2_ops, "", "").send("GET", "/metrics", "", mr::test::ops_auth());
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  return mr::test::metric(mr::test::scrape(), series) + mr::test::metric(r.body, series);
}

// /metrics counts attempts by outcome (every worker's, in the shared zone)
// and shows the backlog.
Test(webhook_delivery, metrics) {
  Receiver receiver([](const ReceivedHook&, int) { return answer(200); });
  World w;
  const std::string endpoint = w.endpoint(receiver.url("/counted"), mr::new_webhook_secret());
  const std::string delivered = "mr_webhook_attempts_total{outcome=\"delivered\"}";
  const std::string timed = "mr_webhook_attempt_duration_seconds_count";
  const double delivered_before = both_nodes(delivered), timed_before = both_nodes(timed);
  const std::string event = w.emit();
  cr_assert(w.eventually(kStateSql, {endpoint, event}, "delivered"));
  cr_expect_geq(both_nodes(delivered) - delivered_before, 1);
  cr_expect_geq(both_nodes(timed) - timed_before, 1);
  const std::string text = mr::test::scrape();
  for (const char* line : {"# TYPE mr_webhook_attempts_total counter\n", "mr_webhook_attempts_total{outcome=\"refused\"} ",
                           "# TYPE mr_webhook_attempt_duration_seconds histogram\n",
                           "mr_webhook_attempt_duration_seconds_bucket{le=\"+Inf\"} ",
                           "# TYPE mr_webhook_backlog gauge\n", "\nmr_webhook_backlog ",
                           "# TYPE mr_webhook_backlog_oldest_seconds gauge\n", "\nmr_webhook_backlog_oldest_seconds ",
                           "\nmr_books_up 1\n"}) {
    cr_expect(text.find(line) != std::string::npos, "no \"%s\" in:\n%s", line, text.c_str());
  }
}
