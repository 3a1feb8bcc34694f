// Every statement the ledger sends, in one table: the pool prepares each of
// them once per connection (and again after a reconnect), so a request
// costs PostgreSQL no parse and no plan. A statement whose text is not here
// still runs, unprepared.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

namespace mr::ledger::sql {

// A statement's text joined from parts at compile time: a setting written
// once below serves every statement that needs it.
template <std::size_t N>
struct Part {
  char text[N];
  consteval Part(const char (&s)[N]) { std::copy_n(s, N, text); }  // NOLINT: implicit from a literal
};
template <Part... Parts>
inline constexpr auto joined = [] {
  std::array<char, ((sizeof(Parts.text) - 1) + ...) + 1> out{};
  std::size_t at = 0;
  ((std::copy_n(Parts.text, sizeof(Parts.text) - 1, out.begin() + at), at += sizeof(Parts.text) - 1), ...);
  return out;
}();
template <Part... Parts>
inline constexpr std::string_view text{joined<Parts...>.data(), joined<Parts...>.size() - 1};

// Planner settings for one statement's transaction, set before the function
// it calls runs: the condition of a CASE around its first argument. Every
// such statement is a transaction of its own.
//
// by_index: the writes and the report batch are planned by their indexes
// even on a new, nearly empty table. A pool connection keeps the plans it
// makes: on a new database each kept a sequential scan of transactions per
// settle, planned while that table was empty, until autovacuum's first
// ANALYZE a minute later, each settle's cost growing with every row written
// meanwhile (auto_explain, bench/RESULTS.md, Events). A statement with no
// index to use still scans, at a cost the planner counts as 10^10, past
// jit_above_cost: so jit is off as well (compiling took 12-25 ms a call of
// mr_webhook_wake's scan of webhook_pollers; the ledger's statements are
// far too short for JIT to pay anyway).
inline constexpr Part by_index = "set_config('enable_seqscan', 'off', true) || set_config('jit', 'off', true)";

inline constexpr std::string_view write =
    text<"SELECT mr_write(CASE WHEN ", by_index, " IS NOT NULL THEN $1 END, $2::bigint, $3, $4, $5, $6, $7::jsonb, $8::bytea)">;
// Settles that queued together (write_batch.hpp); one jsonb result per row.
inline constexpr std::string_view write_batch =
    text<"SELECT mr_write_batch(CASE WHEN ", by_index, " IS NOT NULL THEN $1::jsonb END)">;
// Reversals only or redemptions only that queued together, each through
// mr_write in one transaction (mr_write_batch_each); one row each.
inline constexpr std::string_view write_batch_each =
    text<"SELECT mr_write_batch_each(CASE WHEN ", by_index, " IS NOT NULL THEN $1::jsonb END)">;
inline constexpr std::string_view balance = "SELECT * FROM mr_balance_row($1::bigint, $2)";
// History pages as plain rows (mr_points_rows, mr_transactions_rows), rendered by
// ledger/history_render.cpp: club, member, [filter,] limit, before (NULL:
// from the newest). Times as extract(epoch ...): the same text whatever
// the session's DateStyle and TimeZone.
inline constexpr std::string_view points = "SELECT * FROM mr_points_rows($1::bigint, $2, $3::int, $4::bigint)";
inline constexpr std::string_view points_filtered =
    "SELECT * FROM mr_points_rows_filtered($1::bigint, $2, $3, $4::int, $5::bigint)";
inline constexpr std::string_view transactions =
    "SELECT created_ms, reversed, external_id, event_id, merchant_id, merchant_name, amount_minor, currency, "
    "points_delta, extract(epoch FROM occurred_at), extract(epoch FROM settled_at) "
    "FROM mr_transactions_rows($1::bigint, $2, $3::int, $4::bigint)";
inline constexpr std::string_view redemption = "SELECT mr_redemption($1::bigint, $2, $3)";
// GET /api/v1/club: club, environment, request id (mr_club).
inline constexpr std::string_view club = "SELECT mr_club($1::bigint, $2, $3)";
// GET /api/v1/redemptions: club, filters requestId, externalMemberId and
// status (NULL: none), limit, before, request id.
inline constexpr std::string_view redemptions =
    "SELECT mr_redemptions($1::bigint, $2, $3, $4, $5::int, $6::bigint, $7)";
// GET /api/v1/events: club, environment, after (NULL: from the oldest),
// limit, types joined by ',' (NULL: every type), request id (mr_events).
inline constexpr std::string_view events =
    "SELECT mr_events($1::bigint, $2, $3, $4::int, string_to_array($5, ','), $6)";
// GET /api/v1/webhook-endpoints[/{id}[/deliveries]] (mr_events).
inline constexpr std::string_view webhook_endpoints = "SELECT mr_webhook_endpoints($1::bigint, $2)";
inline constexpr std::string_view webhook_endpoint = "SELECT mr_webhook_endpoint($1::bigint, $2, $3)";
inline constexpr std::string_view webhook_deliveries =
    "SELECT mr_webhook_deliveries($1::bigint, $2, $3::int, $4::bigint, $5)";
// /readyz: the newest migration the ledger's database has (ops_api.cpp
// compares it with the modules' own newest).
inline constexpr std::string_view ready = "SELECT coalesce(max(version), 0) FROM schema_migrations";
// The books' gauges and the webhook deliveries due, as samples (019):
// every pod's, written together by ledger/books_metrics.cpp.
inline constexpr std::string_view metrics = "SELECT family, labels, value FROM mr_metrics_samples()";
inline constexpr std::string_view payouts = "SELECT mr_payouts($1, $2::int)";
inline constexpr std::string_view payout_move = "SELECT mr_payout_move($1, $2, $3)";
inline constexpr std::string_view payout_simulate = "SELECT mr_payout_simulate($1::bigint)";
// Webhook delivery (modules/webhooks/delivery_engine.cpp;
// the claim through mr_webhook_claim_awake, which records the
// worker's promise to claim again soon).
// Claim: environment, limit, lease ms; the sealed secrets as two columns
// (the previous one NULL unless a rotation is under way). Without sorts
// (enable_sort, for this transaction, set before the function runs: its
// argument), so the due deliveries are read by the due index in next_at
// order, stopping at the limit: with statistics from a nearly empty queue
// the planner took the endpoint index instead (its predicate, pending or
// paused, covers the claim's) and sorted every pending row in each claim,
// a cost that grows with the backlog and so slows draining it the most
// when it is longest (auto_explain, bench/RESULTS.md, Events).
// jit off as for by_index above.
inline constexpr std::string_view webhook_claim =
    text<"SELECT delivery_id, attempt, endpoint_id, url, secrets_sealed[1], secrets_sealed[2], event_id, body "
         "FROM mr_webhook_claim_awake(CASE WHEN set_config('enable_sort', 'off', true) || "
         "set_config('jit', 'off', true) IS NOT NULL THEN $1 END, $2::int, $3::int)">;
// Report: delivery, attempt, HTTP status, error, duration ms, Retry-After s, schedule ms[].
inline constexpr std::string_view webhook_report =
    "SELECT mr_webhook_report($1::bigint, $2::int, $3::int, $4, $5::int, $6::int, $7::int[])";
// The reports of one pass of the engine's loop in one transaction: a jsonb
// array of {d, a, s, e, ms, ra} (report's parameters) and o, the
// operator's detail of a failure (webhook_attempts.detail), schedule ms[].
// by_index, and each of the function's joins reads the deliveries by the
// batch's ids: its join of the reports (read as 100 rows) to their
// deliveries would otherwise keep a plan made while webhook_deliveries was
// small, a sequential scan of every delivery, delivered ones included, once
// the queue holds a few thousand rows (bench/RESULTS.md, Events). Its plans
// are kept: planning them at every call (plan_cache_mode) would be most of
// the planner's share of PostgreSQL's CPU while delivering.
inline constexpr std::string_view webhook_report_batch =
    text<"SELECT delivery_id, attempt, next FROM mr_webhook_report_batch(CASE WHEN ", by_index,
         " IS NOT NULL THEN $1::jsonb END, $2::int[])">;

// The ops listener's webhook calls (ops_api.cpp; mrctl runs the same
// functions): partner ref or NULL; and limit; endpoint and status; endpoint
// and since.
inline constexpr std::string_view ops_webhooks = "SELECT mr_ops_webhook_endpoints($1)";
inline constexpr std::string_view ops_webhook_failures = "SELECT mr_ops_webhook_failures($1, $2::int)";
inline constexpr std::string_view ops_webhook_status = "SELECT mr_ops_webhook_status($1, $2)";
inline constexpr std::string_view ops_webhook_replay = "SELECT mr_ops_webhook_replay($1, $2::timestamptz)";

inline constexpr std::array<std::string_view, 26> prepared = {
    write, write_batch, balance, points, transactions, redemption, ready, metrics, payouts, payout_move,
    payout_simulate, club, redemptions, events, webhook_endpoints, webhook_endpoint, webhook_deliveries,
    webhook_claim, webhook_report, ops_webhooks, ops_webhook_failures, ops_webhook_status, ops_webhook_replay,
    points_filtered, webhook_report_batch, write_batch_each};

// Statements that change nothing: the pool may queue them on a connection
// still busy with other reads (a write there could wait on a lock and hold
// them up).
inline constexpr std::array<std::string_view, 16> reads = {
    balance, points,           transactions,       redemption,          ready,       metrics,
    payouts, club,             redemptions,        events,              webhook_endpoints,
    webhook_endpoint,          webhook_deliveries, ops_webhooks,        ops_webhook_failures,
    points_filtered};

}  // namespace mr::ledger::sql
