// mrctl pool topup, member adjust, audit and idempotency prune: the
// ledger's operator commands, each one server-side function (ledger/sql),
// run in the club's pod, or in every pod.
#include <iostream>
#include <map>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "tools/mrctl/command.hpp"
#include "tools/mrctl/json_fields.hpp"

namespace mr::ctl {
namespace {

// Each club-scoped command runs on the club's pod (Context::club_db).
int pool_topup(Context& ctx) {
  const std::string ref = ctx.required("ref");
  const std::string points = std::to_string(ctx.integer("points", 1, 1000000000000000000));
  auto r = ctx.exec(ctx.club_db(ref), "SELECT mr_pool_topup($1, $2::bigint)", {ref, points});
  print_json_result(r.get());
  return 0;
}

int member_adjust(Context& ctx) {
  const std::int64_t limit = 1000000000000000;
  const std::int64_t points = ctx.integer("points", -limit, limit);
  if (points == 0) throw Failure{"--points must not be 0", 2};
  const std::string ref = ctx.required("ref"), member = ctx.required("member"), reason = ctx.required("reason");
  auto r = ctx.exec(ctx.club_db(ref), "SELECT mr_adjust($1, $2, $3::bigint, $4)",
                    {ref, member, std::to_string(points), reason});
  print_json_result(r.get());
  return 0;
}

struct Books {
  int differences = 0;
  std::int64_t clubs = 0, members = 0, entries = 0;
};

// One pod's whole books: every difference on stderr ("pod P: " before it
// for a pod other than home), and the counts.
Books audit_pod(Context& ctx, const std::string& pod, PGconn* db, bool home_has_directory) {
  auto r = ctx.exec(db, "SELECT * FROM mr_audit()");
  Books b;
  b.differences = PQntuples(r.get());
  const std::string where = pod == kHomePod ? "" : "pod " + pod + ": ";
  for (int i = 0; i < b.differences; ++i) std::cerr << "mrctl audit: " << where << pg::value(r.get(), i, 0) << "\n";
  // The catalogue also holds the rows of clubs whose books are in other
  // pods (audited too: nothing writes there); they are counted where
  // their books are.
  auto n = ctx.exec(db, std::string("SELECT (SELECT count(*) FROM clubs") +
                            (pod == kHomePod && home_has_directory ? " WHERE pod IS NULL" : "") +
                            "), (SELECT count(*) FROM members), (SELECT count(*) FROM ledger_entries)");
  b.clubs = std::stoll(pg::value(n.get(), 0, 0));
  b.members = std::stoll(pg::value(n.get(), 0, 1));
  b.entries = std::stoll(pg::value(n.get(), 0, 2));
  return b;
}

void write_books(rapidjson::Writer<rapidjson::StringBuffer>& w, const Books& b, bool ok) {
  w.Key("ok");
  w.Bool(ok);
  write_ints(w, {{"differences", b.differences}, {"clubs", b.clubs}, {"members", b.members}, {"entries", b.entries}});
}

// The whole books of every pod, or with --club one club's books in its
// pod: that reads only the club's rows (mr_audit_club), so its cost follows
// the club's size. Exit 1 on any difference, or when a pod cannot be
// audited.
int audit(Context& ctx) {
  if (const auto club = ctx.opt("club")) {
    PGconn* db = ctx.club_db(*club);
    auto r = ctx.exec(db, "SELECT a FROM clubs c, mr_audit_club(c.club_id) a WHERE c.partner_ref = $1", {club});
    const int problems = PQntuples(r.get());
    for (int i = 0; i < problems; ++i) std::cerr << "mrctl audit: " << pg::value(r.get(), i, 0) << "\n";
    auto totals = ctx.exec(db,
                           "SELECT jsonb_build_object('ok', $1::int = 0, 'differences', $1::int, 'partnerRef', "
                           "c.partner_ref, 'pod', $3::text) || mr_club_counts(c.club_id) FROM clubs c "
                           "WHERE c.partner_ref = $2",
                           {std::to_string(problems), club, ctx.club_pod(*club)});
    print_json_result(totals.get());
    return problems == 0 ? 0 : 1;
  }
  const bool home_has_directory = pg::value(ctx.exec("SELECT to_regclass('pods') IS NOT NULL").get(), 0, 0) == "t";
  Books all;
  std::map<std::string, Books> books;
  const auto failed = ctx.for_each_pod([&](const std::string& pod, PGconn* db) {
    const Books b = audit_pod(ctx, pod, db, home_has_directory);
    books[pod] = b;
    all.differences += b.differences;
    all.clubs += b.clubs;
    all.members += b.members;
    all.entries += b.entries;
  });
  const bool ok = all.differences == 0 && failed.empty();
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  write_books(w, all, ok);
  w.Key("pods");
  w.StartArray();
  for (const std::string& pod : ctx.pod_names()) {
    w.StartObject();
    write_strings(w, {{"pod", pod}});
    if (auto it = books.find(pod); it != books.end()) {
      write_books(w, it->second, it->second.differences == 0);
    } else {
      w.Key("ok");
      w.Bool(false);
      write_strings(w, {{"error", failed.contains(pod) ? failed.at(pod) : "not audited"}});
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  std::cout << out.GetString() << "\n";
  return ok ? 0 : 1;
}

// Every pod keeps its clubs' idempotency records.
int idempotency_prune(Context& ctx) {
  const std::string days = ctx.has("days") ? std::to_string(ctx.integer("days", 1, 3650)) : "30";
  std::int64_t pruned = 0;
  const auto failed = ctx.for_each_pod([&](const std::string&, PGconn* db) {
    auto r = ctx.exec(db,
                      "WITH gone AS (DELETE FROM idempotency_records WHERE created_at < now() - $1::int * interval '1 day' "
                      "RETURNING 1) SELECT count(*) FROM gone",
                      {days});
    pruned += std::stoll(pg::value(r.get(), 0, 0));
  });
  std::cout << "{\"pruned\":" << pruned << "}\n";
  return failed.empty() ? 0 : 1;
}

Register r1("pool topup", "--ref REF --points N", "add points to a club's points pool", pool_topup);
Register r2("member adjust", "--ref REF --member ID --points N --reason TEXT",
            "one manual adjustment: +N from the club's pool to the member, -N back", member_adjust);
Register r3("audit", "[--club REF]",
            "check cached balances against the ledger entries (every club of every pod, or one club); exit 1 on a "
            "difference or a pod that cannot be audited",
            audit);
Register r4("idempotency prune", "[--days 30]", "delete kept idempotent answers older than --days, in every pod",
            idempotency_prune);

}  // namespace
}  // namespace mr::ctl
