// Contract section 9 in the pure domain: the query rule of every GET, the
// club and redemption-list routes, the sandbox test helper's route and
// body, duplicate_request_id's redemptionId and the field messages that
// state their rule.
#include <criterion/criterion.h>

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "ledger/api.hpp"
#include "ledger/read_requests.hpp"
#include "ledger/result_render.hpp"
#include "ledger/routes.hpp"
#include "ledger/text_rules.hpp"
#include "ledger/write_requests.hpp"
#include "tests/unit/ledger/domain_requests.hpp"

using namespace mr::ledger;
using mr::ledger::test::code_of;
using mr::ledger::test::immediate;
using mr::ledger::test::pending_query;

namespace {

Request req(std::string_view method, std::string_view path, std::string_view body = "",
            std::string_view query = "", bool test_helpers = false) {
  Request r = test::req(method, path, body, query);
  r.environment = "sandbox";
  r.test_helpers = test_helpers;
  return r;
}



rapidjson::Document parsed(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  cr_assert(!d.HasParseError() && d.IsObject(), "not a JSON object: %s", body.c_str());
  return d;
}


// "field=problem;" for every detail of an error answer.
std::string problems_of(const Response& r) {
  auto d = parsed(r.body);
  std::string out;
  if (d.HasMember("error") && d["error"].HasMember("details")) {
    for (const auto& p : d["error"]["details"].GetArray()) {
      out += std::string(p["field"].GetString()) + "=" + p["problem"].GetString() + ";";
    }
  }
  return out;
}

std::string problems_of(const mr::Error& e) { return problems_of(Response{400, mr::render_error(e, "r")}); }

RedemptionsQuery redemptions_query(std::string_view query) {
  auto q = parse_redemptions_query(query);
  cr_assert(std::holds_alternative<RedemptionsQuery>(q), "%.*s refused: %s", static_cast<int>(query.size()),
            query.data(), std::holds_alternative<mr::Error>(q) ? problems_of(std::get<mr::Error>(q)).c_str() : "");
  return std::get<RedemptionsQuery>(q);
}

std::string redemption_query_problems(std::string_view query) {
  auto q = parse_redemptions_query(query);
  if (!std::holds_alternative<mr::Error>(q)) return "<accepted>";
  return problems_of(std::get<mr::Error>(q));
}

}  // namespace

// Unknown parameter names are ignored on every GET, whatever their value
// (bad percent-encoding, bytes that are not UTF-8); only clubId is refused.
Test(query_rule, unknown_parameters_are_ignored_on_every_get) {
  const std::vector<std::string> unknown = {"x=1",           "expand=payout", "limit2=abc",   "q=%zz",
                                            "%zz=1",         "\xff=%",        "filter=nope",  "a=1&&b&=2",
                                            "clubIdx=1",     "LIMIT=0"};
  const std::vector<std::string> paths = {"/api/v1/members/m1/balance", "/api/v1/members/m1/points",
                                          "/api/v1/members/m1/transactions", "/api/v1/redemptions/rdm_1",
                                          "/api/v1/redemptions", "/api/v1/club"};
  for (const auto& path : paths) {
    for (const auto& q : unknown) {
      // filter is a known parameter of /points only.
      if (q == "filter=nope" && path.ends_with("/points")) continue;
      const auto r = immediate(req("GET", path, "", q));
      cr_expect_eq(r.status, 0, "GET %s?%s answered %d: %s", path.c_str(), q.c_str(), r.status, r.body.c_str());
    }
    const auto club = immediate(req("GET", path, "", "limit=5&clubId=3"));
    cr_expect_eq(club.status, 400, "%s", path.c_str());
    cr_expect_eq(problems_of(club), std::string("clubId=the club is taken from the key; remove clubId;"));
  }
}

// A known parameter with a bad value is invalid_request naming it, with
// the histories' messages; a known name may be percent-encoded.
Test(query_rule, known_parameters_with_bad_values) {
  for (const auto& [q, want] : std::vector<std::pair<std::string, std::string>>{
           {"limit=0", "limit=must be an integer of at least 1;"},
           {"limit=abc", "limit=must be an integer of at least 1;"},
           {"limit=", "limit=must be an integer of at least 1;"},
           {"before=-1", "before=must be a non-negative integer of milliseconds;"},
           {"%6Cimit=0", "limit=must be an integer of at least 1;"},
           {"limit=%zz", "limit=is not valid percent-encoding;"},
           {"status=pending", "status=must be one of payout_pending, completed, failed;"},
           {"status=", "status=must be one of payout_pending, completed, failed;"},
           {"status=COMPLETED", "status=must be one of payout_pending, completed, failed;"},
           {"requestId=", "requestId=must be 1 to 128 printable ASCII characters;"},
           {"requestId=" + std::string(129, 'r'), "requestId=must be 1 to 128 printable ASCII characters;"},
           {"externalMemberId=a%0Ab", "externalMemberId=must be 1 to 128 printable ASCII characters;"},
           {"externalMemberId=%C3%A9", "externalMemberId=must be 1 to 128 printable ASCII characters;"},
       }) {
    cr_expect_eq(redemption_query_problems(q), want, "%s", q.c_str());
    const auto r = immediate(req("GET", "/api/v1/redemptions", "", q));
    cr_expect_eq(r.status, 400, "%s", q.c_str());
    cr_expect_eq(code_of(r), std::string("invalid_request"));
    cr_expect_eq(problems_of(r), want, "%s", q.c_str());
  }
  // The histories keep their rules and messages.
  const auto points = immediate(req("GET", "/api/v1/members/m1/points", "", "x=%zz&filter=nope"));
  cr_expect_eq(problems_of(points),
               std::string("filter=must be one of all, earned, redeemed, reserved, released, reversed, adjusted;"));
}

Test(query_rule, redemption_filters_and_paging) {
  auto q = redemptions_query("");
  cr_expect_eq(q.limit, 50);
  cr_expect(!q.before && !q.request_id && !q.external_member_id && !q.status);
  q = redemptions_query("limit=500&before=1700000000000&requestId=rq%201&externalMemberId=m%2F1&status=failed&x=y");
  cr_expect_eq(q.limit, 100);
  cr_expect_eq(*q.before, 1700000000000);
  cr_expect_eq(*q.request_id, std::string("rq 1"));
  cr_expect_eq(*q.external_member_id, std::string("m/1"));
  cr_expect_eq(*q.status, std::string("failed"));
  for (const char* s : {"payout_pending", "completed", "failed"}) {
    cr_expect_eq(*redemptions_query(std::string("status=") + s).status, std::string(s));
  }
  q = redemptions_query("requestId=" + std::string(128, 'r') + "&before=99999999999999999999");
  cr_expect_eq(q.request_id->size(), 128u);
  cr_expect_eq(*q.before, INT64_MAX);
}

Test(routes, section_nine_routes) {
  cr_expect_eq(route_of("/api/v1/club"), Route::club_get);
  cr_expect_eq(route_of("GET", "/api/v1/redemptions"), Route::redemptions_list);
  cr_expect_eq(route_of("POST", "/api/v1/redemptions"), Route::redemptions_create);
  cr_expect_eq(route_of("/api/v1/redemptions"), Route::redemptions_create);
  cr_expect_eq(route_of("GET", "/api/v1/redemptions/rdm_1"), Route::redemption_get);
  cr_expect_eq(route_of("/api/v1/test-helpers/redemptions/rdm_1/payout"), Route::test_payout);
  for (const char* other : {"/api/v1/club/", "/api/v1/clubs", "/api/v1/test-helpers/redemptions/rdm_1",
                            "/api/v1/test-helpers/redemptions/rdm_1/payout/x", "/api/v1/test-helpers/payouts/x/payout",
                            "/api/v1/members/m1/balance/x"}) {
    cr_expect_eq(route_of("POST", other), Route::other, "%s", other);
  }
  cr_expect_eq(route_label(Route::redemptions_list), std::string_view("redemptions_list"));
}

Test(routes, get_club) {
  Prepared p = prepare(req("GET", "/api/v1/club", "", "anything=1"));
  const Query& q = pending_query(p);
  cr_expect(q.sql.starts_with("SELECT mr_club("));
  cr_expect_eq(*q.params[0], std::string("7"));
  cr_expect_eq(*q.params[1], std::string("sandbox"));
  cr_expect_eq(*q.params[2], std::string("rid"));
  cr_expect_eq(code_of(immediate(req("POST", "/api/v1/club", "{}"))), std::string("method_not_allowed"));
}

Test(routes, list_redemptions) {
  Prepared p = prepare(req("GET", "/api/v1/redemptions"));
  const Query& q = pending_query(p);
  cr_expect(q.sql.starts_with("SELECT mr_redemptions("));
  cr_expect_eq(q.params.size(), 7u);
  cr_expect_eq(*q.params[0], std::string("7"));
  cr_expect(!q.params[1] && !q.params[2] && !q.params[3], "no filter: NULLs");
  cr_expect_eq(*q.params[4], std::string("50"));
  cr_expect(!q.params[5], "no cursor: NULL");
  cr_expect_eq(*q.params[6], std::string("rid"));
  Prepared f = prepare(req("GET", "/api/v1/redemptions", "",
                           "status=completed&externalMemberId=m1&requestId=rq-1&limit=3&before=42"));
  const Query& fq = pending_query(f);
  cr_expect_eq(*fq.params[1], std::string("rq-1"));
  cr_expect_eq(*fq.params[2], std::string("m1"));
  cr_expect_eq(*fq.params[3], std::string("completed"));
  cr_expect_eq(*fq.params[4], std::string("3"));
  cr_expect_eq(*fq.params[5], std::string("42"));
  cr_expect(fq.batch == mr::ledger::BatchKind::none);
  cr_expect_eq(immediate(req("PUT", "/api/v1/redemptions")).status, 405);
}

// The test helper exists only where mr_test_helpers is on: elsewhere its
// path is not_found, whatever the method and body.
Test(test_helper, not_found_without_the_switch) {
  const std::string body = R"({"partnerRef":"club-a","outcome":"succeeded"})";
  for (const char* method : {"POST", "GET", "DELETE"}) {
    const auto r = immediate(req(method, "/api/v1/test-helpers/redemptions/rdm_1/payout", body));
    cr_expect_eq(r.status, 404, "%s", method);
    cr_expect_eq(code_of(r), std::string("not_found"));
  }
  cr_expect_eq(immediate(req("POST", "/api/v1/test-helpers/redemptions/%zz/payout", "{")).status, 404);
}

Test(test_helper, a_payout_result_through_mr_write) {
  const std::string path = "/api/v1/test-helpers/redemptions/rdm%5F1/payout";
  Prepared p = prepare(req("POST", path, R"({"partnerRef":"club-a","outcome":"failed","failureReason":"closed","x":1})",
                           "", true));
  const Query& q = pending_query(p);
  cr_expect(q.sql.starts_with("SELECT mr_write("));
  cr_expect_eq(*q.params[0], std::string("test_payout"));
  cr_expect_eq(*q.params[3], std::string("k"), "idempotency key as every POST");
  rapidjson::Document cmd;
  cmd.Parse(q.params[6]->data(), q.params[6]->size());
  cr_assert(cmd.IsObject());
  cr_expect_eq(std::string(cmd["partnerRef"].GetString()), "club-a");
  cr_expect_eq(std::string(cmd["redemptionId"].GetString()), "rdm_1", "the path, percent-decoded");
  cr_expect_eq(std::string(cmd["outcome"].GetString()), "failed");
  cr_expect_eq(std::string(cmd["failureReason"].GetString()), "closed");
  cr_expect(!cmd.HasMember("x"), "unknown fields are not passed on");
  Prepared s = prepare(req("POST", path, R"({"partnerRef":"club-a","outcome":"succeeded"})", "", true));
  const std::string& second = *pending_query(s).params[6];
  cmd.Parse(second.data(), second.size());
  cr_expect_eq(std::string(cmd["outcome"].GetString()), "succeeded");
  cr_expect(!cmd.HasMember("failureReason"));
  cr_expect_eq(code_of(immediate(req("GET", path, "", "", true))), std::string("method_not_allowed"));
}

Test(test_helper, bad_bodies_and_ids) {
  const auto post = [](std::string_view body, std::string_view id = "rdm_1") {
    static std::string path;
    path = "/api/v1/test-helpers/redemptions/" + std::string(id) + "/payout";
    return immediate(req("POST", path, body, "", true));
  };
  cr_expect_eq(problems_of(post(R"({"partnerRef":"club-a"})")), std::string("outcome=is required;"));
  for (const char* outcome : {R"("succeed")", R"("SUCCEEDED")", R"("submitted")", R"("")"}) {
    const auto r = post(std::string(R"({"partnerRef":"club-a","outcome":)") + outcome + "}");
    cr_expect_eq(r.status, 400, "%s", outcome);
    cr_expect(problems_of(r).starts_with("outcome="), "%s: %s", outcome, r.body.c_str());
  }
  cr_expect_eq(problems_of(post(R"({"outcome":"failed","failureReason":")" + std::string(501, 'x') + "\"}")),
               std::string("partnerRef=is required;failureReason=must be 1 to 500 bytes;"));
  cr_expect_eq(post(R"({"partnerRef":"club-a","outcome":"failed"})").status, 0);
  cr_expect_eq(code_of(post(R"({"partnerRef":"club-a","outcome":"failed","clubId":7})")), "invalid_request");
  cr_expect_eq(code_of(post("not json")), "invalid_request");
  const auto bad_id = post(R"({"partnerRef":"club-a","outcome":"failed"})", "%zz");
  cr_expect_eq(problems_of(bad_id), std::string("redemptionId=must be 1 to 128 printable ASCII characters;"));
  cr_expect_eq(post(R"({"partnerRef":"club-a","outcome":"failed"})", std::string(129, 'r')).status, 400);
}

// duplicate_request_id carries the first redemption's id as
// error.redemptionId, from the result's own member (no text scanning), the
// first request id included on a replay.
Test(duplicate_request_id, names_the_first_redemption) {
  const auto r = render_result(
      R"({"outcome":"duplicate_request_id","requestId":"first","redemptionId":"rdm_01a2","replayed":true})", "retry");
  cr_expect_eq(r.status, 409);
  cr_expect(r.replayed);
  auto d = parsed(r.body);
  cr_expect(d["ok"].IsFalse());
  const auto& e = d["error"];
  cr_expect_eq(std::string(e["code"].GetString()), "duplicate_request_id");
  cr_expect_eq(std::string(e["requestId"].GetString()), "first");
  cr_expect_eq(std::string(e["redemptionId"].GetString()), "rdm_01a2");
  cr_expect_eq(std::string(e["message"].GetString()), "This redemption requestId was already used.");
  cr_expect_eq(r.body, std::string(R"({"ok":false,"error":{"code":"duplicate_request_id","message":"This redemption )"
                                   R"(requestId was already used.","requestId":"first","redemptionId":"rdm_01a2"}})"));
  // Another outcome without one: no member.
  const auto other = render_result(R"({"outcome":"insufficient_points_balance","requestId":"x"})", "x");
  cr_expect(!parsed(other.body)["error"].HasMember("redemptionId"));
  // Only a string is carried.
  const auto odd = render_result(R"({"outcome":"duplicate_request_id","requestId":"x","redemptionId":5})", "x");
  cr_expect(!parsed(odd.body)["error"].HasMember("redemptionId"));
  // Escaped like any text: the answer stays valid JSON.
  mr::Error e2{mr::ErrorCode::duplicate_request_id, {}, {}, "rdm_\"q\"\xff"};
  const std::string body = mr::render_error(e2, "r");
  cr_expect(mr::is_valid_utf8(body));
  cr_expect_eq(std::string(parsed(body)["error"]["redemptionId"].GetString()), "rdm_\"q\"\xEF\xBF\xBD");
}

// Bank details: the message states the rule whatever was sent.
Test(field_messages, sort_code_and_account_number_state_their_rule) {
  const auto problems = [](const std::string& bank) {
    const std::string body =
        R"({"partnerRef":"club-a","member":{"externalMemberId":"m1","firstName":"A","lastName":"B",)"
        R"("email":"a@b.c","wallet":{"bankAccount":)" + bank + "}}}";
    const Parsed p = parse_member(body);
    return std::holds_alternative<mr::Error>(p) ? problems_of(std::get<mr::Error>(p)) : std::string();
  };
  const std::string sort = "member.wallet.bankAccount.sortCode=must be exactly 6 digits;";
  const std::string account = "member.wallet.bankAccount.accountNumber=must be exactly 8 digits;";
  for (const char* code : {"11-22-33", "1122334", "11223", "", "abcdef", "1122334455667788"}) {
    cr_expect_eq(problems(std::string(R"({"accountNumber":"12345678","sortCode":")") + code + R"(","name":"A"})"),
                 sort, "%s", code);
  }
  for (const char* number : {"123456789", "1234567", "", "1234-5678", "1234567a"}) {
    cr_expect_eq(problems(std::string(R"({"accountNumber":")") + number + R"(","sortCode":"112233","name":"A"})"),
                 account, "%s", number);
  }
  cr_expect_eq(problems(R"({"accountNumber":12345678,"sortCode":112233,"name":"A"})"),
               std::string("member.wallet.bankAccount.accountNumber=must be a string of exactly 8 digits;"
                           "member.wallet.bankAccount.sortCode=must be a string of exactly 6 digits;"));
  cr_expect_eq(problems(R"({"accountNumber":"12345678","name":"A"})"),
               std::string("member.wallet.bankAccount.sortCode=is required;"));
  cr_expect_eq(problems(R"({"accountNumber":"12345678","sortCode":"112233","name":"A"})"), "");
}
