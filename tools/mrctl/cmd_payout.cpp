// mrctl capacity topup and payout list|submit|succeed|fail: the operator's
// side of redemptions. A payout result is applied once; the same result
// again is a no-op, a contradicting one exits 1 (payout_state_conflict).
#include "ledger/payouts.hpp"
#include "tools/mrctl/command.hpp"

namespace mr::ctl {
namespace {

int capacity_topup(Context& ctx) {
  const std::string ref = ctx.required("ref");
  const std::string minor = std::to_string(ctx.integer("minor", 1, 1000000000000000000));
  auto r = ctx.exec(ctx.club_db(ref), "SELECT mr_capacity_topup($1, $2::bigint)", {ref, minor});
  print_json_result(r.get());
  return 0;
}

// Every pod's payouts, oldest first as each pod lists them.
int payout_list(Context& ctx) {
  std::optional<std::string> status = ctx.opt("status");
  if (status && !ledger::is_payout_status(*status)) {
    throw Failure{"--status is " + std::string(ledger::kPayoutStatusList), 2};
  }
  const std::int64_t limit = ctx.has("limit") ? ctx.integer("limit", 1, 10000) : 100;
  return print_every_pods_list(ctx, "SELECT mr_payouts($1, $2::int)", {status, std::to_string(limit)},
                               ledger::OpsList::payouts, static_cast<std::size_t>(limit));
}

// In the pod whose books hold the payout (payout ids are unique across pods).
int move(Context& ctx, std::string_view verb) {
  const std::string to(*ledger::payout_status_for_verb(verb));
  const std::string id = ctx.required("payout-id");
  PGconn* db = ctx.db_holding("SELECT 1 FROM payouts WHERE payout_id = $1", id, "payout");
  auto r = ctx.exec(db, "SELECT mr_payout_move($1, $2, $3)", {id, to, ctx.opt("reason")});
  print_json_result(r.get());
  return 0;
}

Register r1("capacity topup", "--ref REF --minor N", "add cash capacity (minor units) for a club's redemptions",
            capacity_topup);
Register r2("payout list", "[--status created|submitted|succeeded|failed] [--limit N]",
            "list payouts with their bank details (every pod's)", payout_list);
Register r3("payout submit", "--payout-id ID", "mark a payout submitted to the bank",
            [](Context& c) { return move(c, "submit"); });
Register r4("payout succeed", "--payout-id ID", "mark a payout paid: the reserved points are burned",
            [](Context& c) { return move(c, "succeed"); });
Register r5("payout fail", "--payout-id ID --reason TEXT", "mark a payout failed: points and cash capacity are given back",
            [](Context& c) {
  c.required("reason");
  return move(c, "fail");
});

}  // namespace
}  // namespace mr::ctl
