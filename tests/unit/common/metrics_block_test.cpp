// The node counters' rules without nginx: what a request counts under,
// the envelope's code, route names, and the Prometheus text.
#include <criterion/criterion.h>

#include <cstring>
#include <memory>
#include <string>

#include "ledger/routes.hpp"
#include "modules/common/metrics_block.hpp"

using namespace mr::metrics;
using mr::ErrorCode;
using mr::ledger::Route;

namespace {

std::unique_ptr<Block> fresh() {
  auto b = std::make_unique<Block>();
  std::memset(static_cast<void*>(b.get()), 0, sizeof(Block));
  initialise(*b);
  return b;
}

std::uint64_t g_dead = 0;
bool alive(std::uint64_t pid) { return pid != g_dead; }

bool has_line(const std::string& text, const std::string& line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.starts_with(line + "\n");
}

}  // namespace

Test(metrics_block, routes_are_a_fixed_set) {
  cr_expect_eq(mr::ledger::route_of("/api/v1/members"), Route::members_create);
  cr_expect_eq(mr::ledger::route_of("/api/v1/members/m-1/balance"), Route::member_balance);
  cr_expect_eq(mr::ledger::route_of("/api/v1/members/m-1/points"), Route::member_points);
  cr_expect_eq(mr::ledger::route_of("/api/v1/members/m-1/transactions"), Route::member_transactions);
  cr_expect_eq(mr::ledger::route_of("/api/v1/members/m-1/close"), Route::member_close);
  cr_expect_eq(mr::ledger::route_of("/api/v1/transactions/settled"), Route::transactions_settled);
  cr_expect_eq(mr::ledger::route_of("/api/v1/transactions/reversed"), Route::transactions_reversed);
  cr_expect_eq(mr::ledger::route_of("/api/v1/redemptions"), Route::redemptions_create);
  cr_expect_eq(mr::ledger::route_of("/api/v1/redemptions/rdm_1"), Route::redemption_get);
  for (const char* other : {"/", "/api/v1", "/api/v1/", "/api/v1/members/", "/api/v1/members/m/x",
                            "/api/v1x/members", "/api/v2/members", "/api/v1/members/m/balance/x"}) {
    cr_expect_eq(mr::ledger::route_of(other), Route::other, "%s", other);
  }
  cr_expect_eq(mr::ledger::ops_route_of("/metrics"), Route::ops_metrics);
  cr_expect_eq(mr::ledger::ops_route_of("/payouts/po_1/succeed"), Route::ops_payout_result);
  cr_expect_eq(mr::ledger::ops_route_of("/webhooks"), Route::ops_webhooks);
  cr_expect_eq(mr::ledger::ops_route_of("/webhooks/we_1/replay"), Route::ops_webhooks);
  cr_expect_eq(mr::ledger::ops_route_of("/webhooksx"), Route::other);
  cr_expect_eq(mr::ledger::ops_route_of("/nothing"), Route::other);
  // One label per route: a metrics series never stands for two.
  for (std::size_t i = 0; i < mr::ledger::kRouteCount; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      cr_expect_neq(mr::ledger::route_label(static_cast<Route>(i)), mr::ledger::route_label(static_cast<Route>(j)),
                    "routes %zu and %zu", i, j);
    }
  }
}

Test(metrics_block, requests_by_route_status_code_and_duration) {
  auto b = fresh();
  count_request(*b, Route::members_create, 201, std::nullopt, 3);
  count_request(*b, Route::members_create, 201, std::nullopt, 7);
  count_request(*b, Route::members_create, 422, ErrorCode::duplicate_idempotency_conflict, 12000);
  count_request(*b, Route::other, 418, std::nullopt, 0);
  const std::string text = render(*b, alive);
  cr_expect(has_line(text, R"(mr_http_requests_total{route="members_create",status="201",code="none"} 2)"), "%s",
            text.c_str());
  cr_expect(has_line(text,
                     R"(mr_http_requests_total{route="members_create",status="422",code="duplicate_idempotency_conflict"} 1)"));
  cr_expect(has_line(text, R"(mr_http_requests_total{route="other",status="other",code="none"} 1)"));
  // Cumulative buckets: 3 ms in le=0.005, 7 ms from le=0.01, 12 s only in +Inf.
  cr_expect(has_line(text, R"(mr_http_request_duration_seconds_bucket{route="members_create",le="0.005"} 1)"));
  cr_expect(has_line(text, R"(mr_http_request_duration_seconds_bucket{route="members_create",le="0.01"} 2)"));
  cr_expect(has_line(text, R"(mr_http_request_duration_seconds_bucket{route="members_create",le="10"} 2)"));
  cr_expect(has_line(text, R"(mr_http_request_duration_seconds_bucket{route="members_create",le="+Inf"} 3)"));
  cr_expect(has_line(text, R"(mr_http_request_duration_seconds_sum{route="members_create"} 12.010)"));
  cr_expect(has_line(text, R"(mr_http_request_duration_seconds_count{route="members_create"} 3)"));
  // Routes never seen have no series.
  cr_expect(text.find(R"(route="member_close")") == std::string::npos);
}

Test(metrics_block, edges_pool_and_catalogue) {
  auto b = fresh();
  count(*b, Idempotency::replayed);
  count(*b, Idempotency::bypassed);
  count(*b, Idempotency::bypassed);
  count(*b, RedisError::timeout);
  count(*b, RedisError::auth);
  // Two workers' pools; the second is gone (crashed): its gauges leave the
  // sums, its counters stay, and the worker taking its slot counts on.
  PoolFigures base1, base2, base3;
  PoolSlot* one = claim_pool_slot(*b, 101, alive, base1);
  PoolSlot* two = claim_pool_slot(*b, 102, alive, base2);
  cr_assert(one != nullptr && two != nullptr && one != two);
  publish(*one, base1, PoolFigures{1, 0, 2, 1, 3, 10, 1, 2, 7});
  publish(*two, base2, PoolFigures{3, 5, 1, 0});
  store<std::int64_t>(b->catalogue_keys, 9);
  store<std::int64_t>(b->catalogue_loaded_unix_ms, 1795463497129);
  store<std::int64_t>(b->catalogue_load_ms, 19);
  const std::string text = render(*b, alive);
  cr_expect(has_line(text, R"(mr_idempotency_requests_total{outcome="replayed"} 1)"));
  cr_expect(has_line(text, R"(mr_idempotency_requests_total{outcome="bypassed"} 2)"));
  cr_expect(has_line(text, R"(mr_idempotency_requests_total{outcome="claimed"} 0)"));
  cr_expect(has_line(text, R"(mr_redis_errors_total{kind="timeout"} 1)"));
  cr_expect(has_line(text, R"(mr_redis_errors_total{kind="auth"} 1)"));
  cr_expect(has_line(text, R"(mr_redis_errors_total{kind="error_reply"} 0)"));
  cr_expect(has_line(text, "mr_ledger_pool_connections_in_use 4"), "%s", text.c_str());
  cr_expect(has_line(text, "mr_ledger_pool_queued 5"));
  cr_expect(has_line(text, "mr_ledger_pool_timeouts_total 3"));
  cr_expect(has_line(text, "mr_ledger_pool_reconnects_total 1"));
  cr_expect(has_line(text, "mr_ledger_batches_total 3"));
  cr_expect(has_line(text, "mr_ledger_batched_settles_total 10"));
  cr_expect(has_line(text, "mr_ledger_batch_fallbacks_total 1"));
  cr_expect(has_line(text, "mr_ledger_write_batches_total 2"));
  cr_expect(has_line(text, "mr_ledger_batched_writes_total 7"));
  g_dead = 102;
  const std::string after_crash = render(*b, alive);
  cr_expect(has_line(after_crash, "mr_ledger_pool_connections_in_use 1"));
  cr_expect(has_line(after_crash, "mr_ledger_pool_timeouts_total 3"));
  for (std::size_t i = 2; i < kPoolSlots; i++) cr_assert(claim_pool_slot(*b, 200 + i, alive, base3) != nullptr);
  PoolSlot* three = claim_pool_slot(*b, 103, alive, base3);
  cr_assert_eq(three, two, "all slots held: the crashed worker's is taken");
  cr_expect_eq(base3.timed_out, 1u);
  publish(*three, base3, PoolFigures{0, 0, 1, 0});
  release(*one, base1, PoolFigures{1, 0, 2, 1, 3, 10, 1, 2, 7});
  const std::string later = render(*b, alive);
  cr_expect(has_line(later, "mr_ledger_pool_timeouts_total 4"), "counters never go back: %s", later.c_str());
  cr_expect(has_line(later, "mr_ledger_pool_connections_in_use 0"));
  cr_expect(has_line(later, "mr_ledger_batched_settles_total 10"), "a released slot keeps its counters");
  cr_expect(has_line(later, "mr_ledger_batched_writes_total 7"), "a released slot keeps its counters");
  cr_expect(has_line(text, "mr_catalogue_keys 9"));
  cr_expect(has_line(text, "mr_catalogue_loaded_timestamp_seconds 1795463497.129"));
  cr_expect(has_line(text, "mr_catalogue_load_duration_seconds 0.019"));
  // No catalogue yet: neither source, no age.
  cr_expect(has_line(text, R"(mr_catalogue_source{source="database"} 0)"), "%s", text.c_str());
  cr_expect(has_line(text, R"(mr_catalogue_source{source="snapshot"} 0)"));
  cr_expect(has_line(text, "mr_catalogue_snapshot_age_seconds 0.000"));
  store<std::int64_t>(b->catalogue_source, static_cast<std::int64_t>(CatalogueSource::database));
  store<std::int64_t>(b->catalogue_read_unix_ms, 1795463497129);
  const std::string from_database = render(*b, alive, 1795463597129);
  cr_expect(has_line(from_database, R"(mr_catalogue_source{source="database"} 1)"));
  cr_expect(has_line(from_database, R"(mr_catalogue_source{source="snapshot"} 0)"));
  cr_expect(has_line(from_database, "mr_catalogue_snapshot_age_seconds 0.000"), "read from the database: no age");
  store<std::int64_t>(b->catalogue_source, static_cast<std::int64_t>(CatalogueSource::snapshot));
  const std::string from_snapshot = render(*b, alive, 1795463597129);
  cr_expect(has_line(from_snapshot, R"(mr_catalogue_source{source="database"} 0)"));
  cr_expect(has_line(from_snapshot, R"(mr_catalogue_source{source="snapshot"} 1)"));
  cr_expect(has_line(from_snapshot, "mr_catalogue_snapshot_age_seconds 100.000"), "%s", from_snapshot.c_str());
  // Every family is introduced by HELP and TYPE, each once.
  for (const char* name : {"mr_http_requests_total", "mr_http_request_duration_seconds", "mr_ledger_pool_queued"}) {
    const std::string type = std::string("# TYPE ") + name + " ";
    const auto at = text.find(type);
    cr_expect(at != std::string::npos && text.find(type, at + 1) == std::string::npos, "%s", name);
  }
}

Test(metrics_block, another_layout_is_not_read) {
  auto b = fresh();
  cr_expect(valid(*b));
  b->layout = 0;
  cr_expect(!valid(*b));
}

// Webhook attempts of every worker add up in the block: by outcome, and one
// histogram of their durations (cumulative buckets, sum in seconds).
Test(metrics_block, webhook_attempts_and_durations) {
  auto b = fresh();
  const std::string before = render(*b, alive);
  cr_expect(has_line(before, R"(mr_webhook_attempts_total{outcome="delivered"} 0)"), "%s", before.c_str());
  cr_expect(has_line(before, R"(mr_webhook_attempt_duration_seconds_bucket{le="+Inf"} 0)"));
  count_webhook_attempt(*b, 0, 40);      // delivered, 40 ms
  count_webhook_attempt(*b, 0, 50);      // delivered, on a bound: in it
  count_webhook_attempt(*b, 3, 15000);   // timeout
  count_webhook_attempt(*b, 4, 0);       // refused before sending
  count_webhook_attempt(*b, 2, 60000);   // gone, beyond the last bound
  count_webhook_attempt(*b, 9, 1);       // no such outcome: not counted
  const std::string text = render(*b, alive);
  cr_expect(has_line(text, R"(mr_webhook_attempts_total{outcome="delivered"} 2)"), "%s", text.c_str());
  cr_expect(has_line(text, R"(mr_webhook_attempts_total{outcome="failed"} 0)"));
  cr_expect(has_line(text, R"(mr_webhook_attempts_total{outcome="gone"} 1)"));
  cr_expect(has_line(text, R"(mr_webhook_attempts_total{outcome="timeout"} 1)"));
  cr_expect(has_line(text, R"(mr_webhook_attempts_total{outcome="refused"} 1)"));
  cr_expect(has_line(text, R"(mr_webhook_attempt_duration_seconds_bucket{le="0.05"} 3)"));
  cr_expect(has_line(text, R"(mr_webhook_attempt_duration_seconds_bucket{le="10"} 3)"));
  cr_expect(has_line(text, R"(mr_webhook_attempt_duration_seconds_bucket{le="15"} 4)"));
  cr_expect(has_line(text, R"(mr_webhook_attempt_duration_seconds_bucket{le="30"} 4)"));
  cr_expect(has_line(text, R"(mr_webhook_attempt_duration_seconds_bucket{le="+Inf"} 5)"));
  cr_expect(has_line(text, "mr_webhook_attempt_duration_seconds_sum 75.090"));
  cr_expect(has_line(text, "mr_webhook_attempt_duration_seconds_count 5"));
  const std::string type = "# TYPE mr_webhook_attempt_duration_seconds histogram";
  cr_expect(text.find(type) != std::string::npos && text.find(type, text.find(type) + 1) == std::string::npos);
}
