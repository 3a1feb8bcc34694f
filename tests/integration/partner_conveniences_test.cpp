// Contract section 9 through the real stack (nginx, PostgreSQL, Redis): the
// query rule of every GET, GET /api/v1/club, GET /api/v1/redemptions paged
// exactly, duplicate_request_id decided first and naming the redemption,
// the sandbox test helper (and its absence in production, where nginx -t
// refuses to turn it on), and field messages that state their rule.
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {

// A payout-ready member of `ref` holding `points` available points (earn
// rate 100 bp: 100 minor units a point).
std::string member_with_points(MrClient& c, const std::string& ref, std::int64_t points) {
  const std::string id = unique("conv");
  auto m = post(c, "/api/v1/members", member_body(ref, id));
  cr_assert_eq(m.status, 201, "%s", m.body.c_str());
  if (points > 0) {
    auto r = post(c, "/api/v1/transactions/settled", settle_body(ref, id, unique("tx"), points * 100));
    cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  }
  return id;
}

// An accepted redemption's id.
std::string redeem(MrClient& c, const std::string& member, std::int64_t points,
                   const std::string& request_id = unique("rq")) {
  auto r = post(c, "/api/v1/redemptions", redeem_body("club-a", member, request_id, points));
  cr_assert_eq(r.status, 202, "%s", r.body.c_str());
  return s(data_of(r), "redemptionId");
}

std::string helper_path(const std::string& redemption) {
  return "/api/v1/test-helpers/redemptions/" + redemption + "/payout";
}

std::string outcome_body(const std::string& ref, const std::string& outcome, const std::string& reason = "") {
  Json j;
  j.str("partnerRef", ref).str("outcome", outcome);
  if (!reason.empty()) j.str("failureReason", reason);
  return j.done();
}

rapidjson::Document error_of(const HttpResponse& r) {
  rapidjson::Document d = parse_json(r.body);
  cr_assert(d.IsObject() && d.HasMember("error") && d["error"].IsObject(), "no error object: %s", r.body.c_str());
  rapidjson::Document out;
  out.CopyFrom(d["error"], out.GetAllocator());
  return out;
}

// "field=problem;" for each detail of an invalid_request.
std::string problems(const HttpResponse& r) {
  auto e = error_of(r);
  std::string out;
  if (e.HasMember("details")) {
    for (const auto& p : e["details"].GetArray()) {
      out += std::string(p["field"].GetString()) + "=" + p["problem"].GetString() + ";";
    }
  }
  return out;
}

std::string json_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  v.Accept(w);
  return b.GetString();
}

// "2026-11-26T10:00:00.123Z" as Unix milliseconds.
std::int64_t epoch_ms(const std::string& ts) {
  std::tm tm{};
  int ms = 0;
  cr_assert_eq(std::sscanf(ts.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                           &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms),
               7, "not a timestamp with milliseconds: %s", ts.c_str());
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<std::int64_t>(::timegm(&tm)) * 1000 + ms;
}

struct Page {
  std::vector<rapidjson::Document> entries;
  std::optional<std::int64_t> next_before;
};

Page list(MrClient& c, const std::string& query) {
  auto r = c.get("/api/v1/redemptions?" + query);
  cr_assert_eq(r.status, 200, "%s: %s", query.c_str(), r.body.c_str());
  auto d = data_of(r);
  Page p;
  cr_assert(d.HasMember("entries") && d["entries"].IsArray() && d.HasMember("nextBefore"), "%s", r.body.c_str());
  for (const auto& e : d["entries"].GetArray()) {
    rapidjson::Document copy;
    copy.CopyFrom(e, copy.GetAllocator());
    p.entries.push_back(std::move(copy));
  }
  if (!d["nextBefore"].IsNull()) {
    cr_assert(d["nextBefore"].IsInt64(), "%s", r.body.c_str());
    p.next_before = d["nextBefore"].GetInt64();
  }
  return p;
}

// Every page of `filter` from the cursor `before` on (none: from the
// newest), checked as histories page: newest first with strictly
// decreasing createdAt, nextBefore the last entry's createdAt, null only on
// the last page, which is never empty unless the whole list is.
std::vector<rapidjson::Document> all_pages(MrClient& c, const std::string& filter, int limit,
                                           std::optional<std::int64_t> before = std::nullopt) {
  std::vector<rapidjson::Document> out;
  std::optional<std::int64_t> last_ms;
  for (int pages = 0;; ++pages) {
    cr_assert_lt(pages, 10000, "paging does not end");
    std::string q = "limit=" + std::to_string(limit) + filter;
    if (before) q += "&before=" + std::to_string(*before);
    Page p = list(c, q);
    cr_assert_leq(p.entries.size(), static_cast<std::size_t>(limit));
    if (pages > 0) cr_assert(!p.entries.empty(), "an empty page after a non-null nextBefore");
    for (auto& e : p.entries) {
      const std::int64_t ms = epoch_ms(s(e, "createdAt"));
      if (before) cr_assert_lt(ms, *before, "an entry not older than the cursor");
      if (last_ms) cr_assert_lt(ms, *last_ms, "createdAt not strictly decreasing");
      last_ms = ms;
      out.push_back(std::move(e));
    }
    if (!p.next_before) return out;
    cr_assert_eq(p.entries.size(), static_cast<std::size_t>(limit), "a short page with nextBefore");
    cr_assert_eq(*p.next_before, *last_ms, "nextBefore is not the last entry's createdAt");
    before = p.next_before;
  }
}

std::vector<std::string> ids_of(const std::vector<rapidjson::Document>& entries) {
  std::vector<std::string> ids;
  for (const auto& e : entries) ids.push_back(s(e, "redemptionId"));
  return ids;
}

using Outcome = Ran;

// nginx -t over the fixture's own configuration with `edit` applied (the
// same modules, catalogue and master key: only what the test changes differs).
Outcome nginx_t_with(const std::function<void(std::string&)>& edit) {
  const std::string ngx = env("MR_STACK_DIR") + "/nginx";
  std::string conf = mr::read_file(ngx + "/nginx.conf");
  edit(conf);
  // Beside nginx.conf, so its relative includes resolve as they do there.
  const std::string path = ngx + "/conveniences-" + std::to_string(::getpid()) + ".conf";
  std::ofstream(path) << conf;
  Outcome out = nginx_check(ngx, path, "/dev/stderr");
  std::remove(path.c_str());
  return out;
}

// A shell command's standard output (and its exit status in `code`).
std::string output_of(const std::string& cmd, int* code = nullptr) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  cr_assert(p != nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) out += buf.data();
  const int status = ::pclose(p);
  if (code != nullptr) *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// A database of the test's own on the fixture's server, dropped after.
class ScratchDatabase {
 public:
  ScratchDatabase() : name_("mr_conv_" + std::to_string(::getpid())) {
    dsn_ = env("MR_DSN");
    const auto at = dsn_.find("dbname=mr ");
    cr_assert(at != std::string::npos, "no dbname=mr in %s", dsn_.c_str());
    dsn_.replace(at, 10, "dbname=" + name_ + " ");
    admin("DROP DATABASE IF EXISTS " + name_);
    admin("CREATE DATABASE " + name_);
  }
  ~ScratchDatabase() { admin("DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)"); }
  ScratchDatabase(const ScratchDatabase&) = delete;
  ScratchDatabase& operator=(const ScratchDatabase&) = delete;

  // psql's unaligned output of `sql`; a failing statement fails the test.
  std::string sql(const std::string& statement) {
    int code = -1;
    const std::string out =
        output_of("psql '" + dsn_ + "' -XtA -v ON_ERROR_STOP=1 -c \"" + statement + "\" 2>&1", &code);
    cr_assert_eq(code, 0, "%s: %s", statement.c_str(), out.c_str());
    return out;
  }
  void restore(const std::string& gzipped_dump) {
    int code = -1;
    const std::string out = output_of("zcat '" + gzipped_dump + "' | psql -q -X -v ON_ERROR_STOP=1 '" + dsn_ +
                                          "' 2>&1 >/dev/null",
                                      &code);
    cr_assert_eq(code, 0, "restore %s: %s", gzipped_dump.c_str(), out.c_str());
  }
  std::string migrate(const std::string& to = "") {
    int code = -1;
    const std::string out =
        output_of("'" + env("MR_MRCTL") + "' --dsn '" + dsn_ + "' migrate" + (to.empty() ? "" : " --to " + to) +
                      " 2>&1",
                  &code);
    cr_assert_eq(code, 0, "%s", out.c_str());
    return out;
  }

 private:
  void admin(const std::string& statement) {
    int code = -1;
    const std::string out = output_of("psql '" + env("MR_DSN") + "' -XtAq -c '" + statement + "' 2>&1", &code);
    cr_assert_eq(code, 0, "%s", out.c_str());
  }
  std::string name_, dsn_;
};

void replace_line(std::string& conf, const std::string& from, const std::string& to) {
  const auto at = conf.find(from);
  cr_assert(at != std::string::npos, "no \"%s\" in the fixture's nginx.conf", from.c_str());
  conf.replace(at, from.size(), to);
}

}  // namespace

// Unknown query parameters are ignored on every GET, whatever their value;
// clubId is not; a known parameter with a bad value is invalid_request.
Test(query_rule, every_get) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 300);
  const std::string rdm = redeem(c, id, 100);
  const std::string unknown = "expand=payout&x=%zz&%ff=1&future_flag";
  for (const std::string& path : {"/api/v1/members/" + id + "/balance", "/api/v1/members/" + id + "/points",
                                  "/api/v1/members/" + id + "/transactions", "/api/v1/redemptions/" + rdm,
                                  std::string("/api/v1/redemptions"), std::string("/api/v1/club")}) {
    auto plain = c.get(path);
    cr_expect_eq(plain.status, 200, "%s: %s", path.c_str(), plain.body.c_str());
    auto with = c.get(path + "?" + unknown);
    cr_expect_eq(with.status, 200, "%s?%s: %s", path.c_str(), unknown.c_str(), with.body.c_str());
    auto club = c.get(path + "?" + unknown + "&clubId=1");
    EXPECT_ERROR(club, 400, "invalid_request");
  }
  for (const auto& [path, field] : std::vector<std::pair<std::string, std::string>>{
           {"/api/v1/members/" + id + "/points?x=1&filter=nope", "filter"},
           {"/api/v1/members/" + id + "/transactions?limit=0&x=1", "limit"},
           {"/api/v1/members/" + id + "/points?before=-5", "before"},
           {"/api/v1/redemptions?status=done&x=%zz", "status"},
           {"/api/v1/redemptions?requestId=", "requestId"},
           {"/api/v1/redemptions?externalMemberId=a%00b", "externalMemberId"},
           {"/api/v1/redemptions?limit=1.5", "limit"}}) {
    auto r = c.get(path);
    EXPECT_ERROR(r, 400, "invalid_request");
    cr_expect(problems(r).starts_with(field + "="), "%s: %s", path.c_str(), r.body.c_str());
  }
}

Test(club, settings_as_partners_need_them) {
  auto r = client("A").get("/api/v1/club");
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  auto d = data_of(r);
  cr_expect_eq(d.MemberCount(), 9u, "%s", r.body.c_str());
  cr_expect_eq(s(d, "partnerRef"), std::string("club-a"));
  cr_expect_eq(s(d, "name"), std::string("Club A"));
  cr_expect_eq(s(d, "environment"), std::string("sandbox"));
  cr_expect_eq(i64(d, "earnRateBasisPoints"), 100);
  cr_expect_eq(i64(d, "redemptionRateMinorPerPoint"), 1);
  cr_expect_eq(s(d, "payoutCurrency"), std::string("GBP"));
  cr_expect_eq(json_text(d["supportedCurrencies"]), std::string(R"(["GBP","EUR"])"));
  cr_expect_eq(i64(d, "minimumRedemptionPoints"), 100);
  cr_expect_gt(i64(d, "availablePointsPool"), 0);
  // club-f has no redemption rate yet (null) and an unfunded pool.
  auto f = data_of(client("F").get("/api/v1/club"));
  cr_expect_eq(s(f, "partnerRef"), std::string("club-f"));
  cr_expect(f.HasMember("redemptionRateMinorPerPoint") && f["redemptionRateMinorPerPoint"].IsNull(), "%s",
            json_text(f).c_str());
  cr_expect_eq(s(f, "payoutCurrency"), std::string("GBP"));
  cr_expect_eq(json_text(f["supportedCurrencies"]), std::string(R"(["GBP"])"));
  cr_expect_eq(i64(f, "minimumRedemptionPoints"), 1);
  cr_expect_eq(i64(f, "availablePointsPool"), 0);
  // The pool is the club's, as mrctl shows it; B's settings are B's own.
  auto b = data_of(client("B").get("/api/v1/club"));
  cr_expect_eq(s(b, "partnerRef"), std::string("club-b"));
  cr_expect_eq(i64(b, "earnRateBasisPoints"), 250);
  EXPECT_ERROR(client("A").post("/api/v1/club", R"({"partnerRef":"club-a"})", unique("k")), 405,
               "method_not_allowed");
}

// A retried requestId always gets duplicate_request_id naming the first
// redemption, even when the balance no longer covers it or the body
// differs; the partner check still comes first.
Test(duplicate_request_id, decided_first_and_names_the_redemption) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 1000);
  const std::string rq = unique("rq");
  const std::string first = redeem(c, id, 600, rq);
  cr_expect_eq(points_balance(c, id), 400, "the balance dropped below the redemption");
  for (const std::string& body : {redeem_body("club-a", id, rq, 600), redeem_body("club-a", id, rq, 5),
                                  redeem_body("club-a", id, rq, 600, "EUR"),
                                  redeem_body("club-a", unique("ghost"), rq, 0)}) {
    const std::string key = unique("k");
    auto r = c.post("/api/v1/redemptions", body, key);
    EXPECT_ERROR(r, 409, "duplicate_request_id");
    auto e = error_of(r);
    cr_expect(e.HasMember("redemptionId") && e["redemptionId"].IsString(), "%s", r.body.c_str());
    cr_expect_eq(s(e, "redemptionId"), first, "%s", r.body.c_str());
    // Kept for replay: the same key answers byte for byte.
    auto again = c.post("/api/v1/redemptions", body, key);
    cr_expect_eq(again.status, 409);
    cr_expect_eq(again.body, r.body);
    cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  }
  EXPECT_ERROR(post(c, "/api/v1/redemptions", redeem_body("club-b", id, rq, 600)), 404, "partner_not_found");
  // Another club may use the same requestId: it is not B's duplicate (B's
  // member has no points, so B's own checks answer).
  auto b = client("B");
  const std::string bid = unique("conv");
  cr_assert_eq(post(b, "/api/v1/members", member_body("club-b", bid)).status, 201);
  EXPECT_ERROR(post(b, "/api/v1/redemptions", redeem_body("club-b", bid, rq, 100)), 422,
               "insufficient_points_balance");
  cr_expect_eq(points_balance(c, id), 400, "nothing reserved twice");
  cr_expect_eq(i64(data_of(c.get("/api/v1/members/" + id + "/balance")), "reservedPointsBalance"), 600);
}

// The same requestId under several idempotency keys at once: one is
// accepted, every other gets duplicate_request_id naming it (never
// insufficient_points_balance for the points the first reserved).
Test(duplicate_request_id, concurrent_retries) {
  auto c0 = client("A");
  const std::string id = member_with_points(c0, "club-a", 1000);
  const std::string rq = unique("rq"), body = redeem_body("club-a", id, rq, 700);
  std::vector<HttpResponse> answers(8);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < answers.size(); ++i) {
    threads.emplace_back([&, i] { answers[i] = client("A").post("/api/v1/redemptions", body, unique("k")); });
  }
  for (auto& t : threads) t.join();
  std::string accepted;
  int duplicates = 0;
  for (const auto& r : answers) {
    if (r.status == 202) {
      cr_expect(accepted.empty(), "two accepted");
      accepted = s(data_of(r), "redemptionId");
    }
  }
  cr_assert(!accepted.empty(), "none accepted");
  for (const auto& r : answers) {
    if (r.status == 202) continue;
    cr_expect_eq(error_code(r), std::string("duplicate_request_id"), "%s", r.body.c_str());
    if (error_code(r) == "duplicate_request_id") {
      cr_expect_eq(s(error_of(r), "redemptionId"), accepted);
      ++duplicates;
    }
  }
  cr_expect_eq(duplicates, 7);
  cr_expect_eq(points_balance(c0, id), 300);
}

// A member's redemptions made at once (several in one millisecond likely):
// each has its own createdAt, and paging one at a time lists each once.
Test(redemptions_list, pages_exactly_through_equal_times) {
  auto c0 = client("A");
  const std::string id = member_with_points(c0, "club-a", 100 * 24);
  std::vector<std::string> made(24);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto c = client("A");
      for (int i = t; i < 24; i += 4) {
        auto r = c.post("/api/v1/redemptions", redeem_body("club-a", id, unique("rq"), 100), unique("k"));
        if (r.status == 202) made[i] = s(data_of(r), "redemptionId");
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& m : made) cr_assert(!m.empty(), "a redemption was refused");
  const std::string filter = "&externalMemberId=" + id;
  for (int limit : {1, 5, 24, 100}) {
    auto entries = all_pages(c0, filter, limit);
    auto ids = ids_of(entries);
    cr_expect_eq(ids.size(), 24u, "limit %d", limit);
    cr_expect_eq(std::set<std::string>(ids.begin(), ids.end()), std::set<std::string>(made.begin(), made.end()),
                 "limit %d", limit);
    for (const auto& e : entries) cr_expect_eq(s(e, "externalMemberId"), id);
  }
  // A page holding exactly the last entries already says null.
  Page exact = list(c0, "limit=24" + filter);
  cr_expect_eq(exact.entries.size(), 24u);
  cr_expect(!exact.next_before);
  // The oldest's createdAt as the cursor: nothing older.
  auto newest_first = all_pages(c0, filter, 100);
  Page none = list(c0, "before=" + std::to_string(epoch_ms(s(newest_first.back(), "createdAt"))) + filter);
  cr_expect(none.entries.empty());
  cr_expect(!none.next_before);
  // Entries have the shape of GET /api/v1/redemptions/{id}, byte for byte.
  for (const auto& e : newest_first) {
    auto one = data_of(c0.get("/api/v1/redemptions/" + s(e, "redemptionId")));
    cr_expect_eq(json_text(e), json_text(one));
  }
}

// The whole club's list (other tests add to it meanwhile): below a cursor
// taken after our redemptions, pages of any size give the same sequence,
// and it holds ours; newer ones only ever appear above the cursor.
Test(redemptions_list, the_club_newest_first) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 1000);
  std::vector<std::string> mine;
  for (int i = 0; i < 3; ++i) mine.push_back(redeem(c, id, 100));
  const auto newest = data_of(c.get("/api/v1/redemptions/" + mine.back()));
  const std::int64_t cursor = epoch_ms(s(newest, "createdAt")) + 1;
  // Several hundred entries at most in a test run: every page of 100, and
  // the first 40 entries again in pages of 7.
  const auto by_100 = ids_of(all_pages(c, "", 100, cursor));
  cr_assert_geq(by_100.size(), 3u);
  for (const auto& m : mine) {
    cr_expect(std::find(by_100.begin(), by_100.end(), m) != by_100.end(), "%s not listed", m.c_str());
  }
  cr_expect_eq(by_100[0], mine.back(), "the newest first");
  std::vector<std::string> by_7;
  std::optional<std::int64_t> before = cursor;
  while (by_7.size() < 40 && before) {
    Page p = list(c, "limit=7&before=" + std::to_string(*before));
    for (const auto& e : p.entries) by_7.push_back(s(e, "redemptionId"));
    before = p.next_before;
  }
  const std::size_t n = std::min(by_7.size(), by_100.size());
  cr_expect(std::equal(by_7.begin(), by_7.begin() + static_cast<std::ptrdiff_t>(n), by_100.begin()),
            "pages of 7 differ from pages of 100");
  // Without a cursor the newest come first: ours are there unless 100
  // newer ones were made meanwhile, and nothing there is older than ours
  // without ours being there too.
  Page first = list(c, "limit=100");
  cr_expect(!first.entries.empty());
  cr_expect_geq(epoch_ms(s(first.entries[0], "createdAt")), cursor - 1);
  // Another club never sees club-a's.
  auto b = client("B");
  for (const auto& e : all_pages(b, "", 100)) {
    cr_expect(std::find(mine.begin(), mine.end(), s(e, "redemptionId")) == mine.end());
  }
}

Test(redemptions_list, filters) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 1000);
  const std::string rq_done = unique("rq"), rq_failed = unique("rq"), rq_pending = unique("rq");
  const std::string done = redeem(c, id, 100, rq_done), failed = redeem(c, id, 100, rq_failed),
                    pending = redeem(c, id, 100, rq_pending);
  cr_assert_eq(post(c, helper_path(done), outcome_body("club-a", "succeeded")).status, 200);
  cr_assert_eq(post(c, helper_path(failed), outcome_body("club-a", "failed")).status, 200);
  const std::string member = "&externalMemberId=" + id;
  cr_expect_eq(ids_of(all_pages(c, member, 10)), (std::vector<std::string>{pending, failed, done}));
  cr_expect_eq(ids_of(all_pages(c, member + "&status=completed", 10)), std::vector<std::string>{done});
  cr_expect_eq(ids_of(all_pages(c, member + "&status=failed", 10)), std::vector<std::string>{failed});
  cr_expect_eq(ids_of(all_pages(c, member + "&status=payout_pending", 10)), std::vector<std::string>{pending});
  // A requestId finds its redemption after a lost answer, alone or with the
  // other filters; with a filter that excludes it, nothing.
  cr_expect_eq(ids_of(all_pages(c, "&requestId=" + rq_failed, 10)), std::vector<std::string>{failed});
  cr_expect_eq(ids_of(all_pages(c, "&requestId=" + rq_failed + member + "&status=failed", 10)),
               std::vector<std::string>{failed});
  cr_expect(all_pages(c, "&requestId=" + rq_failed + "&status=completed", 10).empty());
  cr_expect(all_pages(c, "&requestId=" + unique("never"), 10).empty());
  cr_expect(all_pages(c, "&requestId=" + rq_failed + "&externalMemberId=" + unique("other"), 10).empty());
  // An unknown member matches nothing; another club's requestId is not ours.
  cr_expect(all_pages(c, "&externalMemberId=" + unique("ghost"), 10).empty());
  auto b = client("B");
  cr_expect(all_pages(b, "&requestId=" + rq_done, 10).empty());
  cr_expect(all_pages(b, member, 10).empty());
  // Status filter across the club: every entry has it.
  for (const char* st : {"payout_pending", "completed", "failed"}) {
    for (const auto& e : list(c, std::string("limit=20&status=") + st).entries) {
      cr_expect_eq(s(e, "status"), std::string(st));
    }
  }
  // The page is kept: GetObject() is a view into a document it owns.
  const auto page = list(c, "requestId=" + rq_failed);
  cr_assert(!page.entries.empty());
  cr_expect_eq(s(page.entries.at(0)["payout"], "status"), std::string("failed"));
}

// The sandbox test helper moves a payout as the operator's report does:
// the same states, ledger entries, no-ops and conflicts.
Test(test_helper, payout_succeeds) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 1000);
  const std::string rdm = redeem(c, id, 400);
  const std::string key = unique("k"), body = outcome_body("club-a", "succeeded");
  auto r = c.post(helper_path(rdm), body, key);
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  auto d = data_of(r);
  cr_expect_eq(s(d, "redemptionId"), rdm);
  cr_expect_eq(s(d, "status"), std::string("completed"));
  cr_expect_eq(s(d["payout"], "status"), std::string("succeeded"));
  cr_expect(d["payout"]["failureReason"].IsNull());
  // Data is the redemption as GET shows it after the move.
  cr_expect_eq(json_text(d), json_text(data_of(c.get("/api/v1/redemptions/" + rdm))));
  // An idempotent replay: byte for byte, flagged.
  auto replay = c.post(helper_path(rdm), body, key);
  cr_expect_eq(replay.status, 200);
  cr_expect_eq(replay.body, r.body);
  cr_expect_eq(header(replay, "x-mr-idempotent-replay"), std::string("true"));
  // The same result again under a new key: a no-op that succeeds.
  auto same = post(c, helper_path(rdm), body);
  cr_expect_eq(same.status, 200, "%s", same.body.c_str());
  cr_expect_eq(s(data_of(same), "status"), std::string("completed"));
  // A contradicting one: payout_state_conflict, and nothing moves.
  EXPECT_ERROR(post(c, helper_path(rdm), outcome_body("club-a", "failed", "late")), 409, "payout_state_conflict");
  auto b = data_of(c.get("/api/v1/members/" + id + "/balance"));
  cr_expect_eq(i64(b, "pointsBalance"), 600);
  cr_expect_eq(i64(b, "reservedPointsBalance"), 0);
  cr_expect_eq(i64(b, "lifetimePointsRedeemed"), 400);
  auto burned = data_of(c.get("/api/v1/members/" + id + "/points?filter=redeemed"));
  cr_expect_eq(burned["entries"].Size(), 1u, "one redeem_burn, the no-op wrote none");
  cr_expect_eq(data_of(c.get("/api/v1/members/" + id + "/points?filter=released"))["entries"].Size(), 0u);
  // The operator's report agrees: the same result is a no-op, the other refused.
  const std::string po = s(d["payout"], "payoutId");
  cr_expect_eq(sh(mrctl_cmd() + " payout succeed --payout-id " + po + " >/dev/null 2>&1"), 0);
  cr_expect_neq(sh(mrctl_cmd() + " payout fail --payout-id " + po + " --reason x >/dev/null 2>&1"), 0);
  cr_expect_eq(sh(mrctl_cmd() + " audit --club club-a >/dev/null"), 0);
}

Test(test_helper, payout_fails) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 500);
  const std::string rdm = redeem(c, id, 300);
  auto r = post(c, helper_path(rdm), outcome_body("club-a", "failed", "account closed"));
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  auto d = data_of(r);
  cr_expect_eq(s(d, "status"), std::string("failed"));
  cr_expect_eq(s(d["payout"], "status"), std::string("failed"));
  cr_expect_eq(s(d["payout"], "failureReason"), std::string("account closed"));
  auto b = data_of(c.get("/api/v1/members/" + id + "/balance"));
  cr_expect_eq(i64(b, "pointsBalance"), 500, "points given back");
  cr_expect_eq(i64(b, "reservedPointsBalance"), 0);
  cr_expect_eq(i64(b, "lifetimePointsRedeemed"), 0);
  cr_expect_eq(data_of(c.get("/api/v1/members/" + id + "/points?filter=released"))["entries"].Size(), 1u);
  cr_expect_eq(post(c, helper_path(rdm), outcome_body("club-a", "failed", "again")).status, 200, "a no-op");
  EXPECT_ERROR(post(c, helper_path(rdm), outcome_body("club-a", "succeeded")), 409, "payout_state_conflict");
  cr_expect_eq(s(data_of(c.get("/api/v1/redemptions/" + rdm))["payout"], "failureReason"),
               std::string("account closed"), "the first reason stays");
  // Without a reason, as the operator's report without one.
  const std::string other = redeem(c, id, 100);
  auto plain = post(c, helper_path(other), outcome_body("club-a", "failed"));
  cr_assert_eq(plain.status, 200, "%s", plain.body.c_str());
  cr_expect_eq(s(data_of(plain)["payout"], "failureReason"), std::string("failed"));
  // After the operator submitted it: the same states apply.
  const std::string submitted = redeem(c, id, 100);
  const std::string po = s(data_of(c.get("/api/v1/redemptions/" + submitted))["payout"], "payoutId");
  cr_assert_eq(sh(mrctl_cmd() + " payout submit --payout-id " + po + " >/dev/null 2>&1"), 0);
  cr_expect_eq(post(c, helper_path(submitted), outcome_body("club-a", "succeeded")).status, 200);
  cr_expect_eq(sh(mrctl_cmd() + " audit --club club-a >/dev/null"), 0);
}

Test(test_helper, refusals) {
  auto c = client("A");
  const std::string id = member_with_points(c, "club-a", 200);
  const std::string rdm = redeem(c, id, 100);
  EXPECT_ERROR(post(c, helper_path("rdm_" + unique("none")), outcome_body("club-a", "succeeded")), 404,
               "redemption_not_found");
  auto b = client("B");
  EXPECT_ERROR(post(b, helper_path(rdm), outcome_body("club-b", "succeeded")), 404, "redemption_not_found");
  EXPECT_ERROR(post(c, helper_path(rdm), outcome_body("club-b", "succeeded")), 404, "partner_not_found");
  auto bad = post(c, helper_path(rdm), outcome_body("club-a", "paid"));
  EXPECT_ERROR(bad, 400, "invalid_request");
  cr_expect_eq(problems(bad), std::string("outcome=must be succeeded or failed;"));
  EXPECT_ERROR(post(c, helper_path(rdm), R"({"partnerRef":"club-a","outcome":"succeeded","clubId":1})"), 400,
               "invalid_request");
  EXPECT_ERROR(c.get(helper_path(rdm)), 405, "method_not_allowed");
  // Signed like every POST: without an idempotency key, refused at the edge.
  auto no_key = c.send("POST", helper_path(rdm), outcome_body("club-a", "succeeded"),
                       [&] {
                         auto h = c.signed_headers("POST", helper_path(rdm), outcome_body("club-a", "succeeded"));
                         h.emplace_back("Content-Type", "application/json");
                         return h;
                       }());
  EXPECT_ERROR(no_key, 400, "invalid_request");
  cr_expect_eq(s(data_of(c.get("/api/v1/redemptions/" + rdm)), "status"), std::string("payout_pending"),
               "nothing moved");
}

// nginx -t refuses the test helpers outside the sandbox, and accepts them
// off there or on in the sandbox.
Test(test_helper, nginx_refuses_it_in_production) {
  const auto production = [](const std::string& helpers) {
    return nginx_t_with([&](std::string& conf) {
      replace_line(conf, "mr_environment sandbox;", "mr_environment production;");
      replace_line(conf, "mr_test_helpers on;", "mr_test_helpers " + helpers + ";");
    });
  };
  const Outcome on = production("on");
  cr_expect_neq(on.exit_code, 0, "accepted:\n%s", on.output.c_str());
  cr_expect(on.output.find("mr_test_helpers on lets partners settle their own payouts and is for "
                           "\"mr_environment sandbox\" only: set \"mr_test_helpers off\"") != std::string::npos,
            "%s", on.output.c_str());
  const Outcome off = production("off");
  cr_expect_eq(off.exit_code, 0, "%s", off.output.c_str());
  const Outcome sandbox = nginx_t_with([](std::string&) {});
  cr_expect_eq(sandbox.exit_code, 0, "%s", sandbox.output.c_str());
}

// A production node (its own nginx on the fixture's database and Redis,
// mr_environment production, the helpers off as everywhere by default):
// the test helper's path does not exist there; GET /api/v1/club names the
// environment.
Test(test_helper, not_found_in_production, .timeout = 120) {
  const std::string node = env("MR_STACK_DIR") + "/../conveniences-production";
  const std::string free_port = env("MR_REPO") + "/tools/free-port.sh";
  const auto kept = read_env_file(env("MR_STACK_DIR") + "/ports");
  const int up = sh("env -u MR_TEST_HELPERS -u MR_PAYOUT_SIMULATOR MR_ENVIRONMENT=production MR_BUILD_DIR='" +
                    kept.at("MR_BUILD_DIR") + "' MR_NODE_OF='" + env("MR_STACK_DIR") + "' MR_PORT=$(" + free_port +
                    ") MR_OPS_PORT=$(" + free_port + ") '" + env("MR_REPO") + "/tools/stack.sh' up '" + node +
                    "' >/dev/null");
  cr_assert_eq(up, 0);
  const auto node_env = read_env_file(node + "/stack.env");
  MrClient prd(node_env.at("MR_BASE_URL"), env("MR_KEY_PRD_ID"), env("MR_KEY_PRD_SECRET"));
  auto club = prd.get("/api/v1/club");
  cr_expect_eq(club.status, 200, "%s", club.body.c_str());
  if (club.status == 200) cr_expect_eq(s(data_of(club), "environment"), std::string("production"));
  auto a = client("A");
  const std::string id = member_with_points(a, "club-a", 200);
  const std::string rdm = redeem(a, id, 100);
  for (const char* method : {"POST", "GET"}) {
    const std::string body = std::string(method) == "POST" ? outcome_body("club-a", "succeeded") : "";
    auto h = prd.signed_headers(method, helper_path(rdm), body);
    if (!body.empty()) {
      h.emplace_back("Content-Type", "application/json");
      h.emplace_back("X-MR-Idempotency-Key", unique("k"));
    }
    EXPECT_ERROR(prd.send(method, helper_path(rdm), body, h), 404, "not_found");
  }
  cr_expect_eq(s(data_of(a.get("/api/v1/redemptions/" + rdm)), "status"), std::string("payout_pending"));
  // A plain reload keeps what `up` was given: still production.
  cr_expect_eq(sh("env -u MR_ENVIRONMENT '" + env("MR_REPO") + "/tools/stack.sh' reload '" + node + "' >/dev/null"), 0);
  auto again = prd.get("/api/v1/club");
  cr_expect_eq(again.status, 200, "%s", again.body.c_str());
  if (again.status == 200) cr_expect_eq(s(data_of(again), "environment"), std::string("production"));
  cr_expect_eq(sh("'" + env("MR_REPO") + "/tools/stack.sh' down '" + node + "' >/dev/null"), 0);
}

// Bank details: the message states the rule whatever the length sent.
Test(field_messages, bank_details_state_their_rule) {
  auto c = client("A");
  const auto member_with = [](const std::string& number, const std::string& sort) {
    return Json().str("partnerRef", "club-a")
        .raw("member", Json().str("externalMemberId", unique("m")).str("firstName", "A").str("lastName", "B")
                           .str("email", "a@b.c")
                           .raw("wallet", Json().raw("bankAccount", Json().str("accountNumber", number)
                                                                       .str("sortCode", sort).str("name", "A")
                                                                       .done())
                                              .done())
                           .done())
        .done();
  };
  for (const char* sort : {"11-22-33", "1122334", "11223", "abcdef"}) {
    auto r = post(c, "/api/v1/members", member_with("12345678", sort));
    EXPECT_ERROR(r, 400, "invalid_request");
    cr_expect_eq(problems(r), std::string("member.wallet.bankAccount.sortCode=must be exactly 6 digits;"), "%s",
                 sort);
  }
  for (const char* number : {"123456789", "1234567", "1234-567"}) {
    auto r = post(c, "/api/v1/members", member_with(number, "112233"));
    EXPECT_ERROR(r, 400, "invalid_request");
    cr_expect_eq(problems(r), std::string("member.wallet.bankAccount.accountNumber=must be exactly 8 digits;"),
                 "%s", number);
  }
  cr_expect_eq(post(c, "/api/v1/members", member_with("12345678", "112233")).status, 201);
}

// 015 over redemptions made before it: each keeps its createdAt millisecond,
// pushed up by as little as it takes where a club's redemptions shared one
// (ordered by created_at, then id), and later ones page after them.
Test(migration_015, redemptions_made_before_it) {
  ScratchDatabase db;
  // Made by 014's own functions (fixtures/make_redemptions_014.sh): a
  // schema stopped short of the newest has none of today's. A member in
  // each club, four redemptions in a and two in b.
  db.restore(MR_FIXTURES_DIR "/redemptions_014.sql.gz");
  cr_assert_eq(db.sql("SELECT max(version) FROM schema_migrations"), "14");
  // As a burst could leave them: three of a's and both of b's in one
  // millisecond, a's fourth in the next one (a future time, so that the
  // redemption made after the migration follows them by the counter alone).
  db.sql("UPDATE redemptions SET created_at = '2030-01-01 00:00:00.5004+00' WHERE request_id <> 'rq-4'");
  db.sql("UPDATE redemptions SET created_at = '2030-01-01 00:00:00.5019+00' WHERE request_id = 'rq-4'");
  const std::string shown_before = db.sql(
      "SELECT string_agg(mr_redemption_json(redemption_id)->>'createdAt', ',' ORDER BY club_id, created_at, "
      "redemption_id) FROM redemptions");
  cr_expect_eq(shown_before, std::string("2030-01-01T00:00:00.500Z,2030-01-01T00:00:00.500Z,2030-01-01T00:00:00.500Z,"
                                         "2030-01-01T00:00:00.501Z,2030-01-01T00:00:00.500Z,2030-01-01T00:00:00.500Z"));

  db.migrate();
  const std::string base = db.sql("SELECT (extract(epoch FROM timestamptz '2030-01-01 00:00:00+00') * 1000)::bigint");
  // Offsets from the second, per club in (created_at, id) order.
  cr_expect_eq(db.sql("SELECT string_agg(format('%s:%s', c.partner_ref, r.created_ms - " + base +
                      "), ',' ORDER BY r.club_id, r.created_at, r.redemption_id) FROM redemptions r JOIN clubs c "
                      "USING (club_id)"),
               std::string("a:500,a:501,a:502,a:503,b:500,b:501"));
  cr_expect_eq(db.sql("SELECT string_agg(format('%s:%s', partner_ref, last_redemption_ms - " + base +
                      "), ',' ORDER BY club_id) FROM clubs"),
               std::string("a:503,b:501"));
  cr_expect_eq(db.sql("SELECT string_agg(mr_redemption_json(redemption_id)->>'createdAt', ',' ORDER BY club_id, "
                      "created_ms) FROM redemptions"),
               std::string("2030-01-01T00:00:00.500Z,2030-01-01T00:00:00.501Z,2030-01-01T00:00:00.502Z,"
                           "2030-01-01T00:00:00.503Z,2030-01-01T00:00:00.500Z,2030-01-01T00:00:00.501Z"),
               "the first of each millisecond shows what it showed before");
  // A redemption made now follows by the counter, and the list pages all five.
  db.sql("SELECT mr_write('redeem', club_id, 'a', 'k-rq-5', 'f', 'r', jsonb_build_object('partnerRef', 'a', "
         "'requestId', 'rq-5', 'externalMemberId', 'ann', 'points', 10, 'currency', 'GBP')) FROM clubs "
         "WHERE partner_ref = 'a'");
  cr_expect_eq(db.sql("SELECT created_ms - " + base + " FROM redemptions WHERE request_id = 'rq-5'"), "504");
  const std::string first_page =
      db.sql("SELECT mr_redemptions(club_id, NULL, NULL, NULL, 3, NULL, 'q')->'data'->>'nextBefore' FROM clubs "
             "WHERE partner_ref = 'a'");
  cr_expect_eq(first_page, std::to_string(std::stoll(base) + 502));
  cr_expect_eq(db.sql("SELECT jsonb_array_length(mr_redemptions(club_id, NULL, NULL, NULL, 3, " + first_page +
                      ", 'q')->'data'->'entries') FROM clubs WHERE partner_ref = 'a'"),
               "2");
  cr_expect_eq(db.sql("SELECT count(*) FROM mr_audit()"), "0");
  // The indexes the list pages by.
  cr_expect_eq(db.sql("SELECT string_agg(indexname, ',' ORDER BY indexname) FROM pg_indexes WHERE tablename = "
                      "'redemptions' AND indexname LIKE 'redemptions_%created'"),
               std::string("redemptions_club_created,redemptions_club_status_created,redemptions_member_created"));
}
