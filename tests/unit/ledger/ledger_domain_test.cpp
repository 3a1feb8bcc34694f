// The ledger's pure domain: routing, every field rule of contract section 1
// with a failing and a passing case, query rules and rendering.
#include <criterion/criterion.h>

#include <string>

#include <rapidjson/document.h>

#include "ledger/api.hpp"
#include "ledger/read_requests.hpp"
#include "ledger/result_render.hpp"
#include "ledger/write_requests.hpp"

using namespace mr::ledger;

namespace {

class FakeResult final : public ResultView {
 public:
  explicit FakeResult(std::string json) : json_(std::move(json)) {}
  int rows() const override { return 1; }
  bool is_null(int, int) const override { return false; }
  std::string_view value(int, int) const override { return json_; }

 private:
  std::string json_;
};

Request req(std::string_view method, std::string_view path, std::string_view body = "", std::string_view query = "") {
  Request r;
  r.method = method;
  r.path = path;
  r.body = body;
  r.query = query;
  r.club_id = 7;
  r.partner_ref = "club-a";
  r.request_id = "rid";
  r.idempotency_key = "k";
  r.fingerprint = "fp";
  return r;
}

// The immediate response, or status 0 when a statement is pending.
Response immediate(const Request& r) {
  Prepared p = prepare(r);
  if (auto* resp = std::get_if<Response>(&p)) return *resp;
  return Response{0, "", false};
}

std::string code_of(const Response& r) {
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  return d.IsObject() && d.HasMember("error") ? d["error"]["code"].GetString() : "";
}

std::string fields_of(const Response& r) {
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  std::string out;
  if (d.IsObject() && d.HasMember("error") && d["error"].HasMember("details")) {
    for (const auto& p : d["error"]["details"].GetArray()) out += std::string(p["field"].GetString()) + ";";
  }
  return out;
}

const std::string kSettle =
    R"({"partnerRef":"club-a","eventId":"e1","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":"m1"},)"
    R"("transaction":{"externalTransactionId":"t1","merchantId":"mm","merchantName":"Shop","amountMinor":AMOUNT,"currency":"GBP","settledAt":"2026-11-20T10:00:00Z"}})";

std::string settle(const std::string& amount) {
  std::string s = kSettle;
  s.replace(s.find("AMOUNT"), 6, amount);
  return s;
}

std::string member(const std::string& inner) {
  return R"({"partnerRef":"club-a","member":{"externalMemberId":"m1","firstName":"A","lastName":"B",)" + inner + "}}";
}

}  // namespace

Test(routing, unknown_and_wrong_method) {
  cr_expect_eq(immediate(req("GET", "/api/v1/nothing")).status, 404);
  cr_expect_eq(code_of(immediate(req("GET", "/api/v2/members"))), std::string("not_found"));
  cr_expect_eq(code_of(immediate(req("GET", "/api/v1/members"))), std::string("method_not_allowed"));
  cr_expect_eq(immediate(req("POST", "/api/v1/members/m1/balance")).status, 405);
  cr_expect_eq(immediate(req("DELETE", "/api/v1/transactions/settled")).status, 405);
  cr_expect_eq(immediate(req("POST", "/api/v1/redemptions", "{}")).status, 400);
  cr_expect_eq(immediate(req("GET", "/api/v1/redemptions")).status, 405);
  cr_expect_eq(immediate(req("GET", "/api/v1/redemptions/rdm_1")).status, 0);
  cr_expect_eq(immediate(req("POST", "/api/v1/members/m1/close", R"({"partnerRef":"club-a"})")).status, 0);
  cr_expect_eq(immediate(req("GET", "/api/v1/members/m1/balance")).status, 0);
}

Test(routing, statements_carry_the_club_and_key) {
  Prepared p = prepare(req("POST", "/api/v1/transactions/settled", settle("100")));
  auto* pending = std::get_if<std::unique_ptr<Pending>>(&p);
  cr_assert(pending != nullptr);
  const Query& q = (*pending)->query();
  cr_expect(q.sql.starts_with("SELECT mr_write("));
  cr_expect_eq(*q.params[0], std::string("settle"));
  cr_expect_eq(*q.params[1], std::string("7"));
  cr_expect_eq(*q.params[3], std::string("k"));
  cr_expect_eq(*q.params[4], std::string("fp"));
  rapidjson::Document cmd;
  cmd.Parse(q.params[6]->c_str());
  cr_expect_eq(cmd["amountMinor"].GetInt64(), 100);
  cr_expect_eq(std::string(cmd["externalMemberId"].GetString()), std::string("m1"));
}

Test(routing, path_member_is_percent_decoded) {
  Prepared p = prepare(req("GET", "/api/v1/members/m%201/balance"));
  auto* pending = std::get_if<std::unique_ptr<Pending>>(&p);
  cr_assert(pending != nullptr);
  cr_expect_eq(*(*pending)->query().params[1], std::string("m 1"));
  cr_expect_eq(immediate(req("GET", "/api/v1/members/m%2/balance")).status, 400);
  cr_expect_eq(immediate(req("GET", "/api/v1/members/m%0A/balance")).status, 400);
}

Test(validation, amounts) {
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/settled", settle("1"))).status, 0);
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/settled", settle("1000000000000"))).status, 0);
  for (const char* bad : {"0", "-1", "1000000000001", "100.0", "1e3", "\"100\"", "null", "1.5"}) {
    auto r = immediate(req("POST", "/api/v1/transactions/settled", settle(bad)));
    cr_expect_eq(r.status, 400, "%s accepted", bad);
    cr_expect_eq(fields_of(r), std::string("transaction.amountMinor;"), "%s: %s", bad, r.body.c_str());
  }
}

Test(validation, every_problem_is_named) {
  auto r = immediate(req("POST", "/api/v1/transactions/settled",
                         R"({"partnerRef":"","eventId":"e","occurredAt":"today","member":{},)"
                         R"("transaction":{"externalTransactionId":"t","merchantId":"m","merchantName":"",)"
                         R"("amountMinor":5,"currency":"gbp"}})"));
  cr_expect_eq(r.status, 400);
  cr_expect_eq(fields_of(r), std::string("partnerRef;occurredAt;member.externalMemberId;transaction.merchantName;"
                                         "transaction.currency;transaction.settledAt;"));
}

Test(validation, identifiers_and_names) {
  std::string long_id(129, 'x');
  auto r = immediate(req("POST", "/api/v1/members",
                         R"({"partnerRef":"club-a","member":{"externalMemberId":")" + long_id +
                             R"(","firstName":"A","lastName":"B","email":"a@b.c"}})"));
  cr_expect_eq(fields_of(r), std::string("member.externalMemberId;"));
  r = immediate(req("POST", "/api/v1/members",
                    R"({"partnerRef":"club-a","member":{"externalMemberId":"\u00e9","firstName":"A","lastName":"B","email":"a@b.c"}})"));
  cr_expect_eq(fields_of(r), std::string("member.externalMemberId;"));
  std::string name(201, 'n');
  r = immediate(req("POST", "/api/v1/members", member(R"("email":"a@b.c")")));
  cr_expect_eq(r.status, 0);
  r = immediate(req("POST", "/api/v1/members",
                    R"({"partnerRef":"club-a","member":{"externalMemberId":"m","firstName":")" + name +
                        R"(","lastName":"B","email":"a@b.c"}})"));
  cr_expect_eq(fields_of(r), std::string("member.firstName;"));
  // Names may be any UTF-8; invalid UTF-8 is not JSON.
  r = immediate(req("POST", "/api/v1/members",
                    R"({"partnerRef":"club-a","member":{"externalMemberId":"m","firstName":"Zoë","lastName":"B","email":"a@b.c"}})"));
  cr_expect_eq(r.status, 0);
  r = immediate(req("POST", "/api/v1/members", "{\"partnerRef\":\"\xff\"}"));
  cr_expect_eq(r.status, 400);
}

Test(validation, emails) {
  for (const char* bad : {R"("email":"ab.c")", R"("email":"a@@b")", R"("email":"@b")", R"("email":"a@")",
                          R"("email":1)"}) {
    cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members", member(bad)))), std::string("member.email;"),
                 "%s", bad);
  }
  std::string long_email = "\"email\":\"" + std::string(250, 'a') + "@b.co\"";
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members", member(long_email)))),
               std::string("member.email;"));
}

Test(validation, bank_details) {
  const auto wallet = [](const std::string& bank) {
    return member(R"("email":"a@b.c","wallet":{"status":"active","bankAccount":)" + bank + "}");
  };
  cr_expect_eq(immediate(req("POST", "/api/v1/members",
                             wallet(R"({"accountNumber":"12345678","sortCode":"123456","name":"A"})"))).status, 0);
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members",
                                       wallet(R"({"accountNumber":"1234567","sortCode":"123456","name":"A"})")))),
               std::string("member.wallet.bankAccount.accountNumber;"));
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members",
                                       wallet(R"({"accountNumber":"12345678","sortCode":"12-34-56","name":"A"})")))),
               std::string("member.wallet.bankAccount.sortCode;"));
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members",
                                       wallet(R"({"accountNumber":"12345678","sortCode":"123456"})")))),
               std::string("member.wallet.bankAccount.name;"));
}

Test(validation, club_id_and_bad_json) {
  cr_expect_eq(immediate(req("POST", "/api/v1/members", member(R"("email":"a@b.c","x":{"clubId":1})"))).status, 400);
  cr_expect_eq(immediate(req("POST", "/api/v1/members", "{")).status, 400);
  cr_expect_eq(immediate(req("POST", "/api/v1/members", "[]")).status, 400);
  cr_expect_eq(immediate(req("POST", "/api/v1/members", "")).status, 400);
  // Unknown fields are ignored.
  cr_expect_eq(immediate(req("POST", "/api/v1/members", member(R"("email":"a@b.c","nickname":"x")"))).status, 0);
}

Test(validation, reversal) {
  const std::string base =
      R"({"partnerRef":"club-a","eventId":"e","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":"m"},)"
      R"("transaction":{"externalTransactionId":"t","currency":"GBP"AMOUNT}})";
  const auto with = [&](const std::string& amount) {
    std::string s = base;
    s.replace(s.find("AMOUNT"), 6, amount);
    return s;
  };
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/reversed", with(""))).status, 0);
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/reversed", with(",\"amountMinor\":5"))).status, 0);
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/reversed", with(",\"amountMinor\":0"))).status, 400);
}

Test(validation, redemption_points_must_be_integers) {
  const auto body = [](const std::string& points) {
    return R"({"partnerRef":"club-a","requestId":"r1","member":{"externalMemberId":"m1"},"redemption":{"points":)" +
           points + R"(,"currency":"GBP"}})";
  };
  cr_expect_eq(immediate(req("POST", "/api/v1/redemptions", body("100"))).status, 0);
  // Out of range is a business rule (invalid_redemption_points), not schema.
  cr_expect_eq(immediate(req("POST", "/api/v1/redemptions", body("0"))).status, 0);
  cr_expect_eq(immediate(req("POST", "/api/v1/redemptions", body("100.0"))).status, 400);
  cr_expect_eq(immediate(req("POST", "/api/v1/redemptions", body("\"100\""))).status, 400);
}

Test(queries, limits_filters_cursors) {
  auto q = std::get<HistoryQuery>(parse_history_query("", true));
  cr_expect_eq(q.limit, 50);
  cr_expect_eq(q.filter, std::string("all"));
  cr_expect(!q.before);
  q = std::get<HistoryQuery>(parse_history_query("limit=1000&filter=earned&before=123&x=y", true));
  cr_expect_eq(q.limit, 100);
  cr_expect_eq(q.filter, std::string("earned"));
  cr_expect_eq(*q.before, 123);
  for (const char* bad : {"limit=0", "limit=-1", "limit=1.5", "limit=abc", "limit=", "filter=nope", "before=-1",
                          "before=x"}) {
    cr_expect(std::holds_alternative<mr::Error>(parse_history_query(bad, true)), "%s accepted", bad);
  }
  // transactions take no filter: an unknown one is ignored there.
  cr_expect(std::holds_alternative<HistoryQuery>(parse_history_query("filter=nope", false)));
}

Test(rendering, outcomes) {
  auto created = render_result(R"({"outcome":"created","requestId":"r1","data":{"b":1,"a":2}})", "r2");
  cr_expect_eq(created.status, 201);
  cr_expect_eq(created.body, std::string(R"({"ok":true,"data":{"b":1,"a":2}})"));
  cr_expect(!created.replayed);
  auto ok = render_result(R"({"outcome":"ok","requestId":"r1","data":{},"replayed":true})", "r2");
  cr_expect_eq(ok.status, 200);
  cr_expect(ok.replayed);
  auto err = render_result(R"({"outcome":"cardholder_not_found","requestId":"r1"})", "r2");
  cr_expect_eq(err.status, 404);
  cr_expect(err.body.find(R"("requestId":"r1")") != std::string::npos, "a replay keeps the first request id");
  auto details = render_result(
      R"({"outcome":"invalid_request","requestId":"r1","details":[{"field":"transaction.currency","problem":"x"}]})",
      "r2");
  cr_expect_eq(details.status, 400);
  cr_expect(details.body.find("transaction.currency") != std::string::npos);
  cr_expect_eq(render_result("garbage", "r2").status, 500);
  cr_expect_eq(render_result(R"({"outcome":"no_such_code"})", "r2").status, 500);
}

Test(rendering, pending_renders_the_single_row) {
  Prepared p = prepare(req("GET", "/api/v1/members/m1/balance"));
  auto& pending = std::get<std::unique_ptr<Pending>>(p);
  const FakeResult result(R"({"outcome":"ok","requestId":"rid","data":{"pointsBalance":5}})");
  auto r = pending->render(result, "rid");
  cr_expect_eq(r.status, 200);
  cr_expect_eq(r.body, std::string(R"({"ok":true,"data":{"pointsBalance":5}})"));
  // Deterministic: the same result renders the same bytes.
  cr_expect_eq(pending->render(result, "other").body, r.body);
}
