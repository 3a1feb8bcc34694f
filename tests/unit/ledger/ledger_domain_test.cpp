// The ledger's pure domain: routing, every field rule of contract section 1
// with a failing and a passing case, query rules and rendering.
#include <criterion/criterion.h>

#include <climits>
#include <string>
#include <utility>

#include <rapidjson/document.h>

#include "ledger/api.hpp"
#include "ledger/json_fields.hpp"
#include "ledger/text_rules.hpp"
#include "ledger/timestamps.hpp"
#include "ledger/read_requests.hpp"
#include "ledger/result_render.hpp"
#include "ledger/write_batch.hpp"
#include "ledger/write_requests.hpp"
#include "signing/signature.hpp"
#include "tests/unit/ledger/domain_requests.hpp"

using namespace mr::ledger;
using namespace mr::ledger::test;

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




std::string fields_of(const Response& r) {
  rapidjson::Document d;
  d.Parse(r.body.data(), r.body.size());
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
  cr_expect_eq(immediate(req("GET", "/api/v1/redemptions")).status, 0);  // the list (contract section 9)
  cr_expect_eq(immediate(req("DELETE", "/api/v1/redemptions")).status, 405);
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
  cmd.Parse(q.params[6]->data(), q.params[6]->size());
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

Test(validation, timestamps_any_year_but_zero) {
  std::string far = settle("100");
  far.replace(far.find("2026-11-20T10:00:00Z"), 20, "9999-12-31T23:59:59Z");
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/settled", far)).status, 0);
  std::string zero = settle("100");
  zero.replace(zero.find("2026-11-20T10:00:00Z"), 20, "0000-01-01T00:00:00Z");
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/transactions/settled", zero))), std::string("occurredAt;"));
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
  Prepared p = prepare(req("GET", "/api/v1/club"));
  auto& pending = std::get<std::unique_ptr<Pending>>(p);
  const FakeResult result(R"({"outcome":"ok","requestId":"rid","data":{"pointsBalance":5}})");
  auto r = pending->render(result, "rid");
  cr_expect_eq(r.status, 200);
  cr_expect_eq(r.body, std::string(R"({"ok":true,"data":{"pointsBalance":5}})"));
  // Deterministic: the same result renders the same bytes.
  cr_expect_eq(pending->render(result, "other").body, r.body);
}

namespace {

// mr_balance_row's columns, as text; nullopt is NULL.
class FakeColumns final : public ResultView {
 public:
  explicit FakeColumns(std::vector<std::optional<std::string>> row) : row_(std::move(row)) {}
  int rows() const override { return row_.empty() ? 0 : 1; }
  bool is_null(int, int col) const override { return !row_.at(static_cast<std::size_t>(col)); }
  std::string_view value(int, int col) const override { return *row_.at(static_cast<std::size_t>(col)); }

 private:
  std::vector<std::optional<std::string>> row_;
};

}  // namespace

// The bytes mr_balance's jsonb rendered to (jsonb's key order: shorter
// keys first), now from plain columns.
Test(rendering, balance_from_columns_as_the_jsonb_was) {
  Prepared p = prepare(req("GET", "/api/v1/members/m1/balance"));
  auto& pending = std::get<std::unique_ptr<Pending>>(p);
  cr_expect(pending->query().sql.find("mr_balance_row(") != std::string::npos);
  auto r = pending->render(FakeColumns({"m\"1", "active", "-5", "7", "120", "9", "GBP", "0"}), "rid");
  cr_expect_eq(r.status, 200);
  cr_expect_eq(r.body, std::string(R"({"ok":true,"data":{"currency":"GBP","memberStatus":"active","pointsBalance":-5,)"
                                   R"("cashValueMinor":0,"externalMemberId":"m\"1","lifetimePointsEarned":120,)"
                                   R"("reservedPointsBalance":7,"lifetimePointsRedeemed":9}})"));
  // No payout currency: null; a cash value past 64 bits as RapidJSON read and wrote the jsonb number.
  r = pending->render(FakeColumns({"m1", "closed", "3", "0", "3", "0", std::nullopt, "18446744073709551616"}), "rid");
  cr_expect(r.body.find(R"("currency":null,)") != std::string::npos, "%s", r.body.c_str());
  cr_expect(r.body.find(R"("cashValueMinor":18446744073709553000.0,)") != std::string::npos, "%s", r.body.c_str());
  r = pending->render(FakeColumns({}), "rid");
  cr_expect_eq(r.status, 404);
  cr_expect(r.body.find("cardholder_not_found") != std::string::npos);
  cr_expect(r.body.find("rid") != std::string::npos);
  cr_expect_eq(pending->render(FakeColumns({"m1", "active", "x", "0", "0", "0", "GBP", "0"}), "rid").status, 500);
}

// Settles, reversals and redemptions batch, each kind apart; the batch
// parameter carries each one's mr_write parameters with the command as
// JSON, not as a string.
Test(write_batch, settles_batch_with_their_parameters) {
  const std::string body = settle("100");
  Prepared p = prepare(req("POST", "/api/v1/transactions/settled", body));
  const Query& q = std::get<std::unique_ptr<Pending>>(p)->query();
  cr_expect(q.batch == BatchKind::settle);
  const Params* one[] = {&q.params, &q.params};
  const auto param = write_batch_param(one);
  cr_assert(param.has_value());
  rapidjson::Document d;
  d.Parse(param->data(), param->size());
  cr_assert(!d.HasParseError() && d.IsArray() && d.Size() == 2);
  cr_expect_eq(std::string(d[1][0].GetString()), "settle");
  cr_expect_eq(std::string(d[1][3].GetString()), *q.params[3]);
  cr_expect(d[1][6].IsObject());
  cr_expect(d[1][6].HasMember("externalMemberId"));
  const Params incomplete{std::string("settle")};
  const Params* bad[] = {&incomplete};
  cr_expect(!write_batch_param(bad).has_value());
}

// The pool keeps a second request with one club's key out of a batch: it
// reads the club and key where the router put them.
Test(write_batch, one_key_of_one_club_is_recognised) {
  const std::string body = settle("100");
  const auto params_of = [&](std::string_view key) {
    Request r = req("POST", "/api/v1/transactions/settled", body);
    r.idempotency_key = key;
    Prepared p = prepare(r);
    return std::get<std::unique_ptr<Pending>>(p)->query().params;
  };
  const Params a = params_of("k-1"), again = params_of("k-1"), other = params_of("k-2");
  cr_expect_eq(*a[write_param::key], "k-1");
  cr_expect(batch_apart(a, again));
  cr_expect(!batch_apart(a, other));
  Params other_club = a;
  other_club[write_param::club] = "99";
  cr_expect(!batch_apart(a, other_club), "keys are scoped by club");
  cr_expect(!batch_apart(a, Params{}));
}

// A signature serves one idempotency key (contract section 2): it goes to
// mr_write as bytea's hex input, NULL without one, into the batch as its
// eighth element, and two writes with one signature never share a batch.
Test(write_batch, the_signature_goes_as_the_eighth_parameter) {
  const std::string body = settle("100");
  mr::HmacDigest mac{};
  for (std::size_t i = 0; i < mac.size(); ++i) mac[i] = static_cast<unsigned char>(i * 17);
  const auto params_of = [&](std::string_view key, std::optional<mr::HmacDigest> signature) {
    Request r = req("POST", "/api/v1/transactions/settled", body);
    r.idempotency_key = key;
    r.signature = signature;
    Prepared p = prepare(r);
    return std::get<std::unique_ptr<Pending>>(p)->query().params;
  };
  const Params a = params_of("k-1", mac), b = params_of("k-2", mac), unsigned_write = params_of("k-3", std::nullopt);
  cr_assert_eq(a.size(), write_param::count);
  cr_assert(a[write_param::signature].has_value());
  cr_expect_eq(*a[write_param::signature],
               "\\x00112233445566778899aabbccddeeff102132435465768798a9bacbdcedfe0f");
  cr_expect(!unsigned_write[write_param::signature].has_value());
  cr_expect(batch_apart(a, b), "one signature under two keys waits for the next batch");
  cr_expect(!batch_apart(unsigned_write, params_of("k-4", std::nullopt)), "no signature, no match");
  const Params* both[] = {&a, &unsigned_write};
  const auto param = write_batch_param(both);
  cr_assert(param.has_value());
  rapidjson::Document d;
  d.Parse(param->data(), param->size());
  cr_assert(!d.HasParseError() && d.IsArray() && d.Size() == 2);
  cr_expect_eq(std::string(d[0][7].GetString()), *a[write_param::signature]);
  cr_expect(d[1][7].IsNull());
}

Test(write_batch, reversals_and_redemptions_batch_each_as_their_kind) {
  const std::string reversal =
      R"({"partnerRef":"club-a","eventId":"e","occurredAt":"2026-11-20T10:00:00Z","member":{"externalMemberId":"m"},)"
      R"("transaction":{"externalTransactionId":"t","currency":"GBP","amountMinor":5}})";
  Prepared r = prepare(req("POST", "/api/v1/transactions/reversed", reversal));
  const Query& rq = std::get<std::unique_ptr<Pending>>(r)->query();
  cr_expect(rq.batch == BatchKind::reverse);
  cr_expect_eq(*rq.params[write_param::op], "reverse");
  const std::string redemption = R"({"partnerRef":"club-a","requestId":"r1","member":{"externalMemberId":"m1"},)"
                                 R"("redemption":{"points":100,"currency":"GBP"}})";
  Prepared d = prepare(req("POST", "/api/v1/redemptions", redemption));
  const Query& dq = std::get<std::unique_ptr<Pending>>(d)->query();
  cr_expect(dq.batch == BatchKind::redeem);
  const Params* both[] = {&rq.params, &dq.params};
  cr_expect(write_batch_param(both).has_value(), "the parameter is the same for every kind");
  cr_expect(batch_kind("close") == BatchKind::none);
  cr_expect(batch_kind("member") == BatchKind::none);
}

Test(write_batch, other_writes_are_not_batched) {
  Prepared p = prepare(req("POST", "/api/v1/members", member(R"("email":"a@b.co")")));
  cr_expect(std::get<std::unique_ptr<Pending>>(p)->query().batch == BatchKind::none);
}

// ---- Boundaries and storage-safety of each field rule -----------------------

namespace {

std::string settle_with(const std::string& from, const std::string& to) {
  std::string s = settle("100");
  const auto at = s.find(from);
  cr_assert(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

Test(timestamps, accepted_forms_and_value) {
  using namespace std::chrono;
  for (const char* ok : {"2026-11-20T10:00:00Z", "2026-11-20T10:00:00+00:00", "2026-11-20T10:00:00.1Z",
                         "2026-11-20T10:00:00.123456789Z", "2024-02-29T23:59:59Z"}) {
    cr_expect(mr::parse_rfc3339_utc(ok).has_value(), "%s refused", ok);
  }
  cr_expect_eq(mr::signing::format_timestamp(system_clock::time_point(seconds(86400 + 61))),
               std::string("1970-01-02T00:01:01Z"));
}

Test(timestamps, refused_forms) {
  for (const char* bad : {"2026-11-20T10:00:00.1234567890Z", "2026-02-30T10:00:00Z", "2025-02-29T10:00:00Z",
                          "2026-11-20T24:00:00Z", "2026-11-20T10:60:00Z", "2026-11-20T10:00:60Z",
                          "2026-11-20T10:00:00+01:00", "2026-11-20T10:00:00-00:00", "2026-11-20T10:00:00z",
                          "2026-11-20T10:00:00", "2026-11-20T10:00:00.Z", "2026-11-20 10:00:00Z", "2026-11-20",
                          "2026-11-20T10:00:00ZZ", ""}) {
    cr_expect(!mr::parse_rfc3339_utc(bad).has_value(), "%s accepted", bad);
  }
}

Test(validation, timestamps_in_bodies_are_kept_as_sent) {
  auto bad = immediate(req("POST", "/api/v1/transactions/settled",
                           settle_with("\"occurredAt\":\"2026-11-20T10:00:00Z\"", "\"occurredAt\":\"2026-11-20T10:00:00+02:00\"")));
  cr_expect_eq(fields_of(bad), std::string("occurredAt;"));
  const std::string body = settle_with("\"occurredAt\":\"2026-11-20T10:00:00Z\"",
                                       "\"occurredAt\":\"2026-11-20T10:00:00.250+00:00\"");
  Prepared p = prepare(req("POST", "/api/v1/transactions/settled", body));
  rapidjson::Document cmd;
  cmd.Parse(pending_query(p).params[6]->data(), pending_query(p).params[6]->size());
  cr_expect_eq(std::string(cmd["occurredAt"].GetString()), std::string("2026-11-20T10:00:00.250+00:00"));
  cr_expect_eq(std::string(cmd["settledAt"].GetString()), std::string("2026-11-20T10:00:00Z"));
}

Test(validation, identifier_boundaries) {
  const auto with_member = [](const std::string& id) {
    return settle_with("\"externalMemberId\":\"m1\"", "\"externalMemberId\":\"" + id + "\"");
  };
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/settled", with_member(std::string(128, 'x')))).status, 0);
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/settled", with_member("a b~!"))).status, 0);
  for (const std::string& bad : {std::string(129, 'x'), std::string(""), std::string("a\\u007f"),
                                std::string("a\\tb"), std::string("\\u0000")}) {
    cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/transactions/settled", with_member(bad)))),
                 std::string("member.externalMemberId;"), "%s", bad.c_str());
  }
}

Test(validation, names_are_storable_utf8) {
  const auto with_first = [](const std::string& name) {
    return R"({"partnerRef":"club-a","member":{"externalMemberId":"m","firstName":")" + name +
           R"(","lastName":"B","email":"a@b.c"}})";
  };
  cr_expect_eq(immediate(req("POST", "/api/v1/members", with_first(std::string(200, 'n')))).status, 0);
  cr_expect_eq(immediate(req("POST", "/api/v1/members", with_first("\xF0\x9F\x98\x80 \\ud83d\\ude00"))).status, 0);
  // PostgreSQL cannot store these; they must not reach it and turn into a 500.
  for (const char* bad : {"A\\u0000B", "\\udc00", "x\\udfff"}) {
    auto r = immediate(req("POST", "/api/v1/members", with_first(bad)));
    cr_expect_eq(r.status, 400, "%s", bad);
    cr_expect_eq(fields_of(r), std::string("member.firstName;"), "%s", bad);
  }
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members", with_first("")))), std::string("member.firstName;"));
}

Test(validation, utf8_checker) {
  cr_expect(mr::ledger::is_storable_utf8("plain"));
  cr_expect(mr::ledger::is_storable_utf8("\xC3\xA9\xE2\x82\xAC\xF4\x8F\xBF\xBF"));  // é € U+10FFFF
  for (const std::string& bad : {std::string("\xC0\x80"), std::string("\xE0\x80\x80"), std::string("\xED\xA0\x80"),
                                std::string("\xF4\x90\x80\x80"), std::string("\xC3"), std::string("\x80"),
                                std::string("\xFF"), std::string("a\0b", 3)}) {
    cr_expect(!mr::ledger::is_storable_utf8(bad), "accepted %zu bytes", bad.size());
  }
}

Test(validation, email_and_currency_boundaries) {
  const std::string at254 = "\"email\":\"" + std::string(248, 'a') + "@b.com\"";  // 254 bytes
  cr_expect_eq(immediate(req("POST", "/api/v1/members", member(at254))).status, 0);
  const std::string at255 = "\"email\":\"" + std::string(249, 'a') + "@b.com\"";
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members", member(at255)))), std::string("member.email;"));
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members", member("\"email\":\"a@b\\u0000\"")))),
               std::string("member.email;"));
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/settled", settle_with("\"GBP\"", "\"EUR\""))).status, 0);
  for (const char* bad : {"\"GB\"", "\"GBPP\"", "\"gbp\"", "\"G1P\"", "1", "null"}) {
    cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/transactions/settled", settle_with("\"GBP\"", bad)))),
                 std::string("transaction.currency;"), "%s", bad);
  }
}

Test(validation, wrong_json_types_name_the_field) {
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members", R"({"partnerRef":1,"member":"m"})"))),
               std::string("partnerRef;member;"));
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members", member(R"("email":"a@b.c","wallet":[])")))),
               std::string("member.wallet;"));
  cr_expect_eq(
      fields_of(immediate(req("POST", "/api/v1/members", member(R"("email":"a@b.c","wallet":{"bankAccount":"x"})")))),
      std::string("member.wallet.bankAccount;"));
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/members",
                                       member(R"("email":"a@b.c","wallet":{"bankAccount":{"accountNumber":12345678,"sortCode":"123456","name":"A"}})")))),
               std::string("member.wallet.bankAccount.accountNumber;"));
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/transactions/settled", settle_with(
                                           R"("transaction":{)", R"("transaction":7,"x":{)")))),
               std::string("transaction;"));
  // Missing wallet is fine (the stored one is kept); wallet without bankAccount too.
  cr_expect_eq(immediate(req("POST", "/api/v1/members", member(R"("email":"a@b.c","wallet":{"status":"x"})"))).status,
               0);
}

Test(validation, member_command_is_normalised) {
  Prepared p = prepare(req("POST", "/api/v1/members",
                           member(R"("email":"a@b.c","extra":1,"wallet":{"provider":"p","other":2,)"
                                  R"("bankAccount":{"accountNumber":"12345678","sortCode":"123456","name":"A"}})")));
  const Query& q = pending_query(p);
  cr_expect_eq(*q.params[0], std::string("member"));
  cr_expect_eq(*q.params[6], std::string(R"({"partnerRef":"club-a","externalMemberId":"m1","firstName":"A",)"
                                         R"("lastName":"B","email":"a@b.c","wallet":{"provider":"p",)"
                                         R"("bankAccount":{"accountNumber":"12345678","sortCode":"123456","name":"A"}}})"));
}

Test(validation, amounts_beyond_int64) {
  for (const char* bad : {"100000000000000000000", "18446744073709551615", "-9223372036854775809", "1E3", "1e+3"}) {
    auto r = immediate(req("POST", "/api/v1/transactions/settled", settle(bad)));
    cr_expect_eq(fields_of(r), std::string("transaction.amountMinor;"), "%s: %s", bad, r.body.c_str());
  }
}

Test(validation, club_id_anywhere) {
  for (const char* inner : {R"("email":"a@b.c","clubId":7)", R"("email":"a@b.c","x":[1,{"y":[{"clubId":null}]}])"}) {
    auto r = immediate(req("POST", "/api/v1/members", member(inner)));
    cr_expect_eq(r.status, 400, "%s", inner);
    cr_expect_eq(fields_of(r), std::string("clubId;"), "%s", inner);
  }
  auto top = immediate(req("POST", "/api/v1/transactions/settled", R"({"clubId":7})"));
  cr_expect_eq(fields_of(top), std::string("clubId;"));
  // A value "clubId" is not a key.
  cr_expect_eq(immediate(req("POST", "/api/v1/members", member(R"("email":"a@b.c","note":"clubId")"))).status, 0);
}

Test(queries, club_id_in_the_query_string) {
  for (const char* q : {"clubId=3", "limit=5&clubId", "a=1&club%49d=2", "clubId="}) {
    auto r = immediate(req("GET", "/api/v1/members/m1/balance", "", q));
    cr_expect_eq(r.status, 400, "%s", q);
    cr_expect_eq(fields_of(r), std::string("clubId;"), "%s", q);
  }
  auto post = immediate(req("POST", "/api/v1/transactions/settled", settle("1"), "clubId=7"));
  cr_expect_eq(code_of(post), std::string("invalid_request"));
  cr_expect_eq(immediate(req("GET", "/api/v1/members/m1/balance", "", "clubIdx=1&xclubId=2")).status, 0);
}

// Found by tests/fuzz (corpus/router/query_name_not_utf8): a parameter
// whose value is not valid percent-encoding was named in the error with its
// raw bytes, so a name that is not UTF-8 made the answer invalid JSON. Since
// contract section 9 such an unknown parameter is ignored altogether; a
// known one with a bad value is named, as its decoded (ASCII) name.
Test(queries, bad_parameter_named_in_valid_json) {
  const std::string query = "filter=all&b\xa8" "fore=%%1763632800000";
  cr_expect_eq(immediate(req("GET", "/api/v1/members/m1/points", "", query)).status, 0);
  cr_expect(std::holds_alternative<HistoryQuery>(parse_history_query(query, true)));
  const std::string known = "filter=all&b%65fore=%%1763632800000";  // "before", percent-encoded
  for (const auto& r : {immediate(req("GET", "/api/v1/members/m1/points", "", known)),
                        Response{400, render_error(std::get<mr::Error>(parse_history_query(known, true)), "rid")}}) {
    cr_expect_eq(r.status, 400);
    rapidjson::Document d;
    d.Parse<rapidjson::kParseValidateEncodingFlag>(r.body.data(), r.body.size());
    cr_assert(!d.HasParseError(), "not valid JSON: %s", r.body.c_str());
    cr_expect_eq(fields_of(r), std::string("before;"));
  }
}

Test(queries, statements_for_histories) {
  Prepared p = prepare(req("GET", "/api/v1/members/m1/points", "", "filter=reserved&limit=999999999999999999999"));
  const Query& q = pending_query(p);
  cr_expect(q.sql.find(" mr_points_rows_filtered(") != std::string::npos);
  cr_expect_eq(*q.params[1], std::string("m1"));
  cr_expect_eq(*q.params[2], std::string("reserved"));
  cr_expect_eq(*q.params[3], std::string("100"));
  cr_expect(!q.params[4].has_value(), "no before: NULL cursor");
  Prepared t = prepare(req("GET", "/api/v1/members/m1/transactions", "", "before=1700000000000&limit=7"));
  const Query& tq = pending_query(t);
  cr_expect(tq.sql.find(" mr_transactions_rows(") != std::string::npos);
  cr_expect_eq(*tq.params[2], std::string("7"));
  cr_expect_eq(*tq.params[3], std::string("1700000000000"));
  auto huge = std::get<HistoryQuery>(parse_history_query("before=99999999999999999999", true));
  cr_expect_eq(*huge.before, INT64_MAX);
  cr_expect(std::holds_alternative<mr::Error>(parse_history_query("limit=-99999999999999999999", true)));
  cr_expect(std::holds_alternative<mr::Error>(parse_history_query("limit=%zz", true)));
  // Query rules apply through prepare too, with the field named.
  cr_expect_eq(fields_of(immediate(req("GET", "/api/v1/members/m1/points", "", "filter=all&limit=0"))),
               std::string("limit;"));
  cr_expect_eq(fields_of(immediate(req("GET", "/api/v1/members/m1/points", "", "filter=EARNED"))),
               std::string("filter;"));
}

Test(routing, path_parameters) {
  cr_expect_eq(fields_of(immediate(req("GET", "/api/v1/members/%zz/points"))), std::string("externalMemberId;"));
  cr_expect_eq(immediate(req("GET", "/api/v1/members/" + std::string(129, 'x') + "/points")).status, 400);
  cr_expect_eq(immediate(req("GET", "/api/v1/members/" + std::string(128, 'x') + "/points")).status, 0);
  cr_expect_eq(immediate(req("GET", "/api/v1/members//points")).status, 400);
  cr_expect_eq(immediate(req("GET", "/api/v1/members/%C3%A9/points")).status, 400);
  cr_expect_eq(immediate(req("GET", "/api/v1/redemptions/rdm%2")).status, 400);
  Prepared p = prepare(req("GET", "/api/v1/members/a%2Fb%25/transactions"));
  cr_expect_eq(*pending_query(p).params[1], std::string("a/b%"));
  // Trailing slashes and deeper paths are other paths.
  cr_expect_eq(code_of(immediate(req("GET", "/api/v1/members/m1/balance/"))), std::string("not_found"));
  cr_expect_eq(code_of(immediate(req("POST", "/api/v1/members/"))), std::string("not_found"));
  cr_expect_eq(code_of(immediate(req("GET", "/api/v1/transactions/settled"))), std::string("method_not_allowed"));
  cr_expect_eq(code_of(immediate(req("PUT", "/api/v1/members/m1/close"))), std::string("method_not_allowed"));
  cr_expect_eq(code_of(immediate(req("GET", "/api/v1/members/m1/other"))), std::string("not_found"));
}

Test(validation, reason_rules) {
  const auto with_reason = [](const std::string& reason) {
    return R"({"partnerRef":"club-a","eventId":"e","occurredAt":"2026-11-20T10:00:00Z",)"
           R"("member":{"externalMemberId":"m"},"transaction":{"externalTransactionId":"t","currency":"GBP"},)"
           R"("reason":)" + reason + "}";
  };
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/reversed", with_reason("\"" + std::string(500, 'r') + "\""))).status, 0);
  cr_expect_eq(immediate(req("POST", "/api/v1/transactions/reversed", with_reason("\"\""))).status, 0);
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/transactions/reversed",
                                       with_reason("\"" + std::string(501, 'r') + "\"")))),
               std::string("reason;"));
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/transactions/reversed", with_reason("5")))),
               std::string("reason;"));
  Prepared p = prepare(req("POST", "/api/v1/transactions/reversed", with_reason("\"dispute\"")));
  const Query& q = pending_query(p);
  cr_expect_eq(*q.params[0], std::string("reverse"));
  cr_expect_eq(*q.params[6], std::string(R"({"reason":"dispute","partnerRef":"club-a","eventId":"e",)"
                                         R"("occurredAt":"2026-11-20T10:00:00Z","externalMemberId":"m",)"
                                         R"("externalTransactionId":"t","currency":"GBP"})"));
  cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/transactions/reversed", with_reason("\"x\"").replace(
                                           with_reason("\"x\"").find("\"currency\""), 0, "\"amountMinor\":1000000000001,")))),
               std::string("transaction.amountMinor;"));
}

Test(validation, huge_redemption_points_are_a_business_outcome) {
  const auto body = [](const std::string& points) {
    return R"({"partnerRef":"club-a","requestId":"r1","member":{"externalMemberId":"m1"},"redemption":{"points":)" +
           points + R"(,"currency":"GBP"}})";
  };
  for (const auto& [token, want] : {std::pair{"100000000000000000000", INT64_MAX},
                                    std::pair{"-100000000000000000000", INT64_MIN}}) {
    Prepared p = prepare(req("POST", "/api/v1/redemptions", body(token)));
    rapidjson::Document cmd;
    cmd.Parse(pending_query(p).params[6]->data(), pending_query(p).params[6]->size());
    cr_expect_eq(cmd["points"].GetInt64(), want, "%s", token);
  }
  for (const char* bad : {"1e30", "1E3", "2.0"}) {
    cr_expect_eq(fields_of(immediate(req("POST", "/api/v1/redemptions", body(bad)))),
                 std::string("redemption.points;"), "%s", bad);
  }
}

Test(rendering, exact_bodies_and_statuses) {
  struct Case {
    const char* result;
    int status;
    const char* body;
    bool replayed;
  };
  const Case cases[] = {
      {R"({"outcome":"updated","requestId":"r1","data":{"externalMemberId":"m","status":"updated","payoutReady":false}})",
       200, R"({"ok":true,"data":{"externalMemberId":"m","status":"updated","payoutReady":false}})", false},
      {R"({"outcome":"created","requestId":"r1","replayed":true,"data":{"n":1000000000000}})", 201,
       R"({"ok":true,"data":{"n":1000000000000}})", true},
      {R"({"outcome":"accepted","requestId":"r1","data":{"a":[1,null,"x"]}})", 202,
       R"({"ok":true,"data":{"a":[1,null,"x"]}})", false},
      {R"({"outcome":"ok","requestId":"r1","data":{"entries":[],"nextBefore":null}})", 200,
       R"({"ok":true,"data":{"entries":[],"nextBefore":null}})", false},
      {R"({"outcome":"duplicate_transaction","requestId":"r1","replayed":true})", 409,
       R"({"ok":false,"error":{"code":"duplicate_transaction","message":"This externalTransactionId was already settled.","requestId":"r1"}})",
       true},
      {R"({"outcome":"insufficient_partner_points_pool","requestId":"r1","message":"Pool \"low\""})", 422,
       R"({"ok":false,"error":{"code":"insufficient_partner_points_pool","message":"Pool \"low\"","requestId":"r1"}})",
       false},
      {R"({"outcome":"partner_not_found"})", 404,
       R"({"ok":false,"error":{"code":"partner_not_found","message":"partnerRef is not the reference of this key's club.","requestId":"r2"}})",
       false},
      {R"({"outcome":"ok","requestId":"r1","replayed":false,"data":{}})", 200, R"({"ok":true,"data":{}})", false},
  };
  for (const auto& c : cases) {
    const Response r = render_result(c.result, "r2");
    cr_expect_eq(r.status, c.status, "%s", c.result);
    cr_expect_eq(r.body, std::string(c.body), "%s -> %s", c.result, r.body.c_str());
    cr_expect_eq(r.replayed, c.replayed, "%s", c.result);
  }
}

Test(rendering, unusable_results_are_internal_errors) {
  const std::string internal =
      R"({"ok":false,"error":{"code":"internal_error","message":"Internal error.","requestId":"r2"}})";
  for (const char* bad : {"", "[]", "{}", R"({"outcome":1})", R"({"outcome":"ok"})", R"({"outcome":"ok","data":[]})",
                          R"({"outcome":"created","data":"x"})", R"({"outcome":"ok","data":{})"}) {
    const Response r = render_result(bad, "r2");
    cr_expect_eq(r.status, 500, "%s", bad);
    cr_expect_eq(r.body, internal, "%s", bad);
  }
}

namespace {

class FakeRows final : public ResultView {
 public:
  FakeRows(int rows, bool null) : rows_(rows), null_(null) {}
  int rows() const override { return rows_; }
  bool is_null(int, int) const override { return null_; }
  std::string_view value(int, int) const override { return R"({"outcome":"ok","data":{}})"; }

 private:
  int rows_;
  bool null_;
};

}  // namespace

Test(rendering, pending_needs_exactly_one_non_null_row) {
  Prepared p = prepare(req("POST", "/api/v1/transactions/settled", settle("5")));
  auto& pending = std::get<std::unique_ptr<Pending>>(p);
  cr_expect_eq(pending->render(FakeRows(0, false), "rid").status, 500);
  cr_expect_eq(pending->render(FakeRows(2, false), "rid").status, 500);
  cr_expect_eq(pending->render(FakeRows(1, true), "rid").status, 500);
  cr_expect_eq(pending->render(FakeRows(1, false), "rid").status, 200);
  // A replayed stored answer: same bytes as the first, flag set.
  const FakeResult first(R"({"outcome":"ok","requestId":"a","data":{"eventId":"e","pointsAwarded":5}})");
  const FakeResult replay(R"({"outcome":"ok","requestId":"a","data":{"eventId":"e","pointsAwarded":5},"replayed":true})");
  const Response one = pending->render(first, "a"), two = pending->render(replay, "b");
  cr_expect_eq(one.body, two.body);
  cr_expect(!one.replayed);
  cr_expect(two.replayed);
}

// RapidJSON alone takes a NUL as the end of the body, skips a BOM and keeps
// the first of two equal keys; a strict body refuses all three, and nesting
// past the depth limit, with invalid_request.
Test(validation, strict_json) {
  const std::string good = member(R"("email":"a@b.c")");
  cr_assert_eq(immediate(req("POST", "/api/v1/members", good)).status, 0);
  const std::string with_nul = good + std::string("\0garbage", 8);
  const Response nul = immediate(req("POST", "/api/v1/members", with_nul));
  cr_expect_eq(nul.status, 400);
  cr_expect_eq(code_of(nul), "invalid_request");
  cr_expect_eq(immediate(req("POST", "/api/v1/members", "\xEF\xBB\xBF" + good)).status, 400);
  cr_expect_eq(immediate(req("POST", "/api/v1/members", good + " x")).status, 400);
  const std::string twice =
      R"({"partnerRef":"other","partnerRef":"club-a","member":{"externalMemberId":"m1","firstName":"A","lastName":"B","email":"a@b.c"}})";
  const Response dup = immediate(req("POST", "/api/v1/members", twice));
  cr_expect_eq(dup.status, 400);
  cr_expect_eq(code_of(dup), "invalid_request");
  // The same key in two different objects is fine.
  cr_expect_eq(immediate(req("POST", "/api/v1/members", member(R"("email":"a@b.c","x":{"email":1})"))).status, 0);
  std::string deep = member(R"("email":"a@b.c","x":)");
  deep.insert(deep.size() - 2, std::string(40, '[') + std::string(40, ']'));
  cr_expect_eq(immediate(req("POST", "/api/v1/members", deep)).status, 400);
  std::string shallow = member(R"("email":"a@b.c","x":)");
  shallow.insert(shallow.size() - 2, std::string(20, '[') + std::string(20, ']'));
  cr_expect_eq(immediate(req("POST", "/api/v1/members", shallow)).status, 0);
}

// JsonDocument keeps its first 4 KiB in the object and chains 4 KiB chunks
// after it: a body of about 200 KiB (strings longer than a chunk, many
// members) reads back whole, and so does a small one.
Test(validation, documents_past_the_first_chunk_read_back_whole) {
  std::string body = "{";
  for (int i = 0; i < 2000; ++i) body += "\"k" + std::to_string(i) + "\":\"" + std::string(64, 'a' + i % 26) + "\",";
  const std::string big(9000, 'z');
  body += "\"big\":\"" + big + "\"}";
  cr_assert_gt(body.size(), 100 * mr::ledger::kJsonChunkBytes / 4);
  mr::ledger::JsonDocument d;
  std::string why;
  cr_assert(mr::ledger::parse_object(body, d, why), "%s", why.c_str());
  cr_expect_eq(d.MemberCount(), 2001u);
  cr_expect_eq(std::string(d["k1999"].GetString()), std::string(64, 'a' + 1999 % 26));
  cr_expect_eq(std::string(d["big"].GetString(), d["big"].GetStringLength()), big);
  mr::ledger::JsonDocument small;
  cr_assert(mr::ledger::parse_object(R"({"a":"b"})", small, why));
  cr_expect_eq(std::string(small["a"].GetString()), "b");
  cr_expect(!mr::ledger::parse_object("[1]", small, why));
  cr_expect_eq(why, "The body must be a JSON object.");
}

// A query parameter's raw name is client bytes: never echoed back (an
// unknown one is ignored, whatever its value: contract section 9), and an
// answer is valid UTF-8 whatever a message quotes.
Test(queries, unknown_names_are_not_echoed) {
  for (const char* q : {"<script>x=%zz", "\xff\xfe=%zz"}) {
    cr_expect_eq(immediate(req("GET", "/api/v1/members/m1/points", "", q)).status, 0, "%s", q);
    auto r = immediate(req("GET", "/api/v1/members/m1/points", "", std::string(q) + "&limit=0"));
    cr_expect_eq(r.status, 400, "%s", q);
    cr_expect_eq(fields_of(r), std::string("limit;"), "%s", q);
    cr_expect(r.body.find("script") == std::string::npos, "%s", r.body.c_str());
    cr_expect(mr::is_valid_utf8(r.body), "%s", r.body.c_str());
  }
  cr_expect_eq(fields_of(immediate(req("GET", "/api/v1/members/m1/points", "", "limit=%zz"))),
               std::string("limit;"));
  const std::string body = mr::render_error(mr::ErrorCode::invalid_request, "bad \xc0\xaf \xed\xa0\x80 \xff end", "r",
                                            std::vector<mr::FieldProblem>{{"f\xff", "p"}});
  cr_expect(mr::is_valid_utf8(body), "%s", body.c_str());
  cr_expect(body.find("end") != std::string::npos);
  cr_expect(mr::is_valid_utf8("caf\xc3\xa9"));
  cr_expect(!mr::is_valid_utf8("\xe2\x82"));
}
