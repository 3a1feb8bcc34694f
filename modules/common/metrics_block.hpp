// The node's counters, laid out as one plain block that lives in an nginx
// shared memory zone (mr_metrics_zone): every worker adds to the same
// numbers with relaxed atomic adds, so the hot path takes no lock and
// allocates nothing, and /metrics in any worker reads the whole node.
// No nginx header: the layout, the counting rules and the Prometheus text
// are tested without a server.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ledger/errors.hpp"
#include "ledger/routes.hpp"

namespace mr::metrics {

// HTTP statuses counted by value; anything else counts as "other".
inline constexpr std::array<int, 23> kStatuses = {200, 201, 202, 204, 301, 302, 304, 400,
                                                  401, 403, 404, 405, 408, 409, 413, 414,
                                                  422, 429, 499, 500, 502, 503, 504};
inline constexpr std::size_t kStatusSlots = kStatuses.size() + 1;
inline constexpr std::size_t kCodeSlots = static_cast<std::size_t>(ErrorCode::service_unavailable) + 2;  // + none
// Request duration buckets (upper bounds in milliseconds; +Inf beyond).
inline constexpr std::array<std::uint64_t, 11> kBucketsMs = {5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000};

enum class Idempotency { claimed, replayed, conflict, in_progress, bypassed };
inline constexpr std::size_t kIdempotencyOutcomes = 5;

// auth: Redis wants a password nginx does not send (NOAUTH), or refused
// the one it sent (AUTH answered with an error).
enum class RedisError { connect, timeout, no_reply, error_reply, auth };
inline constexpr std::size_t kRedisErrorKinds = 5;

// Webhook attempts by outcome (modules/webhooks/schedule.hpp's Outcome, in
// its order) and their durations (upper bounds in milliseconds; +Inf beyond).
inline constexpr std::size_t kWebhookOutcomes = 5;
inline constexpr std::array<std::uint64_t, 10> kWebhookBucketsMs = {50,   100,  250,   500,   1000,
                                                                    2500, 5000, 10000, 15000, 30000};

// What one worker's ledger pool reports (mr::pg::Stats, copied by the glue).
struct PoolFigures {
  std::uint64_t in_use = 0;      // connections with a statement in flight
  std::uint64_t queued = 0;      // statements waiting for a connection
  // Counters, since the worker started.
  std::uint64_t timed_out = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t batches = 0;          // mr_write_batch statements sent
  std::uint64_t batched_settles = 0;  // settles sent inside them
  std::uint64_t batch_fallbacks = 0;  // batches (of any kind) that failed and ran one by one
  std::uint64_t write_batches = 0;    // mr_write_batch_each statements sent (reversals or redemptions)
  std::uint64_t batched_writes = 0;   // reversals and redemptions sent inside them
};

// One worker's pool figures in shared memory, published by that worker
// (about every second, and by the worker answering /metrics just before).
// A slot outlives its worker: counters stay and the next worker to take
// the slot counts on from them, so the node's sums never go back.
struct PoolSlot {
  std::uint64_t owner;  // the worker's pid; 0: free
  std::uint64_t in_use, queued, timed_out, reconnects, batches, batched_settles, batch_fallbacks, write_batches,
      batched_writes;
};
inline constexpr std::size_t kPoolSlots = 64;  // workers alive at once, old ones during a reload included

template <typename T>
inline void add(T& cell, T delta = 1) {
  std::atomic_ref<T>(cell).fetch_add(delta, std::memory_order_relaxed);
}
template <typename T>
inline T load(const T& cell) {
  return std::atomic_ref<T>(const_cast<T&>(cell)).load(std::memory_order_relaxed);
}
template <typename T>
inline void store(T& cell, T value) {
  std::atomic_ref<T>(cell).store(value, std::memory_order_relaxed);
}

struct Block {
  // A block from another build (another layout) is never read as this one.
  static constexpr std::uint64_t kLayout = 0x6d726d6574720008;  // "mrmetr" v8: the ops_webhooks route
  std::uint64_t layout;
  std::uint64_t requests[ledger::kRouteCount][kStatusSlots][kCodeSlots];
  std::uint64_t duration_buckets[ledger::kRouteCount][kBucketsMs.size() + 1];
  std::uint64_t duration_sum_ms[ledger::kRouteCount];
  std::uint64_t idempotency[kIdempotencyOutcomes];
  std::uint64_t idempotency_cache_hits;  // of those, answered from a worker's replay cache
  std::uint64_t redis_errors[kRedisErrorKinds];
  std::uint64_t webhook_attempts[kWebhookOutcomes];
  std::uint64_t webhook_duration_buckets[kWebhookBucketsMs.size() + 1];
  std::uint64_t webhook_duration_sum_ms;
  PoolSlot pool[kPoolSlots];
  // Set by the master when it loaded the key catalogue (start, reload).
  std::int64_t catalogue_keys;
  std::int64_t catalogue_loaded_unix_ms;
  std::int64_t catalogue_load_ms;
  std::int64_t catalogue_source;         // CatalogueSource
  std::int64_t catalogue_read_unix_ms;   // when the keys served were read from the database
};

enum class CatalogueSource : std::int64_t { none = 0, database = 1, snapshot = 2 };

// A zeroed block made ready (the zone's memory comes zeroed from the slab).
void initialise(Block& block);
bool valid(const Block& block);

std::size_t status_slot(int status);

// One finished request: its route, final status, error code if the answer
// was the failure envelope, and time from first byte to the log phase.
void count_request(Block& block, ledger::Route route, int status, std::optional<ErrorCode> code,
                   std::uint64_t duration_ms);
inline void count(Block& block, Idempotency outcome) { add(block.idempotency[static_cast<std::size_t>(outcome)]); }
inline void count_cache_hit(Block& block) { add(block.idempotency_cache_hits); }
inline void count(Block& block, RedisError kind) { add(block.redis_errors[static_cast<std::size_t>(kind)]); }
// One webhook attempt of a worker: its outcome's index and how long it took.
void count_webhook_attempt(Block& block, std::size_t outcome, std::uint64_t duration_ms);

// A slot for the worker `pid`: a free one, else one whose owner is no
// longer alive (crashed); nullptr when all are held. `base` receives the
// slot's counters, which the worker's own are added to.
PoolSlot* claim_pool_slot(Block& block, std::uint64_t pid, bool (*alive)(std::uint64_t pid), PoolFigures& base);
void publish(PoolSlot& slot, const PoolFigures& base, const PoolFigures& now);
// The worker exits: its gauges leave the sums, its counters stay.
void release(PoolSlot& slot, const PoolFigures& base, const PoolFigures& last);

// Prometheus text format 0.0.4: every family with HELP and TYPE; series
// appear once they are non-zero (histograms once their route was seen).
// Pool gauges count only slots whose owner `alive` says is running.
// `now_unix_ms` dates the catalogue snapshot's age; without it, the clock.
std::string render(const Block& block, bool (*alive)(std::uint64_t pid), std::int64_t now_unix_ms);
std::string render(const Block& block, bool (*alive)(std::uint64_t pid));

}  // namespace mr::metrics
