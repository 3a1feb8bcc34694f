// mrctl webhook list|failures|enable|disable|replay and events prune: the
// operator's side of contract section 10, each one server-side function
// of migration 014 (the ops listener calls the same ones).
#include "ledger/timestamps.hpp"
#include "tools/mrctl/command.hpp"

namespace mr::ctl {
namespace {

std::optional<std::string> club_filter(Context& ctx) {
  auto ref = ctx.opt("ref");
  if (ref) check_ref(*ref);
  return ref;
}

int webhook_list(Context& ctx) {
  auto r = ctx.exec("SELECT mr_ops_webhook_endpoints($1)", {club_filter(ctx)});
  print_json_result(r.get());
  return 0;
}

int webhook_failures(Context& ctx) {
  auto r = ctx.exec("SELECT mr_ops_webhook_failures($1, $2::int)",
                    {club_filter(ctx), ctx.has("limit") ? std::to_string(ctx.integer("limit", 1, 10000)) : "100"});
  print_json_result(r.get());
  return 0;
}

int webhook_status(Context& ctx, std::string_view status) {
  auto r = ctx.exec("SELECT mr_ops_webhook_status($1, $2)", {ctx.required("endpoint-id"), std::string(status)});
  print_json_result(r.get());
  return 0;
}

int webhook_replay(Context& ctx) {
  const std::string since = ctx.required("since");
  if (!parse_rfc3339_utc(since)) throw Failure{"--since must be an RFC 3339 UTC time, e.g. 2026-11-26T10:00:00Z", 2};
  auto r = ctx.exec("SELECT mr_ops_webhook_replay($1, $2::timestamptz)", {ctx.required("endpoint-id"), since});
  print_json_result(r.get());
  return 0;
}

int events_prune(Context& ctx) {
  const std::string days = ctx.has("days") ? std::to_string(ctx.integer("days", 1, 3650)) : "30";
  auto r = ctx.exec("SELECT jsonb_build_object('pruned', mr_events_prune($1::int))", {days});
  print_json_result(r.get());
  return 0;
}

Register r1("webhook list", "[--ref REF]", "list webhook endpoints (every club's, or one's) with their queued deliveries",
            webhook_list);
Register r2("webhook failures", "[--ref REF] [--limit N]", "list failed delivery attempts, newest first",
            webhook_failures);
Register r3("webhook enable", "--endpoint-id ID", "enable an endpoint: its paused deliveries are sent again",
            [](Context& c) { return webhook_status(c, "enabled"); });
Register r4("webhook disable", "--endpoint-id ID", "disable an endpoint (disabledReason manual): delivery pauses",
            [](Context& c) { return webhook_status(c, "disabled"); });
Register r5("webhook replay", "--endpoint-id ID --since TIME",
            "queue again every kept event since TIME that the endpoint wants", webhook_replay);
Register r6("events prune", "[--days 30]", "delete events (and their deliveries) older than --days", events_prune);

}  // namespace
}  // namespace mr::ctl
