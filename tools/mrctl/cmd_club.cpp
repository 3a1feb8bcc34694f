// mrctl club create|update|show: a club's reference, rates, currencies and
// restrictions. Points pool and cash capacity move with their own commands.
#include <algorithm>
#include <iostream>
#include <sstream>

#include "tools/mrctl/command.hpp"
#include "tools/mrctl/pod_name.hpp"

namespace mr::ctl {
namespace {

// "GBP,EUR" -> "{GBP,EUR}" (a PostgreSQL array literal of checked codes).
std::string currencies_array(const std::string& list) {
  std::stringstream in(list);
  std::string cur, out;
  while (std::getline(in, cur, ',')) {
    check_currency(cur);
    if (("," + out + ",").find("," + cur + ",") != std::string::npos) {
      throw Failure{"currency " + cur + " is listed twice", 2};
    }
    out += (out.empty() ? "" : ",") + cur;
  }
  if (out.empty()) throw Failure{"--currencies needs at least one currency", 2};
  return "{" + out + "}";
}

// The settable columns, each from its flag when given (nullopt otherwise).
std::vector<std::optional<std::string>> settings(Context& ctx) {
  std::vector<std::optional<std::string>> p(8);
  if (ctx.has("name")) p[0] = ctx.required("name");
  if (ctx.has("earn-rate-bp")) p[1] = std::to_string(ctx.integer("earn-rate-bp", 0, 1000000));
  if (ctx.has("redemption-rate-minor"))
    p[2] = std::to_string(ctx.integer("redemption-rate-minor", 0, 1000000000));
  if (ctx.has("payout-currency")) {
    p[3] = ctx.required("payout-currency");
    check_currency(*p[3]);
  }
  if (ctx.has("currencies")) p[4] = currencies_array(ctx.required("currencies"));
  if (ctx.has("min-redemption")) p[5] = std::to_string(ctx.integer("min-redemption", 1, 1000000000));
  if (ctx.has("funding-restricted")) {
    p[6] = ctx.required("funding-restricted");
    if (*p[6] != "true" && *p[6] != "false") throw Failure{"--funding-restricted is true or false", 2};
  }
  if (ctx.has("status")) {
    p[7] = ctx.required("status");
    if (*p[7] != "active" && *p[7] != "suspended") throw Failure{"--status is active or suspended", 2};
  }
  return p;
}

// Printed after the statement that changed the club, so the JSON function
// sees the committed row: from the club's pod, which keeps its pool, cash
// capacity and burned points.
int show(Context& ctx, const std::string& ref) {
  const std::string pod = ctx.club_pod(ref);
  auto r = ctx.exec(ctx.club_db(ref),
                    "SELECT mr_club_json(club_id) || jsonb_build_object('pod', $2::text) FROM clubs WHERE partner_ref = $1",
                    {ref, pod});
  if (PQntuples(r.get()) == 0) throw Failure{"no club " + ref};
  print_json_result(r.get());
  return 0;
}

// --pod: the pod that will keep the club's books; none (or "home") for the
// catalogue's own database.
std::optional<std::string> pod_of(Context& ctx) {
  auto pod = ctx.opt("pod");
  if (!pod || *pod == kHomePod) return std::nullopt;
  if (auto problem = pod_name_problem(*pod)) throw Failure{"--pod: " + *problem, 2};
  return pod;
}

constexpr const char* kInsert =
    "INSERT INTO clubs (partner_ref, name, earn_rate_bp, redemption_rate_minor, payout_currency, "
    "currencies, min_redemption_points, funding_restricted, status%s) "
    "VALUES ($1, $2, $3::int, $4::bigint, $5, $6::text[], coalesce($7::bigint, 1), "
    "coalesce($8::boolean, false), coalesce($9, 'active')%s) "
    "ON CONFLICT (partner_ref) DO NOTHING RETURNING club_id, to_jsonb(clubs.*) - 'pod'";

std::string insert_sql(bool with_pod) {
  std::string sql = kInsert;
  for (int i = 0; i < 2; ++i) sql.replace(sql.find("%s"), 2, with_pod ? (i == 0 ? ", pod" : ", $10") : "");
  return sql;
}

// The directory's row of `pod`, locked FOR SHARE until the catalogue's
// transaction ends: a `pod set` (FOR UPDATE) waits, so the database written
// to stays the pod's. Before anything reads the directory (Context caches
// it), so that the conninfo used is the one locked.
void require_pod(Context& ctx, const std::string& pod) {
  if (pg::value(ctx.exec("SELECT to_regclass('pods') IS NOT NULL").get(), 0, 0) != "t" ||
      PQntuples(ctx.exec("SELECT 1 FROM pods WHERE pod = $1 FOR SHARE", {pod}).get()) == 0) {
    throw Failure{"no pod " + pod + " (mrctl pod list)"};
  }
}

// In the pod, a row of this reference that the catalogue does not name is
// what an interrupted create left (see club_create): removed when nothing
// was ever written for it, else the create is refused.
void remove_leftover(Context& ctx, PGconn* pod_db, const std::string& pod, const std::string& ref) {
  auto left = ctx.exec(pod_db, "SELECT club_id FROM clubs WHERE partner_ref = $1 FOR UPDATE", {ref});
  if (PQntuples(left.get()) == 0) return;
  const std::string id = pg::value(left.get(), 0, 0);
  try {
    ctx.exec(pod_db, "DELETE FROM club_pool_stripes WHERE club_id = $1", {id});
    // Any row of its books refuses the delete (foreign keys), as do funds.
    auto gone = ctx.exec(pod_db, "DELETE FROM clubs WHERE club_id = $1 AND funded_points = 0 AND burned_points = 0 "
                                 "AND cash_capacity_minor = 0 RETURNING 1", {id});
    if (PQntuples(gone.get()) != 1) throw Failure{"funded"};
  } catch (const Failure&) {
    throw Failure{"pod " + pod + " holds a club " + ref + " (club_id " + id +
                  ") that the catalogue does not name, with books: nothing created, the pod's row left as it is"};
  }
  std::cerr << "mrctl: removed pod " << pod << "'s row of club " << ref << " (club_id " << id
            << "), left by an interrupted create\n";
}

int club_create(Context& ctx) {
  const std::string ref = ctx.required("ref");
  check_ref(ref);
  for (const char* f : {"name", "earn-rate-bp", "currencies"}) ctx.required(f);
  auto p = settings(ctx);
  p.insert(p.begin(), ref);
  const auto pod = pod_of(ctx);
  if (!pod) {
    auto r = ctx.exec(insert_sql(false), p);
    if (PQntuples(r.get()) == 0) throw Failure{"club " + ref + " already exists"};
    return show(ctx, ref);
  }
  // The club's row in the pod (the same club_id, every column) commits
  // before the catalogue's, and the catalogue's transaction is open
  // meanwhile, so a failure anywhere before that last commit leaves no
  // catalogue row: nothing names the club, nothing is half made. If mrctl
  // dies between the two commits, the pod keeps a row that nothing
  // reaches (nginx and mrctl find clubs only through the catalogue), whose
  // id the catalogue's sequence never hands out again; the next create of
  // the reference removes it (remove_leftover). The other order could
  // leave a catalogue row routing a club to a pod that lacks it.
  ctx.in_transaction([&] {
    require_pod(ctx, *pod);
    p.push_back(*pod);
    auto r = ctx.exec(insert_sql(true), p);
    if (PQntuples(r.get()) == 0) throw Failure{"club " + ref + " already exists"};
    const std::string row = pg::value(r.get(), 0, 1);
    PGconn* pod_db = ctx.pod_db(*pod);
    ctx.in_transaction(pod_db, [&] {
      remove_leftover(ctx, pod_db, *pod, ref);
      ctx.exec(pod_db, "INSERT INTO clubs SELECT * FROM jsonb_populate_record(NULL::clubs, $1::jsonb)", {row});
    });
  });
  return show(ctx, ref);
}

int club_update(Context& ctx) {
  const std::string ref = ctx.required("ref");
  check_ref(ref);
  auto p = settings(ctx);
  if (std::none_of(p.begin(), p.end(), [](const auto& v) { return v.has_value(); })) {
    throw Failure{"club update: nothing to change (give at least one setting)", 2};
  }
  p.insert(p.begin(), ref);
  // Both rows, the pod's committed first (as club_create): a failure
  // before the catalogue's commit leaves the catalogue as it was, and the
  // same update again makes them equal.
  ctx.in_transaction([&] {
    auto r = ctx.exec(
        "UPDATE clubs SET name = coalesce($2, name), earn_rate_bp = coalesce($3::int, earn_rate_bp), "
        "redemption_rate_minor = coalesce($4::bigint, redemption_rate_minor), "
        "payout_currency = coalesce($5, payout_currency), currencies = coalesce($6::text[], currencies), "
        "min_redemption_points = coalesce($7::bigint, min_redemption_points), "
        "funding_restricted = coalesce($8::boolean, funding_restricted), status = coalesce($9, status), "
        "updated_at = now() WHERE partner_ref = $1 RETURNING to_jsonb(clubs.*) ->> 'pod', to_jsonb(clubs.*)",
        p);
    if (PQntuples(r.get()) == 0) throw Failure{"no club " + ref};
    if (PQgetisnull(r.get(), 0, 0)) return;
    const std::string pod = pg::value(r.get(), 0, 0);
    require_pod(ctx, pod);
    // Only the settings: the pool, cash capacity, funded and burned points
    // are the pod's own.
    auto there = ctx.exec(ctx.pod_db(pod),
                          "UPDATE clubs c SET name = r.name, earn_rate_bp = r.earn_rate_bp, "
                          "redemption_rate_minor = r.redemption_rate_minor, payout_currency = r.payout_currency, "
                          "currencies = r.currencies, min_redemption_points = r.min_redemption_points, "
                          "funding_restricted = r.funding_restricted, status = r.status, updated_at = r.updated_at "
                          "FROM jsonb_populate_record(NULL::clubs, $1::jsonb) r "
                          "WHERE c.club_id = r.club_id AND c.partner_ref = r.partner_ref RETURNING 1",
                          {pg::value(r.get(), 0, 1)});
    if (PQntuples(there.get()) != 1) {
      throw Failure{"club " + ref + " is not in pod " + pod + "'s database: the directory and the pod disagree; nothing changed"};
    }
  });
  return show(ctx, ref);
}

int club_show(Context& ctx) { return show(ctx, ctx.required("ref")); }

const std::string kFlags =
    "--name NAME --earn-rate-bp N --redemption-rate-minor N --payout-currency CUR "
    "--currencies CUR[,CUR...] --min-redemption N";
// Optional flags in brackets, as the man page writes them.
Register r1("club create",
            "--ref REF --name NAME --earn-rate-bp N --currencies CUR[,CUR...] [--redemption-rate-minor N] "
            "[--payout-currency CUR] [--min-redemption N] [--pod NAME]",
            "create a club and print it; --pod: in that pod's database too (the same club_id), which then keeps "
            "its books",
            club_create);
Register r2("club update", "--ref REF [" + kFlags + " --funding-restricted true|false --status active|suspended]",
            "change the given settings of a club and print it", club_update);
Register r3("club show", "--ref REF", "print a club as JSON, from its pod (named in \"pod\")", club_show);

}  // namespace
}  // namespace mr::ctl
