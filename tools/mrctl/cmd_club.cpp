// mrctl club create|update|show: a club's reference, rates, currencies and
// restrictions. Points pool and cash capacity move with their own commands.
#include <algorithm>
#include <sstream>

#include "tools/mrctl/command.hpp"

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
// sees the committed row.
int show(Context& ctx, const std::string& ref) {
  auto r = ctx.exec("SELECT mr_club_json(club_id) FROM clubs WHERE partner_ref = $1", {ref});
  if (PQntuples(r.get()) == 0) throw Failure{"no club " + ref};
  print_json_result(r.get());
  return 0;
}

int club_create(Context& ctx) {
  const std::string ref = ctx.required("ref");
  check_ref(ref);
  for (const char* f : {"name", "earn-rate-bp", "currencies"}) ctx.required(f);
  auto p = settings(ctx);
  p.insert(p.begin(), ref);
  auto r = ctx.exec(
      "INSERT INTO clubs (partner_ref, name, earn_rate_bp, redemption_rate_minor, payout_currency, "
      "currencies, min_redemption_points, funding_restricted, status) "
      "VALUES ($1, $2, $3::int, $4::bigint, $5, $6::text[], coalesce($7::bigint, 1), "
      "coalesce($8::boolean, false), coalesce($9, 'active')) "
      "ON CONFLICT (partner_ref) DO NOTHING RETURNING club_id",
      p);
  if (PQntuples(r.get()) == 0) throw Failure{"club " + ref + " already exists"};
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
  auto r = ctx.exec(
      "UPDATE clubs SET name = coalesce($2, name), earn_rate_bp = coalesce($3::int, earn_rate_bp), "
      "redemption_rate_minor = coalesce($4::bigint, redemption_rate_minor), "
      "payout_currency = coalesce($5, payout_currency), currencies = coalesce($6::text[], currencies), "
      "min_redemption_points = coalesce($7::bigint, min_redemption_points), "
      "funding_restricted = coalesce($8::boolean, funding_restricted), status = coalesce($9, status), "
      "updated_at = now() WHERE partner_ref = $1 RETURNING club_id",
      p);
  if (PQntuples(r.get()) == 0) throw Failure{"no club " + ref};
  return show(ctx, ref);
}

int club_show(Context& ctx) { return show(ctx, ctx.required("ref")); }

const std::string kFlags =
    "--name NAME --earn-rate-bp N --redemption-rate-minor N --payout-currency CUR "
    "--currencies CUR[,CUR...] --min-redemption N";
// Optional flags in brackets, as the man page writes them.
Register r1("club create",
            "--ref REF --name NAME --earn-rate-bp N --currencies CUR[,CUR...] [--redemption-rate-minor N] "
            "[--payout-currency CUR] [--min-redemption N]",
            "create a club and print it", club_create);
Register r2("club update", "--ref REF [" + kFlags + " --funding-restricted true|false --status active|suspended]",
            "change the given settings of a club and print it", club_update);
Register r3("club show", "--ref REF", "print a club as JSON", club_show);

}  // namespace
}  // namespace mr::ctl
