// mrctl pool topup, member adjust, audit and idempotency prune: the
// ledger's operator commands, each one server-side function (ledger/sql).
#include <iostream>

#include "tools/mrctl/command.hpp"

namespace mr::ctl {
namespace {

int pool_topup(Context& ctx) {
  auto r = ctx.exec("SELECT mr_pool_topup($1, $2::bigint)",
                    {ctx.required("ref"), std::to_string(ctx.integer("points", 1, 1000000000000000000))});
  print_json_result(r.get());
  return 0;
}

int member_adjust(Context& ctx) {
  const std::int64_t limit = 1000000000000000;
  const std::int64_t points = ctx.integer("points", -limit, limit);
  if (points == 0) throw Failure{"--points must not be 0", 2};
  auto r = ctx.exec("SELECT mr_adjust($1, $2, $3::bigint, $4)",
                    {ctx.required("ref"), ctx.required("member"), std::to_string(points), ctx.required("reason")});
  print_json_result(r.get());
  return 0;
}

// The whole books, or with --club one club's books: that reads only the
// club's rows (mr_audit_club), so its cost follows the club's size.
int audit(Context& ctx) {
  const auto club = ctx.opt("club");
  if (club && PQntuples(ctx.exec("SELECT 1 FROM clubs WHERE partner_ref = $1", {club}).get()) != 1) {
    throw Failure{"no club " + *club};
  }
  auto r = club ? ctx.exec("SELECT a FROM clubs c, mr_audit_club(c.club_id) a WHERE c.partner_ref = $1", {club})
                : ctx.exec("SELECT * FROM mr_audit()");
  const int problems = PQntuples(r.get());
  for (int i = 0; i < problems; ++i) std::cerr << "mrctl audit: " << pg::value(r.get(), i, 0) << "\n";
  static constexpr const char* kBooks =
      "SELECT jsonb_build_object('ok', $1::int = 0, 'differences', $1::int, "
      "'clubs', (SELECT count(*) FROM clubs), 'members', (SELECT count(*) FROM members), "
      "'entries', (SELECT count(*) FROM ledger_entries))";
  static constexpr const char* kClub =
      "SELECT jsonb_build_object('ok', $1::int = 0, 'differences', $1::int, 'partnerRef', c.partner_ref) "
      "|| mr_club_counts(c.club_id) FROM clubs c WHERE c.partner_ref = $2";
  auto totals = club ? ctx.exec(kClub, {std::to_string(problems), club})
                     : ctx.exec(kBooks, {std::to_string(problems)});
  print_json_result(totals.get());
  return problems == 0 ? 0 : 1;
}

int idempotency_prune(Context& ctx) {
  const std::string days = ctx.has("days") ? std::to_string(ctx.integer("days", 1, 3650)) : "30";
  auto r = ctx.exec(
      "WITH gone AS (DELETE FROM idempotency_records WHERE created_at < now() - $1::int * interval '1 day' "
      "RETURNING 1) SELECT jsonb_build_object('pruned', count(*)) FROM gone",
      {days});
  print_json_result(r.get());
  return 0;
}

Register r1("pool topup", "--ref REF --points N", "add points to a club's points pool", pool_topup);
Register r2("member adjust", "--ref REF --member ID --points N --reason TEXT",
            "one manual adjustment: +N from the club's pool to the member, -N back", member_adjust);
Register r3("audit", "[--club REF]",
            "check cached balances against the ledger entries (every club, or one); exit 1 on a difference", audit);
Register r4("idempotency prune", "[--days 30]", "delete kept idempotent answers older than --days", idempotency_prune);

}  // namespace
}  // namespace mr::ctl
