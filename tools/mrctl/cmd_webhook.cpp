// mrctl webhook list|failures|enable|disable|replay and events prune: the
// operator's side of contract section 10, each one server-side function
// (mr_ops_webhook_*, mr_events_prune; the ops listener calls the same
// ones), run in the pod
// that keeps the club's or the endpoint's books, or in every pod.
#include <iostream>

#include "ledger/timestamps.hpp"
#include "tools/mrctl/command.hpp"

namespace mr::ctl {
namespace {

std::optional<std::string> club_filter(Context& ctx) {
  auto ref = ctx.opt("ref");
  if (ref) check_ref(*ref);
  return ref;
}

// One club's endpoints from its pod, or every pod's.
int webhook_list(Context& ctx) {
  const auto ref = club_filter(ctx);
  if (ref) {
    print_json_result(ctx.exec(ctx.club_db(*ref), "SELECT mr_ops_webhook_endpoints($1)", {ref}).get());
    return 0;
  }
  return print_every_pods_list(ctx, "SELECT mr_ops_webhook_endpoints($1)", {ref}, ledger::OpsList::webhook_endpoints, 0);
}

int webhook_failures(Context& ctx) {
  const auto ref = club_filter(ctx);
  const std::int64_t limit = ctx.has("limit") ? ctx.integer("limit", 1, 10000) : 100;
  const std::vector<std::optional<std::string>> params{ref, std::to_string(limit)};
  if (ref) {
    print_json_result(ctx.exec(ctx.club_db(*ref), "SELECT mr_ops_webhook_failures($1, $2::int)", params).get());
    return 0;
  }
  return print_every_pods_list(ctx, "SELECT mr_ops_webhook_failures($1, $2::int)", params,
                               ledger::OpsList::webhook_failures, static_cast<std::size_t>(limit));
}

// In the pod whose books hold the endpoint (endpoint ids are unique across pods).
PGconn* endpoint_db(Context& ctx, const std::string& id) {
  return ctx.db_holding("SELECT 1 FROM webhook_endpoints WHERE endpoint_id = $1", id, "webhook endpoint");
}

int webhook_status(Context& ctx, std::string_view status) {
  const std::string id = ctx.required("endpoint-id");
  auto r = ctx.exec(endpoint_db(ctx, id), "SELECT mr_ops_webhook_status($1, $2)", {id, std::string(status)});
  print_json_result(r.get());
  return 0;
}

int webhook_replay(Context& ctx) {
  const std::string since = ctx.required("since");
  if (!parse_rfc3339_utc(since)) throw Failure{"--since must be an RFC 3339 UTC time, e.g. 2026-11-26T10:00:00Z", 2};
  const std::string id = ctx.required("endpoint-id");
  auto r = ctx.exec(endpoint_db(ctx, id), "SELECT mr_ops_webhook_replay($1, $2::timestamptz)", {id, since});
  print_json_result(r.get());
  return 0;
}

// Every pod keeps its clubs' events.
int events_prune(Context& ctx) {
  const std::string days = ctx.has("days") ? std::to_string(ctx.integer("days", 1, 3650)) : "30";
  std::int64_t pruned = 0;
  const auto failed = ctx.for_each_pod([&](const std::string&, PGconn* db) {
    pruned += std::stoll(pg::value(ctx.exec(db, "SELECT mr_events_prune($1::int)", {days}).get(), 0, 0));
  });
  std::cout << "{\"pruned\":" << pruned << "}\n";
  return failed.empty() ? 0 : 1;
}

Register r1("webhook list", "[--ref REF]", "list webhook endpoints (every club's in every pod, or one club's) with their queued deliveries",
            webhook_list);
Register r2("webhook failures", "[--ref REF] [--limit N]", "list failed delivery attempts, newest first",
            webhook_failures);
Register r3("webhook enable", "--endpoint-id ID", "enable an endpoint: its paused deliveries are sent again",
            [](Context& c) { return webhook_status(c, "enabled"); });
Register r4("webhook disable", "--endpoint-id ID", "disable an endpoint (disabledReason manual): delivery pauses",
            [](Context& c) { return webhook_status(c, "disabled"); });
Register r5("webhook replay", "--endpoint-id ID --since TIME",
            "queue again every kept event since TIME that the endpoint wants", webhook_replay);
Register r6("events prune", "[--days 30]", "delete events (and their deliveries) older than --days, in every pod",
            events_prune);

}  // namespace
}  // namespace mr::ctl
