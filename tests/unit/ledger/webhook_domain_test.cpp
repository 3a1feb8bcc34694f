// The events API and webhook endpoint API in the pure domain (contract
// section 10): routing and methods, every body rule with a failing and a
// passing case, the events query, and rendering with the secret opened
// for create and rotate and never shown elsewhere. WebhookSecrets is faked.
#include <criterion/criterion.h>

#include <string>
#include <utility>

#include <rapidjson/document.h>

#include "ledger/api.hpp"
#include "ledger/events_query.hpp"
#include "ledger/routes.hpp"
#include "ledger/statements.hpp"
#include "ledger/webhook_render.hpp"
#include "ledger/webhook_requests.hpp"
#include "tests/unit/ledger/domain_requests.hpp"

using namespace mr::ledger;
using mr::ledger::test::code_of;
using mr::ledger::test::immediate;
using mr::ledger::test::pending_query;

namespace {

// Seals as "sealed:<id>"; only that opens, to "whsec_plain-<id>".
class FakeSecrets final : public WebhookSecrets {
 public:
  std::string new_endpoint_id() const override { return fail_id ? "" : "we_new"; }
  std::string new_sealed_secret(std::string_view endpoint_id) const override {
    ++sealed_count;
    return fail_seal ? "" : "sealed:" + std::string(endpoint_id);
  }
  std::optional<std::string> open(std::string_view endpoint_id, std::string_view sealed) const override {
    if (sealed != "sealed:" + std::string(endpoint_id)) return std::nullopt;
    return "whsec_plain-" + std::string(endpoint_id);
  }
  bool fail_id = false, fail_seal = false;
  mutable int sealed_count = 0;
};

class FakeResult final : public ResultView {
 public:
  explicit FakeResult(std::string json) : json_(std::move(json)) {}
  int rows() const override { return 1; }
  bool is_null(int, int) const override { return false; }
  std::string_view value(int, int) const override { return json_; }

 private:
  std::string json_;
};

const FakeSecrets kSecrets;

Request req(std::string_view method, std::string_view path, std::string_view body = "", std::string_view query = "",
            std::string_view environment = "production", const WebhookSecrets* secrets = &kSecrets) {
  Request r = test::req(method, path, body, query);
  r.environment = environment;
  r.webhook_secrets = secrets;
  return r;
}


// The pending statement's query; fails the test when the answer was immediate.
Query query_of(const Request& r) {
  Prepared p = prepare(r);
  auto* pending = std::get_if<std::unique_ptr<Pending>>(&p);
  if (pending == nullptr) {
    const auto& resp = std::get<Response>(p);
    cr_assert_fail("answered at once: %d %s", resp.status, resp.body.c_str());
  }
  return (*pending)->query();
}

Response render(const Request& r, const std::string& result) {
  Prepared p = prepare(r);
  auto* pending = std::get_if<std::unique_ptr<Pending>>(&p);
  cr_assert(pending != nullptr);
  return (*pending)->render(FakeResult(result), "rid-now");
}

rapidjson::Document json(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  return d;
}


std::string fields_of(const Response& r) {
  auto d = json(r.body);
  std::string out;
  if (d.IsObject() && d.HasMember("error") && d["error"].HasMember("details")) {
    for (const auto& p : d["error"]["details"].GetArray()) out += std::string(p["field"].GetString()) + ";";
  }
  return out;
}

std::string problems_of(const Response& r) {
  auto d = json(r.body);
  std::string out;
  if (d.IsObject() && d.HasMember("error") && d["error"].HasMember("details")) {
    for (const auto& p : d["error"]["details"].GetArray()) out += std::string(p["problem"].GetString()) + ";";
  }
  return out;
}

const std::string kCreate = R"({"partnerRef":"club-a","url":"https://hooks.example.com/mr"})";

}  // namespace

Test(webhook_routing, routes_and_labels) {
  cr_expect_eq(route_of("GET", "/api/v1/events"), Route::events_list);
  cr_expect_eq(route_of("GET", "/api/v1/webhook-endpoints"), Route::webhook_endpoints_list);
  cr_expect_eq(route_of("POST", "/api/v1/webhook-endpoints"), Route::webhook_endpoints_create);
  cr_expect_eq(route_of("GET", "/api/v1/webhook-endpoints/we_1"), Route::webhook_endpoint_get);
  cr_expect_eq(route_of("POST", "/api/v1/webhook-endpoints/we_1"), Route::webhook_endpoint_update);
  cr_expect_eq(route_of("POST", "/api/v1/webhook-endpoints/we_1/rotate-secret"),
               Route::webhook_endpoint_rotate_secret);
  cr_expect_eq(route_of("POST", "/api/v1/webhook-endpoints/we_1/delete"), Route::webhook_endpoint_delete);
  cr_expect_eq(route_of("GET", "/api/v1/webhook-endpoints/we_1/deliveries"), Route::webhook_endpoint_deliveries);
  cr_expect_eq(route_of("POST", "/api/v1/webhook-endpoints/we_1/replay"), Route::webhook_endpoint_replay);
  for (const char* other : {"/api/v1/events/", "/api/v1/events/x", "/api/v1/webhook-endpoints/",
                            "/api/v1/webhook-endpoints/we_1/", "/api/v1/webhook-endpoints/we_1/other",
                            "/api/v1/webhook-endpoints/we_1/replay/x", "/api/v1/webhook-endpoint"}) {
    cr_expect_eq(route_of(other), Route::other, "%s", other);
    cr_expect_eq(immediate(req("GET", other)).status, 404, "%s", other);
    cr_expect_eq(code_of(immediate(req("GET", other))), std::string("not_found"), "%s", other);
  }
  cr_expect_eq(route_label(Route::webhook_endpoint_rotate_secret), std::string_view("webhook_endpoint_rotate_secret"));
}

Test(webhook_routing, methods) {
  struct Case {
    const char* method;
    const char* path;
  };
  for (const Case c : {Case{"POST", "/api/v1/events"}, Case{"PUT", "/api/v1/webhook-endpoints"},
                       Case{"DELETE", "/api/v1/webhook-endpoints/we_1"},
                       Case{"GET", "/api/v1/webhook-endpoints/we_1/rotate-secret"},
                       Case{"GET", "/api/v1/webhook-endpoints/we_1/delete"},
                       Case{"POST", "/api/v1/webhook-endpoints/we_1/deliveries"},
                       Case{"GET", "/api/v1/webhook-endpoints/we_1/replay"},
                       // The method is judged before the id.
                       Case{"GET", "/api/v1/webhook-endpoints/%zz/replay"}}) {
    const auto resp = immediate(req(c.method, c.path, kCreate));
    cr_expect_eq(resp.status, 405, "%s %s", c.method, c.path);
    cr_expect_eq(code_of(resp), std::string("method_not_allowed"), "%s %s", c.method, c.path);
  }
}

Test(webhook_routing, reads_carry_the_club) {
  auto q = query_of(req("GET", "/api/v1/webhook-endpoints"));
  cr_expect_eq(q.sql, std::string(sql::webhook_endpoints));
  cr_expect_eq(*q.params[0], std::string("7"));
  cr_expect_eq(*q.params[1], std::string("rid"));
  cr_expect(q.batch == mr::ledger::BatchKind::none);

  q = query_of(req("GET", "/api/v1/webhook-endpoints/we%5F1"));
  cr_expect_eq(q.sql, std::string(sql::webhook_endpoint));
  cr_expect_eq(*q.params[1], std::string("we_1"), "the id is percent-decoded");

  q = query_of(req("GET", "/api/v1/webhook-endpoints/we_1/deliveries", "", "limit=500&before=123&x=%zz"));
  cr_expect_eq(q.sql, std::string(sql::webhook_deliveries));
  cr_expect_eq(*q.params[1], std::string("we_1"));
  cr_expect_eq(*q.params[2], std::string("100"), "limit is capped at 100");
  cr_expect_eq(*q.params[3], std::string("123"));

  q = query_of(req("GET", "/api/v1/webhook-endpoints/we_1/deliveries"));
  cr_expect_eq(*q.params[2], std::string("50"));
  cr_expect(!q.params[3].has_value(), "no before: NULL");

  for (const char* bad : {"limit=0", "limit=1.5", "before=-1", "before=x"}) {
    const auto resp = immediate(req("GET", "/api/v1/webhook-endpoints/we_1/deliveries", "", bad));
    cr_expect_eq(resp.status, 400, "%s", bad);
  }
  const auto bad_id = immediate(req("GET", "/api/v1/webhook-endpoints/%zz"));
  cr_expect_eq(bad_id.status, 400);
  cr_expect_eq(fields_of(bad_id), std::string("endpointId;"));
  const auto club = immediate(req("GET", "/api/v1/webhook-endpoints", "", "clubId=8"));
  cr_expect_eq(fields_of(club), std::string("clubId;"));
}

Test(events_query, limits_types_and_cursor) {
  auto q = query_of(req("GET", "/api/v1/events"));
  cr_expect_eq(q.sql, std::string(sql::events));
  cr_expect_eq(*q.params[0], std::string("7"));
  cr_expect_eq(*q.params[1], std::string("production"), "the deployment's environment");
  cr_expect(!q.params[2].has_value(), "no after: from the oldest");
  cr_expect_eq(*q.params[3], std::string("50"));
  cr_expect(!q.params[4].has_value(), "no types: all");
  cr_expect_eq(*q.params[5], std::string("rid"));

  q = query_of(req("GET", "/api/v1/events", "", "after=cur_00ab&limit=7&types=member.created%2Cpoints.adjusted,member.created"));
  cr_expect_eq(*q.params[2], std::string("cur_00ab"));
  cr_expect_eq(*q.params[3], std::string("7"));
  cr_expect_eq(*q.params[4], std::string("member.created,points.adjusted"), "each type once");

  q = query_of(req("GET", "/api/v1/events", "", "limit=99999999999999999999999&unknown=%zz&filter=bogus"));
  cr_expect_eq(*q.params[3], std::string("100"), "unknown parameters are ignored, even badly encoded");

  struct Bad {
    const char* query;
    const char* field;
  };
  for (const Bad b : {Bad{"limit=0", "limit;"}, Bad{"limit=-3", "limit;"}, Bad{"limit=", "limit;"},
                      Bad{"limit=1e2", "limit;"}, Bad{"types=member.created,nope", "types;"},
                      Bad{"types=", "types;"}, Bad{"types=member.created,", "types;"},
                      Bad{"types=MEMBER.CREATED", "types;"}, Bad{"after=", "after;"},
                      Bad{"after=%01cur", "after;"}, Bad{"after=%zz", "after;"}}) {
    const auto resp = immediate(req("GET", "/api/v1/events", "", b.query));
    cr_expect_eq(resp.status, 400, "%s", b.query);
    cr_expect_eq(fields_of(resp), std::string(b.field), "%s", b.query);
  }
  const std::string long_after = "after=" + std::string(129, 'a');
  cr_expect_eq(fields_of(immediate(req("GET", "/api/v1/events", "", long_after))), std::string("after;"));
  const std::string max_after = "after=" + std::string(128, 'a');
  cr_expect_eq(*query_of(req("GET", "/api/v1/events", "", max_after)).params[2], std::string(128, 'a'));
  cr_expect_eq(fields_of(immediate(req("GET", "/api/v1/events", "", "clubId=1"))), std::string("clubId;"));
}

Test(webhook_urls, production_rules) {
  for (const char* ok : {"https://hooks.example.com/mr", "HTTPS://Hooks.Example.COM", "https://example.com:8443/a?b=c&d=%20",
                         "https://93.184.216.34/hook", "https://[2606:2800:220:1:248:1893:25c8:1946]:443/x",
                         "https://a.b.c.d-e.example/x/y/z;p=1"}) {
    cr_expect(!webhook_url_problem(ok, false).has_value(), "%s: %s", ok,
              webhook_url_problem(ok, false).value_or("").c_str());
  }
  for (const char* bad :
       {"", "http://hooks.example.com", "ftp://example.com", "hooks.example.com", "https://",
        "https:///path", "https://user:pw@example.com/", "https://user@example.com", "https://example.com/#frag",
        "https://exa mple.com", "https://example.com/a b", "https://example.com:0/", "https://example.com:65536/",
        "https://example.com:/", "https://example.com:12ab/", "https://localhost/", "https://api.localhost/",
        "https://127.0.0.1/", "https://10.1.2.3/", "https://192.168.1.1/", "https://172.16.0.1/",
        "https://169.254.169.254/latest", "https://100.64.0.1/", "https://0.0.0.0/", "https://224.0.0.1/",
        "https://[::1]/", "https://[fe80::1]/", "https://[fd00::1]/", "https://[::ffff:127.0.0.1]/",
        "https://[::1", "https://[nothex]/", "https://exa_mple..com/", "https://.example.com/",
        "https://example.com/%zz", "https://example.com/a<b>", "https://ex\xc3\xa4mple.com/"}) {
    cr_expect(webhook_url_problem(bad, false).has_value(), "accepted %s", bad);
  }
  cr_expect(!webhook_url_problem("https://a.example/" + std::string(2048 - 18, 'x'), false).has_value());
  cr_expect_eq(webhook_url_problem("https://a.example/" + std::string(2048 - 17, 'x'), false).value_or(""),
               std::string("must be at most 2048 bytes"));
  cr_expect_eq(webhook_url_problem("http://hooks.example.com", false).value_or(""),
               std::string("must be an https:// URL (http:// is allowed in sandbox only)"), "the message says the rule");
}

Test(webhook_urls, sandbox_allows_http_and_loopback) {
  for (const char* ok : {"http://127.0.0.1:8080/hook", "http://localhost/x", "https://10.0.0.1/", "http://[::1]:9000/"}) {
    cr_expect(!webhook_url_problem(ok, true).has_value(), "%s", ok);
  }
  for (const char* bad : {"ftp://localhost/", "http://user@localhost/", "http://localhost/#x", "http://"}) {
    cr_expect(webhook_url_problem(bad, true).has_value(), "accepted %s", bad);
  }
  const auto through_router = immediate(req("POST", "/api/v1/webhook-endpoints",
                                            R"({"partnerRef":"club-a","url":"http://127.0.0.1:9/"})"));
  cr_expect_eq(fields_of(through_router), std::string("url;"), "production refuses http");
  cr_expect_eq(query_of(req("POST", "/api/v1/webhook-endpoints", R"({"partnerRef":"club-a","url":"http://127.0.0.1:9/"})",
                            "", "sandbox"))
                   .sql,
               std::string(sql::write));
}

Test(webhook_bodies, create_command) {
  FakeSecrets secrets;
  const auto q = query_of(req("POST", "/api/v1/webhook-endpoints",
                              R"({"partnerRef":"club-a","url":"https://h.example/x","description":"",)"
                              R"("eventTypes":["points.adjusted","member.created","points.adjusted"],"extra":1})",
                              "", "production", &secrets));
  cr_expect_eq(q.sql, std::string(sql::write));
  cr_expect_eq(*q.params[0], std::string("webhook_create"));
  cr_expect_eq(*q.params[1], std::string("7"));
  cr_expect_eq(*q.params[2], std::string("club-a"));
  cr_expect_eq(*q.params[3], std::string("k"));
  cr_expect_eq(*q.params[4], std::string("fp"));
  cr_expect(q.batch == mr::ledger::BatchKind::none);
  auto cmd = json(*q.params[6]);
  cr_assert(cmd.IsObject());
  cr_expect_str_eq(cmd["partnerRef"].GetString(), "club-a");
  cr_expect_str_eq(cmd["endpointId"].GetString(), "we_new");
  cr_expect_str_eq(cmd["secretSealed"].GetString(), "sealed:we_new");
  cr_expect_str_eq(cmd["url"].GetString(), "https://h.example/x");
  cr_expect(cmd["description"].IsNull(), "an empty description is none");
  cr_assert_eq(cmd["eventTypes"].Size(), 2u, "duplicates are dropped");
  cr_expect_str_eq(cmd["eventTypes"][0].GetString(), "points.adjusted");
  cr_expect_str_eq(cmd["eventTypes"][1].GetString(), "member.created");
  cr_expect(!cmd.HasMember("extra"));
  cr_expect_eq(secrets.sealed_count, 1);
  // No plaintext secret in any parameter: only the sealed form.
  for (const auto& p : q.params) cr_expect(!p || p->find("whsec_") == std::string::npos);

  const auto plain = json(*query_of(req("POST", "/api/v1/webhook-endpoints", kCreate)).params[6]);
  cr_expect(plain["eventTypes"].IsArray() && plain["eventTypes"].Empty(), "absent: every type");
  cr_expect(!plain.HasMember("description"));
}

Test(webhook_bodies, create_refusals) {
  struct Bad {
    std::string body;
    const char* fields;
  };
  const std::string desc257(257, 'd');
  for (const Bad& b : std::initializer_list<Bad>{
           {R"({"url":"https://h.example"})", "partnerRef;"},
           {R"({"partnerRef":"club-a"})", "url;"},
           {R"({"partnerRef":"club-a","url":5})", "url;"},
           {R"({"partnerRef":"club-a","url":"https://h.example","eventTypes":"member.created"})", "eventTypes;"},
           {R"({"partnerRef":"club-a","url":"https://h.example","eventTypes":["member.created","nope"]})",
            "eventTypes[1];"},
           {R"({"partnerRef":"club-a","url":"https://h.example","eventTypes":[1]})", "eventTypes[0];"},
           {R"({"partnerRef":"club-a","url":"https://h.example","description":5})", "description;"},
           {R"({"partnerRef":"club-a","url":"https://h.example","description":")" + desc257 + R"("})", "description;"},
           {R"({"partnerRef":"club-a","url":"https://h.example","description":"\udc00"})", "description;"},
           {R"({"partnerRef":"club-a","url":"https://h.example","description":"a\u0000b"})", "description;"},
           {R"({"partnerRef":"","url":"ftp://x","eventTypes":{}})", "partnerRef;url;eventTypes;"},
       }) {
    const auto resp = immediate(req("POST", "/api/v1/webhook-endpoints", b.body));
    cr_expect_eq(resp.status, 400, "%s", b.body.c_str());
    cr_expect_eq(code_of(resp), std::string("invalid_request"));
    cr_expect_eq(fields_of(resp), std::string(b.fields), "%s -> %s", b.body.c_str(), resp.body.c_str());
  }
  std::string many = R"({"partnerRef":"club-a","url":"https://h.example","eventTypes":[)";
  for (int i = 0; i < 65; ++i) many += std::string(i ? "," : "") + "\"member.created\"";
  many += "]}";
  cr_expect_eq(problems_of(immediate(req("POST", "/api/v1/webhook-endpoints", many))),
               std::string("must hold at most 64 items;"));
  const std::string desc256(256, 'd');
  cr_expect_eq(query_of(req("POST", "/api/v1/webhook-endpoints",
                            R"({"partnerRef":"club-a","url":"https://h.example","description":")" + desc256 + "\"}"))
                   .sql,
               std::string(sql::write));
  // clubId anywhere, and bodies that are not one JSON object.
  for (const char* bad : {R"({"partnerRef":"club-a","url":"https://h.example","x":{"clubId":1}})", "[]", "{",
                          R"({"partnerRef":"club-a","partnerRef":"club-a","url":"https://h.example"})", ""}) {
    const auto resp = immediate(req("POST", "/api/v1/webhook-endpoints", bad));
    cr_expect_eq(resp.status, 400, "%s", bad);
  }
}

Test(webhook_bodies, update_rotate_delete_replay) {
  auto q = query_of(req("POST", "/api/v1/webhook-endpoints/we_1",
                        R"({"partnerRef":"club-a","status":"disabled","description":null,"eventTypes":[]})"));
  auto cmd = json(*q.params[6]);
  cr_expect_eq(*q.params[0], std::string("webhook_update"));
  cr_expect_str_eq(cmd["endpointId"].GetString(), "we_1");
  cr_expect_str_eq(cmd["status"].GetString(), "disabled");
  cr_expect(cmd["description"].IsNull(), "null clears the description");
  cr_expect(cmd["eventTypes"].Empty(), "[]: every type");
  cr_expect(!cmd.HasMember("url") && !cmd.HasMember("secretSealed"));

  cmd = json(*query_of(req("POST", "/api/v1/webhook-endpoints/we_1", R"({"partnerRef":"club-a"})")).params[6]);
  cr_expect(!cmd.HasMember("eventTypes") && !cmd.HasMember("description") && !cmd.HasMember("status"),
            "absent fields stay as they are");
  for (const char* bad : {R"({"partnerRef":"club-a","status":"deleted"})", R"({"partnerRef":"club-a","status":true})",
                          R"({"partnerRef":"club-a","url":"http://h.example"})"}) {
    cr_expect_eq(immediate(req("POST", "/api/v1/webhook-endpoints/we_1", bad)).status, 400, "%s", bad);
  }

  FakeSecrets secrets;
  q = query_of(req("POST", "/api/v1/webhook-endpoints/we_9/rotate-secret", R"({"partnerRef":"club-a"})", "",
                   "production", &secrets));
  cmd = json(*q.params[6]);
  cr_expect_eq(*q.params[0], std::string("webhook_rotate"));
  cr_expect_str_eq(cmd["endpointId"].GetString(), "we_9");
  cr_expect_str_eq(cmd["secretSealed"].GetString(), "sealed:we_9", "sealed for the path's endpoint");

  q = query_of(req("POST", "/api/v1/webhook-endpoints/we_9/delete", R"({"partnerRef":"club-a"})"));
  cr_expect_eq(*q.params[0], std::string("webhook_delete"));
  const auto doc1 = json(*q.params[6]);  // outlives the macro's late read
  cr_expect_str_eq(doc1["endpointId"].GetString(), "we_9");

  q = query_of(req("POST", "/api/v1/webhook-endpoints/we_9/replay",
                   R"({"partnerRef":"club-a","since":"2026-11-20T10:00:00.5+00:00"})"));
  cmd = json(*q.params[6]);
  cr_expect_eq(*q.params[0], std::string("webhook_replay"));
  cr_expect_str_eq(cmd["since"].GetString(), "2026-11-20T10:00:00.5+00:00");
  for (const char* bad : {R"({"partnerRef":"club-a"})", R"({"partnerRef":"club-a","since":"yesterday"})",
                          R"({"partnerRef":"club-a","since":"2026-11-20T10:00:00+01:00"})",
                          R"({"partnerRef":"club-a","since":1700000000})"}) {
    const auto resp = immediate(req("POST", "/api/v1/webhook-endpoints/we_9/replay", bad));
    cr_expect_eq(fields_of(resp), std::string("since;"), "%s", bad);
  }
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/webhook-endpoints/we_9/delete", "{}"))),
               std::string("partnerRef;"));
}

Test(webhook_bodies, secrets_unavailable_is_internal_error) {
  FakeSecrets no_id, no_seal;
  no_id.fail_id = true;
  no_seal.fail_seal = true;
  for (const WebhookSecrets* s : {static_cast<const WebhookSecrets*>(nullptr),
                                  static_cast<const WebhookSecrets*>(&no_id),
                                  static_cast<const WebhookSecrets*>(&no_seal)}) {
    const auto resp = immediate(req("POST", "/api/v1/webhook-endpoints", kCreate, "", "production", s));
    cr_expect_eq(resp.status, 500);
    cr_expect_eq(code_of(resp), std::string("internal_error"));
  }
  cr_expect_eq(immediate(req("POST", "/api/v1/webhook-endpoints/we_1/rotate-secret", R"({"partnerRef":"club-a"})", "",
                             "production", nullptr))
                   .status,
               500);
  // The body is judged first: a bad body is still invalid_request.
  cr_expect_eq(immediate(req("POST", "/api/v1/webhook-endpoints", "{}", "", "production", nullptr)).status, 400);
  // Writes that make no secret need none.
  cr_expect_eq(query_of(req("POST", "/api/v1/webhook-endpoints/we_1/delete", R"({"partnerRef":"club-a"})", "",
                            "production", nullptr))
                   .sql,
               std::string(sql::write));
}

namespace {

const std::string kEndpointJson =
    R"("url": "https://h.example/x", "status": "enabled", "createdAt": "2026-11-26T10:00:00.000Z", )"
    R"("updatedAt": "2026-11-26T10:00:00.000Z", "endpointId": "we_new", "eventTypes": [], )"
    R"("description": null, "disabledReason": null)";

std::string created_result(bool replayed) {
  return R"({"outcome": "created", "requestId": "rid-first", "data": {)" + kEndpointJson +
         R"(, "secretSealed": "sealed:we_new"})" + (replayed ? R"(, "replayed": true})" : "}");
}

}  // namespace

Test(webhook_render, create_opens_the_secret_and_replays_byte_for_byte) {
  const auto first = render(req("POST", "/api/v1/webhook-endpoints", kCreate), created_result(false));
  cr_expect_eq(first.status, 201);
  cr_expect(!first.replayed);
  auto d = json(first.body);
  cr_assert(d.IsObject() && d["ok"].IsTrue(), "%s", first.body.c_str());
  cr_expect_str_eq(d["data"]["secret"].GetString(), "whsec_plain-we_new");
  cr_expect(!d["data"].HasMember("secretSealed"));
  cr_expect(first.body.find("sealed:") == std::string::npos, "the sealed form is never shown");
  cr_expect_str_eq(d["data"]["endpointId"].GetString(), "we_new");

  const auto again = render(req("POST", "/api/v1/webhook-endpoints", kCreate), created_result(true));
  cr_expect_eq(again.status, 201);
  cr_expect(again.replayed);
  cr_expect_eq(again.body, first.body, "a replay from the database is the first answer byte for byte");
}

Test(webhook_render, rotate_reveals_other_answers_conceal) {
  const std::string rotated = R"({"outcome": "ok", "requestId": "r", "data": {)" + kEndpointJson +
                              R"(, "secretSealed": "sealed:we_new"}})";
  const auto rot = render(req("POST", "/api/v1/webhook-endpoints/we_new/rotate-secret", R"({"partnerRef":"club-a"})"),
                          rotated);
  cr_expect_eq(rot.status, 200);
  const auto doc2 = json(rot.body);  // outlives the macro's late read
  cr_expect_str_eq(doc2["data"]["secret"].GetString(), "whsec_plain-we_new");

  // A GET or an update never shows a secret, even if the result had one.
  for (const auto& r : {req("GET", "/api/v1/webhook-endpoints/we_new"),
                        req("POST", "/api/v1/webhook-endpoints/we_new", R"({"partnerRef":"club-a"})")}) {
    const auto resp = render(r, rotated);
    cr_expect_eq(resp.status, 200);
    auto d = json(resp.body);
    cr_expect(!d["data"].HasMember("secret") && !d["data"].HasMember("secretSealed"), "%s", resp.body.c_str());
    cr_expect_str_eq(d["data"]["url"].GetString(), "https://h.example/x");
  }

  // A sealed secret that does not open (another key, another endpoint): internal_error, never the sealed text.
  const std::string foreign = R"({"outcome": "ok", "requestId": "r", "data": {)" + kEndpointJson +
                              R"(, "secretSealed": "sealed:we_other"}})";
  const auto bad = render(req("POST", "/api/v1/webhook-endpoints/we_new/rotate-secret", R"({"partnerRef":"club-a"})"),
                          foreign);
  cr_expect_eq(bad.status, 500);
  cr_expect(bad.body.find("sealed:") == std::string::npos);
}

Test(webhook_render, failures_as_every_result) {
  const auto nf = render(req("GET", "/api/v1/webhook-endpoints/we_x"),
                         R"({"outcome": "webhook_endpoint_not_found", "requestId": "r0"})");
  cr_expect_eq(nf.status, 404);
  cr_expect_eq(code_of(nf), std::string("webhook_endpoint_not_found"));
  cr_expect_eq(mr::http_status(mr::ErrorCode::webhook_endpoint_not_found), 404);

  const auto replayed_nf = render(req("POST", "/api/v1/webhook-endpoints/we_x/delete", R"({"partnerRef":"club-a"})"),
                                  R"({"outcome": "webhook_endpoint_not_found", "requestId": "r0", "replayed": true})");
  cr_expect_eq(replayed_nf.status, 404);
  cr_expect(replayed_nf.replayed);
  const auto doc3 = json(replayed_nf.body);  // outlives the macro's late read
  cr_expect_str_eq(doc3["error"]["requestId"].GetString(), "r0", "a replay names the first request");

  const auto limit = render(req("POST", "/api/v1/webhook-endpoints", kCreate),
                            R"({"outcome": "invalid_request", "requestId": "r", "message": "A club has at most 16.",)"
                            R"( "details": [{"field": "url", "problem": "would be the 17th endpoint of the club"}]})");
  cr_expect_eq(limit.status, 400);
  cr_expect_eq(fields_of(limit), std::string("url;"));

  for (const char* garbage : {"", "{", "[]", R"({"outcome": "created"})", R"({"outcome": "created", "data": 1})",
                              R"({"outcome": "no_such_code"})"}) {
    cr_expect_eq(render(req("POST", "/api/v1/webhook-endpoints", kCreate), garbage).status, 500, "%s", garbage);
  }

  const auto events = render(req("GET", "/api/v1/events"),
                             R"({"outcome": "ok", "requestId": "r", "data": {"entries": [], "nextAfter": null}})");
  cr_expect_eq(events.status, 200);
  cr_expect_eq(events.body, std::string(R"({"ok":true,"data":{"entries":[],"nextAfter":null}})"));
}

// Inputs the webhook_bodies fuzz target once failed on (its corpus keeps
// them): an empty result, and one whose text is not UTF-8. Both are
// malformed: internal_error, never the bytes passed on.
Test(webhook_render, fuzz_findings) {
  for (const WebhookSecrets* s : {static_cast<const WebhookSecrets*>(&kSecrets),
                                  static_cast<const WebhookSecrets*>(nullptr)}) {
    cr_expect_eq(render_webhook_result("", "rid", s).status, 500);
    cr_expect_eq(render_webhook_result("[1]", "rid", s).status, 500);
    const std::string not_utf8 = std::string(R"({"outcome": "ok", "data": {"description": "caf)") + "\xe9" + R"("}})";
    const auto r = render_webhook_result(not_utf8, "rid", s);
    cr_expect_eq(r.status, 500);
    cr_expect_eq(code_of(r), std::string("internal_error"));
  }
}
