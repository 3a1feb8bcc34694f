// History pages from the history statements' plain columns
// (ledger/history_render.cpp): what the rows say (no member, an empty page,
// a page with an older one behind it), each field as the jsonb functions
// render it, the times as to_char wrote them, and the routes' statements.
#include <criterion/criterion.h>

#include <climits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "ledger/api.hpp"
#include "ledger/history_render.hpp"
#include "ledger/statements.hpp"

using namespace mr::ledger;

namespace {

using Row = std::vector<std::optional<std::string>>;

// Rows of text as libpq gives them; nullopt is NULL (libpq's value is "").
class FakeRows final : public ResultView {
 public:
  explicit FakeRows(std::vector<Row> rows) : rows_(std::move(rows)) {}
  int rows() const override { return static_cast<int>(rows_.size()); }
  bool is_null(int row, int col) const override { return !cell(row, col); }
  std::string_view value(int row, int col) const override {
    const auto& v = cell(row, col);
    return v ? std::string_view(*v) : std::string_view();
  }

 private:
  const std::optional<std::string>& cell(int row, int col) const {
    return rows_.at(static_cast<std::size_t>(row)).at(static_cast<std::size_t>(col));
  }
  std::vector<Row> rows_;
};

// An earn entry of mr_points_rows at `ms`.
Row entry(std::int64_t ms, std::string id = "le_1") {
  return {std::to_string(ms), id, "earn_award", "Points for Shop", "10", "0", std::nullopt, "GBP",
          "Shop",             "m1", "tx-1",   "7",  "tx-1"};
}

// A row of the transactions statement at `ms`.
Row tx(std::int64_t ms, bool reversed) {
  return {std::to_string(ms),
          reversed ? "t" : "f",
          "tx-1",
          reversed ? "rev-1" : "ev-1",
          "m1",
          "Shop",
          "1000",
          "GBP",
          reversed ? "-10" : "10",
          "1795681740.450705",
          reversed ? std::nullopt : std::optional<std::string>("1795681741.000000")};
}

Row nulls(std::size_t n) { return Row(n, std::nullopt); }

rapidjson::Document parse(const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  cr_assert(!d.HasParseError() && d.IsObject(), "not JSON: %s", body.c_str());
  return d;
}

std::vector<std::int64_t> created(const Response& r) {
  auto d = parse(r.body);
  std::vector<std::int64_t> out;
  for (const auto& e : d["data"]["entries"].GetArray()) {
    // createdAt's milliseconds are the entries' own: read them back from the id we gave.
    out.push_back(std::stoll(e["id"].GetString()));
  }
  return out;
}

std::string ms_text(std::int64_t ms) {
  char buf[40];
  return std::string(buf, write_ms_text(ms, buf));
}

}  // namespace

Test(history_render, no_row_is_cardholder_not_found) {
  for (const auto& r :
       {render_points_page(FakeRows({}), 10, "rid"), render_transactions_page(FakeRows({}), 10, "rid")}) {
    cr_expect_eq(r.status, 404);
    auto d = parse(r.body);
    cr_expect_str_eq(d["error"]["code"].GetString(), "cardholder_not_found");
    cr_expect_str_eq(d["error"]["requestId"].GetString(), "rid");
  }
}

Test(history_render, a_null_row_is_an_empty_page) {
  const std::string empty = R"({"ok":true,"data":{"entries":[],"nextBefore":null}})";
  cr_expect_eq(render_points_page(FakeRows({nulls(13)}), 10, "rid").body, empty);
  cr_expect_eq(render_transactions_page(FakeRows({nulls(11)}), 10, "rid").body, empty);
  cr_expect_eq(render_points_page(FakeRows({nulls(13)}), 10, "rid").status, 200);
}

// The bytes the jsonb mr_points renders: jsonb's key order, NULL as null.
Test(history_render, a_points_entry_as_the_jsonb_was) {
  Row e = entry(1795681739452);
  e[3] = "Quote \" backslash \\ tab \t é";
  auto r = render_points_page(FakeRows({e}), 10, "rid");
  cr_expect_eq(r.status, 200);
  cr_expect_eq(r.body, std::string(R"({"ok":true,"data":{"entries":[{"id":"le_1","currency":"GBP",)"
                                   R"("createdAt":"2026-11-26T08:28:59.452Z","entryType":"earn_award",)"
                                   R"("merchantId":"m1","description":"Quote \" backslash \\ tab \t é",)"
                                   R"("pointsDelta":10,"merchantName":"Shop","ledgerGroupId":"7:tx-1",)"
                                   R"("cashValueMinor":null,"pointsDeltaReserved":0,"pointsDeltaAvailable":10,)"
                                   R"("externalTransactionId":"tx-1"}],"nextBefore":null}})"));
  // A redemption entry: cash value, reserved delta, no merchant, no currency.
  Row red = {"1000", "le_2", "redeem_reserve", "Redemption", "-50", "50", "250", std::nullopt, std::nullopt,
             std::nullopt, std::nullopt, "12", "rdm_1"};
  auto d = parse(render_points_page(FakeRows({red}), 10, "rid").body);
  const auto& x = d["data"]["entries"][0];
  cr_expect_eq(x["pointsDelta"].GetInt64(), 0);
  cr_expect_eq(x["pointsDeltaAvailable"].GetInt64(), -50);
  cr_expect_eq(x["pointsDeltaReserved"].GetInt64(), 50);
  cr_expect_eq(x["cashValueMinor"].GetInt64(), 250);
  cr_expect(x["currency"].IsNull() && x["merchantName"].IsNull() && x["merchantId"].IsNull() &&
            x["externalTransactionId"].IsNull());
  cr_expect_str_eq(x["ledgerGroupId"].GetString(), "12:rdm_1");
  cr_expect_str_eq(x["createdAt"].GetString(), "1970-01-01T00:00:01.000Z");
  cr_expect_eq(x.MemberCount(), 13u);
}

Test(history_render, transactions_entries_as_the_jsonb_was) {
  auto r = render_transactions_page(FakeRows({tx(1795681739452, true), tx(1795681739451, false)}), 10, "rid");
  cr_expect_eq(r.status, 200);
  cr_expect_eq(r.body,
               std::string(R"({"ok":true,"data":{"entries":[)"
                           R"({"type":"reversed","eventId":"rev-1","currency":"GBP",)"
                           R"("createdAt":"2026-11-26T08:28:59.452Z","merchantId":"m1",)"
                           R"("occurredAt":"2026-11-26T08:29:00.450Z","amountMinor":1000,)"
                           R"("pointsDelta":-10,"merchantName":"Shop","externalTransactionId":"tx-1"},)"
                           R"({"type":"settled","eventId":"ev-1","currency":"GBP",)"
                           R"("createdAt":"2026-11-26T08:28:59.451Z","settledAt":"2026-11-26T08:29:01.000Z",)"
                           R"("merchantId":"m1",)"
                           R"("occurredAt":"2026-11-26T08:29:00.450Z","amountMinor":1000,"pointsDelta":10,)"
                           R"("merchantName":"Shop","externalTransactionId":"tx-1"}],"nextBefore":null}})"));
  // mr_ts_text gave null for an infinite time; anything else unreadable is an error.
  Row inf = tx(5, false);
  inf[9] = "Infinity";
  inf[10] = "-Infinity";
  auto d = parse(render_transactions_page(FakeRows({inf}), 10, "rid").body);
  cr_expect(d["data"]["entries"][0]["occurredAt"].IsNull() && d["data"]["entries"][0]["settledAt"].IsNull());
  inf[9] = "2026-11-26 08:29:00+00";
  cr_expect_eq(render_transactions_page(FakeRows({inf}), 10, "rid").status, 500);
  Row bad = tx(5, false);
  bad[1] = "x";
  cr_expect_eq(render_transactions_page(FakeRows({bad}), 10, "rid").status, 500);
}

// limit + 1 rows: the extra one is cut and names nextBefore, the createdAt
// of the last entry kept; limit rows or fewer: null.
Test(history_render, the_extra_row_says_an_older_page_exists) {
  const auto page = [](std::vector<std::int64_t> ms, int limit) {
    std::vector<Row> rows;
    for (auto m : ms) rows.push_back(entry(m, std::to_string(m)));
    return render_points_page(FakeRows(rows), limit, "rid");
  };
  auto r = page({50, 40, 30}, 2);
  cr_expect_eq(created(r), (std::vector<std::int64_t>{50, 40}));
  cr_expect_eq(parse(r.body)["data"]["nextBefore"].GetInt64(), 40);
  r = page({50, 40}, 2);
  cr_expect_eq(created(r), (std::vector<std::int64_t>{50, 40}));
  cr_expect(parse(r.body)["data"]["nextBefore"].IsNull(), "exactly limit rows: no older page");
  r = page({50}, 2);
  cr_expect(parse(r.body)["data"]["nextBefore"].IsNull());
  // Rows out of order are put newest first before the cut.
  r = page({30, 50, 40}, 2);
  cr_expect_eq(created(r), (std::vector<std::int64_t>{50, 40}));
  cr_expect_eq(parse(r.body)["data"]["nextBefore"].GetInt64(), 40);
  // 1 to 100: the statements read at most 101 rows.
  cr_expect_eq(page({50}, 100).status, 200);
  cr_expect_eq(page({50}, 101).status, 500);
  cr_expect_eq(page({50}, 0).status, 500);
  r = page({1, 2, 3, 4, 5, 6}, 1);
  cr_expect_eq(created(r), (std::vector<std::int64_t>{6}));
  cr_expect_eq(parse(r.body)["data"]["nextBefore"].GetInt64(), 6);
}

Test(history_render, rows_that_are_not_the_statements_are_internal_errors) {
  // A NULL row among others, a createdAt or a number that is not an integer,
  // pointsDelta past 64 bits (PostgreSQL raised there).
  cr_expect_eq(render_points_page(FakeRows({entry(5), nulls(13)}), 10, "rid").status, 500);
  Row e = entry(5);
  e[0] = "5.5";
  cr_expect_eq(render_points_page(FakeRows({e}), 10, "rid").status, 500);
  e = entry(5);
  e[6] = "abc";
  cr_expect_eq(render_points_page(FakeRows({e}), 10, "rid").status, 500);
  // Integers are copied as PostgreSQL wrote them: anything but its form is refused.
  for (const char* bad : {"010", "-0", "+5", "1e3", "1.0", "", "-", "12345678901234567890"}) {
    e = entry(5);
    e[6] = bad;  // cashValueMinor
    cr_expect_eq(render_points_page(FakeRows({e}), 10, "rid").status, 500, "%s accepted", bad);
  }
  e = entry(5);
  e[6] = "-9223372036854775808";
  cr_expect(render_points_page(FakeRows({e}), 10, "rid").body.find(R"("cashValueMinor":-9223372036854775808,)") !=
            std::string::npos);
  e = entry(5);
  e[4] = std::to_string(LLONG_MAX);
  e[5] = "1";
  const auto r = render_points_page(FakeRows({e}), 10, "rid");
  cr_expect_eq(r.status, 500);
  cr_expect(r.body.find("internal_error") != std::string::npos && r.body.find("rid") != std::string::npos);
}

// As to_char(timestamp 'epoch' + ms * interval '1 millisecond',
// 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') writes them (values from PostgreSQL 15).
Test(history_render, milliseconds_as_to_char_wrote_them) {
  cr_expect_eq(ms_text(0), "1970-01-01T00:00:00.000Z");
  cr_expect_eq(ms_text(-1), "1969-12-31T23:59:59.999Z");
  cr_expect_eq(ms_text(1795681739452), "2026-11-26T08:28:59.452Z");
  cr_expect_eq(ms_text(1709164800007), "2024-02-29T00:00:00.007Z");
  cr_expect_eq(ms_text(951782400000), "2000-02-29T00:00:00.000Z");
  cr_expect_eq(ms_text(253402300799999), "9999-12-31T23:59:59.999Z");
  cr_expect_eq(ms_text(-62135596800000), "0001-01-01T00:00:00.000Z");
  cr_expect_eq(ms_text(-62135596800001), "0001-12-31T23:59:59.999Z", "1 BC is year 0001 in YYYY");
  cr_expect_eq(ms_text(253402300800000), "10000-01-01T00:00:00.000Z");
  cr_expect_eq(ms_text(-59011459200000), "0100-01-01T00:00:00.000Z");
}

Test(history_render, epoch_text_to_microseconds) {
  cr_expect_eq(epoch_text_us("1795681740.450705"), std::optional<std::int64_t>(1795681740450705));
  cr_expect_eq(epoch_text_us("-0.000500"), std::optional<std::int64_t>(-500));
  cr_expect_eq(epoch_text_us("-62135596799.876544"), std::optional<std::int64_t>(-62135596799876544));
  cr_expect_eq(epoch_text_us("12"), std::optional<std::int64_t>(12000000));
  cr_expect_eq(epoch_text_us("1.5"), std::optional<std::int64_t>(1500000));
  for (const char* bad : {"", "-", "1.", ".5", "1.1234567", "abc", "1e5", "Infinity", "--1", "+1", "1.5x",
                          "99999999999999999999", "9300000000000.000000"}) {
    cr_expect(!epoch_text_us(bad), "%s read", bad);
  }
  // Microseconds to milliseconds as to_char's MS: truncated within the
  // second, so a time before 1970 counts from the second before it.
  auto r = render_transactions_page(FakeRows({[] {
                                      Row t = tx(5, true);
                                      t[9] = "-0.000500";
                                      return t;
                                    }()}),
                                    10, "rid");
  // The document outlives the comparison: cr_expect_str_eq reads its
  // arguments after the full expression, when a temporary is gone.
  const auto doc = parse(r.body);
  cr_expect_str_eq(doc["data"]["entries"][0]["occurredAt"].GetString(), "1969-12-31T23:59:59.999Z");
}

// Each history route sends its statement: points without a filter, points
// with one (its name as the third parameter), transactions; club, member,
// limit and before (NULL without one) as text.
Test(history_render, routes_send_the_history_statements) {
  const auto query_of = [](std::string_view path, std::string_view query) {
    Request r;
    r.method = "GET";
    r.path = path;
    r.query = query;
    r.club_id = 7;
    r.request_id = "rid";
    Prepared p = prepare(r);
    cr_assert(std::holds_alternative<std::unique_ptr<Pending>>(p), "%.*s answered at once", int(path.size()),
              path.data());
    return std::get<std::unique_ptr<Pending>>(p)->query();
  };
  using P = std::vector<std::optional<std::string>>;
  auto q = query_of("/api/v1/members/m1/points", "");
  cr_expect_eq(q.sql, std::string(sql::points));
  cr_expect(q.params == (P{"7", "m1", "50", std::nullopt}));
  q = query_of("/api/v1/members/m1/points", "filter=all&limit=10&before=123");
  cr_expect_eq(q.sql, std::string(sql::points));
  cr_expect(q.params == (P{"7", "m1", "10", "123"}));
  q = query_of("/api/v1/members/m%201/points", "filter=adjusted&limit=500");
  cr_expect_eq(q.sql, std::string(sql::points_filtered));
  cr_expect(q.params == (P{"7", "m 1", "adjusted", "100", std::nullopt}));
  q = query_of("/api/v1/members/m1/transactions", "limit=1&before=0&filter=earned");
  cr_expect_eq(q.sql, std::string(sql::transactions));
  cr_expect(q.params == (P{"7", "m1", "1", "0"}));
  cr_expect(q.batch == mr::ledger::BatchKind::none);
  // Each is prepared once per connection, and may queue behind other reads.
  for (const auto s : {sql::points, sql::points_filtered, sql::transactions}) {
    cr_expect(std::find(sql::prepared.begin(), sql::prepared.end(), s) != sql::prepared.end());
    cr_expect(std::find(sql::reads.begin(), sql::reads.end(), s) != sql::reads.end());
  }
  // The page's limit renders the page: limit=1 cuts the second row.
  Request r;
  r.method = "GET";
  r.path = "/api/v1/members/m1/transactions";
  r.query = "limit=1";
  r.club_id = 7;
  Prepared p = prepare(r);
  const auto page = std::get<std::unique_ptr<Pending>>(p)->render(FakeRows({tx(9, false), tx(8, false)}), "rid");
  cr_expect_eq(parse(page.body)["data"]["nextBefore"].GetInt64(), 9);
  cr_expect_eq(parse(page.body)["data"]["entries"].Size(), 1u);
}
