// The events API and the webhook endpoint API on the real stack (contract
// section 10): every endpoint and its errors, the secret shown by create
// and rotate only, an idempotent replay byte for byte (also when the
// database's record answers, on the second node), no plaintext secret in
// the database, another club seeing nothing, events paged with limit,
// types and after, and a created endpoint receiving deliveries signed
// with the secret it was given. The fixture's stack is a sandbox: http://
// and loopback URLs are allowed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <libpq-fe.h>

#include "pg/pg_handles.hpp"
#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/pod_stack.hpp"
#include "tests/integration/webhook_receiver.hpp"
#include "tests/integration/webhook_signature.hpp"

using namespace mr::test;

namespace {

// Asks `done` every `every` until it holds or `timeout` has passed (then
// once more): tests wait for what they need, never a guessed time.
template <class Done>
bool poll_until(Done&& done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds every = std::chrono::milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(every);
  }
  return true;
}

constexpr const char* kEndpoints = "/api/v1/webhook-endpoints";
// Nothing listens there: an endpoint that only gets operator adjustments
// (points.adjusted) is never sent anything by these tests.
constexpr const char* kDeadUrl = "http://127.0.0.1:9/hooks";

std::string endpoint_body(const std::string& ref, const std::string& url, const std::string& types_json = "",
                          const std::string& description = "") {
  Json j;
  j.str("partnerRef", ref).str("url", url);
  if (!types_json.empty()) j.raw("eventTypes", types_json);
  if (!description.empty()) j.str("description", description);
  return j.done();
}

std::string ref_body(const std::string& ref) { return Json().str("partnerRef", ref).done(); }

std::string path_of(const std::string& id, const std::string& action = "") {
  return std::string(kEndpoints) + "/" + id + (action.empty() ? "" : "/" + action);
}

// A new endpoint of `ref`'s club (201) with its data, or the test stops.
rapidjson::Document create(MrClient& c, const std::string& ref, const std::string& url = kDeadUrl,
                           const std::string& types_json = R"(["points.adjusted"])") {
  auto r = post(c, kEndpoints, endpoint_body(ref, url, types_json));
  cr_assert_eq(r.status, 201, "%s", r.body.c_str());
  return data_of(r);
}

std::vector<std::string> strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.GetArray()) out.emplace_back(v.GetString());
  return out;
}

bool listed(MrClient& c, const std::string& id) {
  auto d = data_of(c.get(kEndpoints));
  for (const auto& e : d["entries"].GetArray()) {
    if (s(e, "endpointId") == id) return true;
  }
  return false;
}

// One statement's single value on the fixture's database.
std::string sql_value(const std::string& sql, const std::vector<std::string>& params) {
  mr::pg::Conn conn(PQconnectdb(env("MR_DSN").c_str()));
  cr_assert(PQstatus(conn.get()) == CONNECTION_OK, "%s", PQerrorMessage(conn.get()));
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  mr::pg::Result r(PQexecParams(conn.get(), sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                                nullptr, nullptr, 0));
  cr_assert(PQresultStatus(r.get()) == PGRES_TUPLES_OK, "%s", PQerrorMessage(conn.get()));
  cr_assert_eq(PQntuples(r.get()), 1, "%s", sql.c_str());
  return PQgetvalue(r.get(), 0, 0);
}

// Expects invalid_request naming exactly `field` among its details.
void expect_invalid(const HttpResponse& r, const std::string& field) {
  EXPECT_ERROR(r, 400, "invalid_request");
  auto d = parse_json(r.body);
  bool named = false;
  if (d.IsObject() && d.HasMember("error") && d["error"].HasMember("details")) {
    for (const auto& p : d["error"]["details"].GetArray()) named = named || p["field"].GetString() == field;
  }
  cr_expect(named, "%s not named in %s", field.c_str(), r.body.c_str());
}

void expect_secret_shape(const std::string& secret) {
  cr_expect(secret.starts_with("whsec_") && secret.size() == 6 + 44, "secret %s", secret.c_str());
  cr_expect_eq(unbase64(secret.substr(6)).size(), 32u, "32 random bytes");
}

}  // namespace

Test(webhook_endpoints, create_read_update_rotate_replay_delete) {
  auto c = client("B");
  auto r = post(c, kEndpoints,
                endpoint_body("club-b", kDeadUrl, R"(["points.adjusted","redemption.failed","points.adjusted"])",
                              "Our CRM"));
  cr_assert_eq(r.status, 201, "%s", r.body.c_str());
  cr_expect(header(r, "content-type").starts_with("application/json"));
  auto created = data_of(r);
  const std::string id = s(created, "endpointId"), secret = s(created, "secret");
  cr_expect(id.starts_with("we_"), "%s", id.c_str());
  expect_secret_shape(secret);
  cr_expect(!created.HasMember("secretSealed"), "%s", r.body.c_str());
  cr_expect_eq(s(created, "url"), std::string(kDeadUrl));
  cr_expect_eq(strings(created["eventTypes"]), (std::vector<std::string>{"points.adjusted", "redemption.failed"}),
               "each type once");
  cr_expect_eq(s(created, "description"), std::string("Our CRM"));
  cr_expect_eq(s(created, "status"), std::string("enabled"));
  cr_expect(created["disabledReason"].IsNull());
  cr_expect(s(created, "createdAt").ends_with("Z") && s(created, "updatedAt").ends_with("Z"));

  // A GET never shows a secret, sealed or not.
  auto got = c.get(path_of(id));
  cr_assert_eq(got.status, 200, "%s", got.body.c_str());
  cr_expect(got.body.find("secret") == std::string::npos, "%s", got.body.c_str());
  cr_expect(got.body.find(secret.substr(6)) == std::string::npos);
  auto one = data_of(got);
  cr_expect_eq(s(one, "endpointId"), id);
  cr_expect_eq(s(one, "createdAt"), s(created, "createdAt"));
  auto list = c.get(kEndpoints);
  cr_assert_eq(list.status, 200, "%s", list.body.c_str());
  cr_expect(list.body.find("secret") == std::string::npos, "%s", list.body.c_str());
  cr_expect(listed(c, id));

  // Update: url, description cleared, disabled by hand, then enabled again.
  auto up = post(c, path_of(id),
                 Json().str("partnerRef", "club-b").str("url", "http://127.0.0.1:9/other").str("description", "")
                     .str("status", "disabled").done());
  cr_assert_eq(up.status, 200, "%s", up.body.c_str());
  auto updated = data_of(up);
  cr_expect(up.body.find("secret") == std::string::npos, "%s", up.body.c_str());
  cr_expect_eq(s(updated, "url"), std::string("http://127.0.0.1:9/other"));
  cr_expect(updated["description"].IsNull());
  cr_expect_eq(s(updated, "status"), std::string("disabled"));
  cr_expect_eq(s(updated, "disabledReason"), std::string("manual"));
  cr_expect_eq(strings(updated["eventTypes"]), strings(created["eventTypes"]), "absent fields stay");
  updated = data_of(post(c, path_of(id), Json().str("partnerRef", "club-b").str("status", "enabled").done()));
  cr_expect_eq(s(updated, "status"), std::string("enabled"));
  cr_expect(updated["disabledReason"].IsNull());

  // Rotate: a new secret, shown once.
  auto rot = post(c, path_of(id, "rotate-secret"), ref_body("club-b"));
  cr_assert_eq(rot.status, 200, "%s", rot.body.c_str());
  auto rotated = data_of(rot);
  expect_secret_shape(s(rotated, "secret"));
  cr_expect_neq(s(rotated, "secret"), secret);
  cr_expect_eq(s(rotated, "endpointId"), id);
  got = c.get(path_of(id));
  cr_expect(got.body.find("secret") == std::string::npos, "%s", got.body.c_str());

  // Deliveries: none were attempted (nothing of these types happened).
  auto del = c.get(path_of(id, "deliveries") + "?limit=10");
  cr_assert_eq(del.status, 200, "%s", del.body.c_str());
  auto deliveries = data_of(del);
  cr_expect(deliveries["entries"].IsArray() && deliveries["entries"].Empty(), "%s", del.body.c_str());
  cr_expect(deliveries["nextBefore"].IsNull());

  auto rep = post(c, path_of(id, "replay"), Json().str("partnerRef", "club-b").str("since", "2026-01-01T00:00:00Z").done());
  cr_assert_eq(rep.status, 200, "%s", rep.body.c_str());
  auto replayed = data_of(rep);
  cr_expect_eq(s(replayed, "endpointId"), id);
  cr_expect(replayed["replayed"].IsInt64() && replayed["replayed"].GetInt64() >= 0, "%s", rep.body.c_str());

  // Delete: gone for every call.
  auto gone = post(c, path_of(id, "delete"), ref_body("club-b"));
  cr_assert_eq(gone.status, 200, "%s", gone.body.c_str());
  cr_expect_eq(s(data_of(gone), "endpointId"), id);
  EXPECT_ERROR(c.get(path_of(id)), 404, "webhook_endpoint_not_found");
  EXPECT_ERROR(c.get(path_of(id, "deliveries")), 404, "webhook_endpoint_not_found");
  EXPECT_ERROR(post(c, path_of(id), ref_body("club-b")), 404, "webhook_endpoint_not_found");
  EXPECT_ERROR(post(c, path_of(id, "rotate-secret"), ref_body("club-b")), 404, "webhook_endpoint_not_found");
  EXPECT_ERROR(post(c, path_of(id, "replay"), Json().str("partnerRef", "club-b").str("since", "2026-01-01T00:00:00Z").done()),
               404, "webhook_endpoint_not_found");
  EXPECT_ERROR(post(c, path_of(id, "delete"), ref_body("club-b")), 404, "webhook_endpoint_not_found");
  cr_expect(!listed(c, id));
}

Test(webhook_endpoints, idempotent_replay_is_byte_for_byte_and_the_database_keeps_no_secret) {
  auto c = client("B");
  const std::string key = unique("idem-wh");
  const std::string body = endpoint_body("club-b", kDeadUrl, R"(["points.adjusted"])");
  auto first = c.post(kEndpoints, body, key);
  cr_assert_eq(first.status, 201, "%s", first.body.c_str());
  const auto created = data_of(first);
  const std::string id = s(created, "endpointId"), secret = s(created, "secret");

  // An answer with a secret is sent no-store and kept nowhere at the edge:
  // Redis holds no record of the key once the answer is out (the module
  // releases it right after sending, so this looks for up to 2 s).
  cr_expect_eq(header(first, "cache-control"), std::string("no-store"));
  const std::string club_id = sql_value("SELECT club_id::text FROM clubs WHERE partner_ref = $1", {"club-b"});
  const auto edge_keeps = [&](const std::string& k) {
    const std::string exists = redis_cli() + "EXISTS 'mr:idem:" + club_id + ":" + k + "' | grep -qx 0";
    for (int i = 0; i < 40; ++i) {
      if (sh(exists) == 0) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return true;
  };
  cr_expect(!edge_keeps(key), "Redis kept the answer that carries the secret");

  // So a retry is answered by the database's record, its sealed secret
  // opened again: the same bytes, on this node and on the second one
  // (whose workers never saw the key).
  auto again = c.post(kEndpoints, body, key);
  cr_expect_eq(again.status, 201);
  cr_expect_eq(again.body, first.body, "the replay is the first answer byte for byte");
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_eq(header(again, "cache-control"), std::string("no-store"));
  cr_expect(!edge_keeps(key), "Redis kept the replayed answer");
  MrClient node2(env("MR_NODE2_BASE_URL"), env("MR_KEY_B_ID"), env("MR_KEY_B_SECRET"));
  auto from_db = node2.post(kEndpoints, body, key);
  cr_expect_eq(from_db.status, 201, "%s", from_db.body.c_str());
  cr_expect_eq(from_db.body, first.body, "the database's replay is the first answer byte for byte");
  cr_expect_eq(header(from_db, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_eq(sql_value("SELECT count(*)::text FROM webhook_endpoints WHERE endpoint_id = $1", {id}),
               std::string("1"), "one endpoint, however many retries");

  // Another body under the key: refused, nothing made.
  EXPECT_ERROR(c.post(kEndpoints, endpoint_body("club-b", "http://127.0.0.1:9/x"), key), 422,
               "duplicate_idempotency_conflict");

  // What the database holds: the sealed form, never the secret.
  const std::string b64 = secret.substr(6);
  const std::string record =
      sql_value("SELECT result::text FROM idempotency_records WHERE club_id = $1::bigint AND idem_key = $2",
                {club_id, key});
  cr_expect(record.find("secretSealed") != std::string::npos, "%s", record.c_str());
  cr_expect(record.find(b64) == std::string::npos, "the idempotency record holds no plaintext secret");
  const std::string row = sql_value("SELECT row_to_json(w)::text FROM webhook_endpoints w WHERE endpoint_id = $1", {id});
  cr_expect(row.find(b64) == std::string::npos && row.find("whsec_") == std::string::npos, "%s", row.c_str());

  // A rotation replays the same way.
  const std::string rotate_key = unique("idem-rot");
  auto rot = c.post(path_of(id, "rotate-secret"), ref_body("club-b"), rotate_key);
  cr_assert_eq(rot.status, 200, "%s", rot.body.c_str());
  cr_expect_eq(header(rot, "cache-control"), std::string("no-store"));
  cr_expect(!edge_keeps(rotate_key), "Redis kept the rotation's answer");
  auto rot_again = node2.post(path_of(id, "rotate-secret"), ref_body("club-b"), rotate_key);
  cr_expect_eq(rot_again.body, rot.body);
  cr_expect_eq(header(rot_again, "x-mr-idempotent-replay"), std::string("true"));
  cr_expect_neq(s(data_of(rot), "secret"), secret);

  cr_expect_eq(post(c, path_of(id, "delete"), ref_body("club-b")).status, 200);
}

Test(webhook_endpoints, every_refusal) {
  auto c = client("B");
  struct Bad {
    std::string body;
    const char* field;
  };
  const std::string long_description(257, 'd');
  for (const Bad& b : std::initializer_list<Bad>{
           {endpoint_body("club-b", "ftp://example.com/x"), "url"},
           {endpoint_body("club-b", "http://user:pw@127.0.0.1:9/"), "url"},
           {endpoint_body("club-b", "https://example.com/#frag"), "url"},
           {endpoint_body("club-b", "https://example.com/" + std::string(2100, 'x')), "url"},
           {endpoint_body("club-b", kDeadUrl, R"(["member.created","member.deleted"])"), "eventTypes[1]"},
           {endpoint_body("club-b", kDeadUrl, R"("member.created")"), "eventTypes"},
           {endpoint_body("club-b", kDeadUrl, "", long_description), "description"},
           {Json().str("url", kDeadUrl).done(), "partnerRef"},
           {Json().str("partnerRef", "club-b").done(), "url"},
           {Json().str("partnerRef", "club-b").str("url", kDeadUrl).raw("x", R"({"clubId":1})").done(), "clubId"},
       }) {
    expect_invalid(post(c, kEndpoints, b.body), b.field);
  }
  // The key's club decides: another partnerRef is partner_not_found.
  EXPECT_ERROR(post(c, kEndpoints, endpoint_body("club-a", kDeadUrl)), 404, "partner_not_found");

  const std::string id = s(create(c, "club-b"), "endpointId");
  expect_invalid(post(c, path_of(id), Json().str("partnerRef", "club-b").str("status", "deleted").done()), "status");
  expect_invalid(post(c, path_of(id, "replay"), Json().str("partnerRef", "club-b").str("since", "yesterday").done()),
                 "since");
  expect_invalid(post(c, path_of(id, "replay"), ref_body("club-b")), "since");
  expect_invalid(c.get(path_of(id, "deliveries") + "?limit=0"), "limit");
  expect_invalid(c.get(path_of(id, "deliveries") + "?before=x"), "before");
  // (Bad percent-encoding in a path never gets here: nginx refuses it.)
  expect_invalid(c.get(path_of(std::string(129, 'w'))), "endpointId");
  expect_invalid(c.get(path_of("we%01x")), "endpointId");
  EXPECT_ERROR(c.get(std::string(kEndpoints) + "?clubId=1"), 400, "invalid_request");
  EXPECT_ERROR(post(c, path_of(id, "rotate-secret"), ref_body("club-a")), 404, "partner_not_found");
  EXPECT_ERROR(c.get(path_of("we_no_such_endpoint")), 404, "webhook_endpoint_not_found");
  EXPECT_ERROR(post(c, path_of("we_no_such_endpoint", "replay"),
                    Json().str("partnerRef", "club-b").str("since", "2026-01-01T00:00:00Z").done()),
               404, "webhook_endpoint_not_found");

  // Methods and paths.
  EXPECT_ERROR(c.send("PUT", kEndpoints, "", c.signed_headers("PUT", kEndpoints, "")), 405, "method_not_allowed");
  EXPECT_ERROR(c.get(path_of(id, "rotate-secret")), 405, "method_not_allowed");
  EXPECT_ERROR(c.get(path_of(id, "replay")), 405, "method_not_allowed");
  EXPECT_ERROR(post(c, path_of(id, "deliveries"), ref_body("club-b")), 405, "method_not_allowed");
  EXPECT_ERROR(post(c, "/api/v1/events", ref_body("club-b")), 405, "method_not_allowed");
  EXPECT_ERROR(c.get(path_of(id, "unknown")), 404, "not_found");
  EXPECT_ERROR(c.get(std::string(kEndpoints) + "/"), 404, "not_found");

  cr_expect_eq(post(c, path_of(id, "delete"), ref_body("club-b")).status, 200);
}

// Production (nginx of the test's own, a database of its own): a URL
// whose IP literal every delivery would refuse to connect to is refused at
// creation and at update, however the literal is spelt; a public literal
// and a name are created.
Test(webhook_endpoints, production_refuses_every_spelling_of_a_private_literal, .timeout = 120) {
  Database db("whprod");
  cr_assert_eq(db.migrate().rc, 0);
  mrctl(db.dsn(), "club create --ref club-p --name P --earn-rate-bp 100 --currencies GBP");
  const std::string key = mrctl(db.dsn(), "key issue --ref club-p --env production");
  NodeConf conf;
  conf.environment = "production";
  conf.catalogue_dsn = db.dsn();
  conf.ledger_dsn = db.dsn();
  Node node(conf);
  node.start();
  MrClient c(node.base_url(), json_field(key, "keyId"), json_field(key, "secret"));
  for (const char* host : {"[::127.0.0.1]", "[100::1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "[fe80::1%25eth0]",
                           "0", "0177.0.0.1", "017700000001", "0x7f.0.0.1", "127.000.000.001", "127.0.1",
                           "127.0.0.1.", "127.1", "2130706433", "0x7f000001"}) {
    const std::string url = std::string("https://") + host + ":35051/h";
    expect_invalid(post(c, kEndpoints, endpoint_body("club-p", url)), "url");
  }
  const std::string id = s(create(c, "club-p", "https://8.8.8.8:35051/h"), "endpointId");
  s(create(c, "club-p", "https://[2606:4700::1]:35051/h"), "endpointId");
  s(create(c, "club-p", "https://hooks.example.com/h"), "endpointId");
  expect_invalid(post(c, path_of(id), Json().str("partnerRef", "club-p").str("url", "https://127.1:35051/h").done()),
                 "url");
  const auto refused = post(c, kEndpoints, endpoint_body("club-p", "https://0x7f.1:35051/h"));
  cr_expect(refused.body.find("loopback") != std::string::npos, "names the class: %s", refused.body.c_str());
  cr_expect(refused.body.find("0x7f") == std::string::npos, "not the spelling: %s", refused.body.c_str());
}

// At most 16 live endpoints per club; a deleted one frees its place.
// club-h's endpoints are this test's alone.
Test(webhook_endpoints, sixteen_per_club) {
  auto c = client("H");
  auto existing = data_of(c.get(kEndpoints));
  for (const auto& e : existing["entries"].GetArray()) {
    cr_assert_eq(post(c, path_of(s(e, "endpointId"), "delete"), ref_body("club-h")).status, 200);
  }
  std::vector<std::string> ids;
  for (int i = 0; i < 16; ++i) ids.push_back(s(create(c, "club-h"), "endpointId"));
  auto over = post(c, kEndpoints, endpoint_body("club-h", kDeadUrl, R"(["points.adjusted"])"));
  EXPECT_ERROR(over, 400, "invalid_request");
  cr_expect_eq(data_of(c.get(kEndpoints))["entries"].Size(), 16u);
  cr_assert_eq(post(c, path_of(ids.back(), "delete"), ref_body("club-h")).status, 200);
  ids.pop_back();
  ids.push_back(s(create(c, "club-h"), "endpointId"));
  for (const auto& id : ids) cr_expect_eq(post(c, path_of(id, "delete"), ref_body("club-h")).status, 200);
  cr_expect_eq(data_of(c.get(kEndpoints))["entries"].Size(), 0u);
}

Test(webhook_endpoints, another_club_sees_nothing) {
  auto b = client("B"), a = client("A");
  const std::string id = s(create(b, "club-b"), "endpointId");
  EXPECT_ERROR(a.get(path_of(id)), 404, "webhook_endpoint_not_found");
  EXPECT_ERROR(a.get(path_of(id, "deliveries")), 404, "webhook_endpoint_not_found");
  EXPECT_ERROR(post(a, path_of(id), Json().str("partnerRef", "club-a").str("status", "disabled").done()), 404,
               "webhook_endpoint_not_found");
  EXPECT_ERROR(post(a, path_of(id, "rotate-secret"), ref_body("club-a")), 404, "webhook_endpoint_not_found");
  EXPECT_ERROR(post(a, path_of(id, "replay"), Json().str("partnerRef", "club-a").str("since", "2026-01-01T00:00:00Z").done()),
               404, "webhook_endpoint_not_found");
  EXPECT_ERROR(post(a, path_of(id, "delete"), ref_body("club-a")), 404, "webhook_endpoint_not_found");
  cr_expect(!listed(a, id));
  // Untouched by all that.
  auto still = data_of(b.get(path_of(id)));
  cr_expect_eq(s(still, "status"), std::string("enabled"));
  cr_expect_eq(post(b, path_of(id, "delete"), ref_body("club-b")).status, 200);
}

namespace {

struct Event {
  std::string id, type, member;
  std::int64_t sequence = 0;
};

// One page from `after` ("" for none); appends its entries, returns nextAfter ("" for null).
std::string events_page(MrClient& c, const std::string& after, const std::string& more, std::vector<Event>& out,
                        std::size_t* page_size = nullptr) {
  const std::string path = "/api/v1/events?" + more + (after.empty() ? "" : "&after=" + after);
  auto r = c.get(path);
  cr_assert_eq(r.status, 200, "%s: %s", path.c_str(), r.body.c_str());
  auto d = data_of(r);
  cr_assert(d["entries"].IsArray(), "%s", r.body.c_str());
  if (page_size != nullptr) *page_size = d["entries"].Size();
  for (const auto& e : d["entries"].GetArray()) {
    Event ev;
    ev.id = s(e, "id");
    ev.type = s(e, "type");
    cr_expect(ev.id.starts_with("evt_"), "%s", ev.id.c_str());
    cr_expect_eq(s(e, "environment"), std::string("sandbox"));
    cr_expect(s(e, "createdAt").ends_with("Z"));
    ev.member = s(e["data"], "externalMemberId");
    ev.sequence = i64(e["data"], "memberSequence");
    out.push_back(ev);
  }
  return d["nextAfter"].IsNull() ? after : std::string(d["nextAfter"].GetString());
}

// nextAfter at the end of what is listed now.
std::string end_cursor(MrClient& c) {
  std::vector<Event> skipped;
  std::string cursor;
  for (;;) {
    std::size_t n = 0;
    cursor = events_page(c, cursor, "limit=100", skipped, &n);
    if (n < 100) return cursor;
  }
}

}  // namespace

// club-g's events are read only here: other tests may write club-g's
// books meanwhile, so only this test's member is counted.
Test(events_api, paging_with_limit_types_and_after, .timeout = 120) {
  auto c = client("G");
  const std::string start = end_cursor(c);
  const std::string m = onboard_member(c, "club-g");
  const std::string tx1 = unique("tx"), tx2 = unique("tx");
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-g", m, tx1, 1000)).status, 200);
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-g", m, tx2, 2000)).status, 200);
  cr_assert_eq(post(c, "/api/v1/transactions/reversed", reverse_body("club-g", m, tx1, 0)).status, 200);
  auto upd = post(c, "/api/v1/members", member_body("club-g", m, false));
  cr_assert_eq(upd.status, 200, "%s", upd.body.c_str());
  const std::multiset<std::string> want = {"member.created", "transaction.settled", "transaction.settled",
                                           "transaction.reversed", "member.updated"};

  // Pages of two from the start: each of the member's five events once,
  // its memberSequence 1..5. Events are listed a moment after commit.
  std::vector<Event> seen;
  std::string cursor = start;
  std::vector<Event> mine;
  const bool all = poll_until(
      [&] {
        std::size_t n = 0;
        do {
          cursor = events_page(c, cursor, "limit=2", seen, &n);
          cr_assert_leq(n, 2u, "limit=2 gave %zu", n);
        } while (n == 2);
        mine.clear();
        for (const auto& e : seen) {
          if (e.member == m) mine.push_back(e);
        }
        return mine.size() >= 5;
      },
      std::chrono::seconds(20), std::chrono::milliseconds(200));
  cr_assert(all, "saw %zu of the member's 5 events", mine.size());
  cr_expect_eq(mine.size(), 5u);
  std::set<std::string> ids;
  for (const auto& e : seen) cr_expect(ids.insert(e.id).second, "event %s listed twice", e.id.c_str());
  std::multiset<std::string> types;
  std::set<std::int64_t> sequences;
  for (const auto& e : mine) {
    types.insert(e.type);
    sequences.insert(e.sequence);
  }
  cr_expect(types == want, "types of the member's events");
  cr_expect(sequences == (std::set<std::int64_t>{1, 2, 3, 4, 5}), "memberSequence 1..5");
  // Paging on from the last nextAfter brings none of them again.
  std::vector<Event> later;
  events_page(c, cursor, "limit=100", later);
  for (const auto& e : later) cr_expect(e.member != m, "event %s listed again", e.id.c_str());

  // types: only those, and all of the member's of those types.
  std::vector<Event> filtered;
  std::string fc = start;
  for (std::size_t n = 100; n == 100;) fc = events_page(c, fc, "limit=100&types=transaction.settled,transaction.reversed", filtered, &n);
  std::size_t mine_filtered = 0;
  for (const auto& e : filtered) {
    cr_expect(e.type == "transaction.settled" || e.type == "transaction.reversed", "%s", e.type.c_str());
    if (e.member == m) ++mine_filtered;
  }
  cr_expect_eq(mine_filtered, 3u);

  // Unknown parameters are ignored; limit=1 gives one at most.
  std::vector<Event> one;
  std::size_t n = 0;
  events_page(c, start, "limit=1&foo=bar", one, &n);
  cr_expect_leq(n, 1u);
}

Test(events_api, refusals) {
  auto c = client("G");
  expect_invalid(c.get("/api/v1/events?after=not-a-cursor"), "after");
  expect_invalid(c.get("/api/v1/events?after=cur_" + std::string(48, 'f')), "after");
  // Well formed but older than the 30 days events are kept.
  const auto old_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          (std::chrono::system_clock::now() - std::chrono::hours(24 * 31)).time_since_epoch())
                          .count();
  char old_cursor[64];
  std::snprintf(old_cursor, sizeof old_cursor, "cur_%016llx%016llx%016llx", 1ULL, 1ULL,
                static_cast<unsigned long long>(old_ms));
  expect_invalid(c.get(std::string("/api/v1/events?after=") + old_cursor), "after");
  expect_invalid(c.get("/api/v1/events?after=" + std::string(129, 'a')), "after");
  expect_invalid(c.get("/api/v1/events?limit=0"), "limit");
  expect_invalid(c.get("/api/v1/events?limit=ten"), "limit");
  expect_invalid(c.get("/api/v1/events?types=member.created,member.deleted"), "types");
  EXPECT_ERROR(c.get("/api/v1/events?clubId=1"), 400, "invalid_request");
  // Another club's events are never listed: club-b's member is not in club-g's.
  auto b = client("B");
  const std::string start = end_cursor(c);
  const std::string other = onboard_member(b, "club-b");
  std::vector<Event> seen_b;
  cr_expect(poll_until(
                [&] {
                  seen_b.clear();
                  std::string bc;
                  for (std::size_t n = 100; n == 100;) bc = events_page(b, bc, "limit=100&types=member.created", seen_b, &n);
                  for (const auto& e : seen_b) {
                    if (e.member == other) return true;
                  }
                  return false;
                },
                std::chrono::seconds(20), std::chrono::milliseconds(200)),
            "club-b lists its own member");
  std::vector<Event> seen_g;
  events_page(c, start, "limit=100", seen_g);
  for (const auto& e : seen_g) cr_expect(e.member != other, "club-g lists club-b's event %s", e.id.c_str());
}

// The secret a create shows is the one deliveries are signed with, and
// after a rotation both sign (contract section 10). club-e's endpoints are
// this test's alone.
Test(webhook_endpoints, a_created_endpoint_gets_deliveries_signed_with_its_secret, .timeout = 120) {
  WebhookReceiver receiver;
  auto c = client("E");
  auto created = create(c, "club-e", receiver.url("/mr"), R"(["member.created"])");
  const std::string id = s(created, "endpointId"), secret = s(created, "secret");
  const auto verify = [&](const std::string& member, const std::vector<std::string>& secrets) {
    ReceivedHook hook;
    const bool got = receiver.wait_for(
        [&](const std::vector<ReceivedHook>& all) {
          for (const auto& h : all) {
            if (h.body.find("\"" + member + "\"") != std::string::npos) {
              hook = h;
              return true;
            }
          }
          return false;
        },
        std::chrono::seconds(30));
    cr_assert(got, "no delivery for %s", member.c_str());
    const auto sigs = signatures_of(hook.header("webhook-signature"));
    for (const auto& sec : secrets) {
      const std::string want =
          standard_webhooks_signature(sec, hook.header("webhook-id"), hook.header("webhook-timestamp"), hook.body);
      cr_expect(std::find(sigs.begin(), sigs.end(), want) != sigs.end(), "no signature by %s in %s", sec.c_str(),
                hook.header("webhook-signature").c_str());
    }
    cr_expect_eq(sigs.size(), secrets.size(), "%s", hook.header("webhook-signature").c_str());
  };
  verify(onboard_member(c, "club-e"), {secret});
  const std::string rotated = s(data_of(post(c, path_of(id, "rotate-secret"), ref_body("club-e"))), "secret");
  verify(onboard_member(c, "club-e"), {rotated, secret});
  // The attempts are on record, newest first, paged as histories. The
  // receiver has a request before the worker records its attempt.
  cr_assert(poll_until([&] { return data_of(c.get(path_of(id, "deliveries")))["entries"].Size() >= 2; },
                       std::chrono::seconds(10)),
            "two attempts on record");
  auto del = data_of(c.get(path_of(id, "deliveries") + "?limit=1"));
  cr_assert_eq(del["entries"].Size(), 1u);
  const auto& newest = del["entries"][0];
  cr_expect_eq(i64(newest, "status"), 200);
  cr_expect(s(newest, "eventId").starts_with("evt_"));
  cr_expect(newest["error"].IsNull() && newest["durationMs"].IsInt64() && newest["attempt"].IsInt64());
  cr_assert(del["nextBefore"].IsInt64(), "nextBefore is epoch ms: %s", c.get(path_of(id, "deliveries") + "?limit=1").body.c_str());
  auto older = data_of(c.get(path_of(id, "deliveries") + "?limit=1&before=" +
                             std::to_string(del["nextBefore"].GetInt64())));
  cr_assert_eq(older["entries"].Size(), 1u);
  cr_expect_lt(s(older["entries"][0], "attemptedAt"), s(newest, "attemptedAt"), "strictly older");
  cr_expect_eq(post(c, path_of(id, "delete"), ref_body("club-e")).status, 200);
}
