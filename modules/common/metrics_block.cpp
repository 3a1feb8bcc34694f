#include "modules/common/metrics_block.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <utility>

namespace mr::metrics {
namespace {

constexpr std::array<std::string_view, kBucketsMs.size()> kBucketLabels = {
    "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10"};
constexpr std::array<std::string_view, kIdempotencyOutcomes> kIdempotencyLabels = {
    "claimed", "replayed", "conflict", "in_progress", "bypassed"};
constexpr std::array<std::string_view, kWebhookOutcomes> kWebhookOutcomeLabels = {
    "delivered", "failed", "gone", "timeout", "refused"};
constexpr std::array<std::string_view, kWebhookBucketsMs.size()> kWebhookBucketLabels = {
    "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "15", "30"};
constexpr std::array<std::string_view, kRedisErrorKinds> kRedisErrorLabels = {
    "connect", "timeout", "no_reply", "error_reply", "auth"};

// Milliseconds as seconds with three decimals, exactly.
std::string seconds(std::int64_t ms) {
  const bool negative = ms < 0;
  const std::uint64_t v = negative ? static_cast<std::uint64_t>(-ms) : static_cast<std::uint64_t>(ms);
  std::string frac = std::to_string(v % 1000);
  frac.insert(0, 3 - frac.size(), '0');
  return (negative ? "-" : "") + std::to_string(v / 1000) + "." + frac;
}

void family(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void sample(std::string& out, std::string_view name, std::string_view labels, std::string_view value) {
  out.append(name);
  if (!labels.empty()) out.append("{").append(labels).append("}");
  out.append(" ").append(value).append("\n");
}

std::string label(std::string_view name, std::string_view value) {
  return std::string(name) + "=\"" + std::string(value) + "\"";
}

void render_requests(std::string& out, const Block& b) {
  family(out, "mr_http_requests_total", "counter",
         "Requests answered, by route, HTTP status and error code (none for a success).");
  for (std::size_t route = 0; route < ledger::kRouteCount; ++route) {
    for (std::size_t s = 0; s < kStatusSlots; ++s) {
      for (std::size_t c = 0; c < kCodeSlots; ++c) {
        const std::uint64_t n = load(b.requests[route][s][c]);
        if (n == 0) continue;
        const std::string status = s < kStatuses.size() ? std::to_string(kStatuses[s]) : "other";
        const std::string_view code = c == 0 ? std::string_view("none") : code_name(static_cast<ErrorCode>(c - 1));
        sample(out, "mr_http_requests_total",
               label("route", ledger::route_label(static_cast<ledger::Route>(route))) + "," +
                   label("status", status) + "," + label("code", code),
               std::to_string(n));
      }
    }
  }
  family(out, "mr_http_request_duration_seconds", "histogram",
         "Time from the request's first byte to its log phase, by route.");
  for (std::size_t route = 0; route < ledger::kRouteCount; ++route) {
    std::uint64_t cumulative = 0;
    std::array<std::uint64_t, kBucketsMs.size() + 1> buckets{};
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      cumulative += load(b.duration_buckets[route][i]);
      buckets[i] = cumulative;
    }
    if (cumulative == 0) continue;
    const std::string r = label("route", ledger::route_label(static_cast<ledger::Route>(route)));
    for (std::size_t i = 0; i < kBucketsMs.size(); ++i) {
      sample(out, "mr_http_request_duration_seconds_bucket", r + "," + label("le", kBucketLabels[i]),
             std::to_string(buckets[i]));
    }
    sample(out, "mr_http_request_duration_seconds_bucket", r + ",le=\"+Inf\"", std::to_string(cumulative));
    sample(out, "mr_http_request_duration_seconds_sum", r,
           seconds(static_cast<std::int64_t>(load(b.duration_sum_ms[route]))));
    sample(out, "mr_http_request_duration_seconds_count", r, std::to_string(cumulative));
  }
}

void render_webhooks(std::string& out, const Block& b) {
  family(out, "mr_webhook_attempts_total", "counter",
         "Webhook delivery attempts by outcome: delivered (2xx), failed (another status, a connection or "
         "TLS error), gone (410), timeout, refused (an address or URL delivery may not use).");
  for (std::size_t i = 0; i < kWebhookOutcomes; ++i) {
    sample(out, "mr_webhook_attempts_total", label("outcome", kWebhookOutcomeLabels[i]),
           std::to_string(load(b.webhook_attempts[i])));
  }
  family(out, "mr_webhook_attempt_duration_seconds", "histogram",
         "Time of one webhook attempt, from its start to the answer or the failure.");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kWebhookBucketsMs.size(); ++i) {
    cumulative += load(b.webhook_duration_buckets[i]);
    sample(out, "mr_webhook_attempt_duration_seconds_bucket", label("le", kWebhookBucketLabels[i]),
           std::to_string(cumulative));
  }
  cumulative += load(b.webhook_duration_buckets[kWebhookBucketsMs.size()]);
  sample(out, "mr_webhook_attempt_duration_seconds_bucket", "le=\"+Inf\"", std::to_string(cumulative));
  sample(out, "mr_webhook_attempt_duration_seconds_sum", "",
         seconds(static_cast<std::int64_t>(load(b.webhook_duration_sum_ms))));
  sample(out, "mr_webhook_attempt_duration_seconds_count", "", std::to_string(cumulative));
}

void render_edges(std::string& out, const Block& b) {
  family(out, "mr_idempotency_requests_total", "counter",
         "POSTs by idempotency outcome in Redis; bypassed: Redis down or slow, the database decided.");
  for (std::size_t i = 0; i < kIdempotencyOutcomes; ++i) {
    sample(out, "mr_idempotency_requests_total", label("outcome", kIdempotencyLabels[i]),
           std::to_string(load(b.idempotency[i])));
  }
  family(out, "mr_idempotency_replay_cache_hits_total", "counter",
         "Replays and conflicts answered from a worker's replay cache without asking Redis "
         "(also counted in mr_idempotency_requests_total).");
  sample(out, "mr_idempotency_replay_cache_hits_total", "", std::to_string(load(b.idempotency_cache_hits)));
  family(out, "mr_redis_errors_total", "counter", "Redis failures seen by the idempotency client, by kind.");
  for (std::size_t i = 0; i < kRedisErrorKinds; ++i) {
    sample(out, "mr_redis_errors_total", label("kind", kRedisErrorLabels[i]),
           std::to_string(load(b.redis_errors[i])));
  }
}

// The pool's counters, each a field of both PoolFigures and PoolSlot.
constexpr std::array<std::pair<std::uint64_t PoolFigures::*, std::uint64_t PoolSlot::*>, 7> kPoolCounters = {{
    {&PoolFigures::timed_out, &PoolSlot::timed_out},
    {&PoolFigures::reconnects, &PoolSlot::reconnects},
    {&PoolFigures::batches, &PoolSlot::batches},
    {&PoolFigures::batched_settles, &PoolSlot::batched_settles},
    {&PoolFigures::batch_fallbacks, &PoolSlot::batch_fallbacks},
    {&PoolFigures::write_batches, &PoolSlot::write_batches},
    {&PoolFigures::batched_writes, &PoolSlot::batched_writes},
}};

void render_pool(std::string& out, const Block& b, bool (*alive)(std::uint64_t pid)) {
  PoolFigures sum;
  for (const PoolSlot& slot : b.pool) {
    const std::uint64_t owner = load(slot.owner);
    if (owner != 0 && alive(owner)) {
      sum.in_use += load(slot.in_use);
      sum.queued += load(slot.queued);
    }
    for (const auto& [figure, cell] : kPoolCounters) sum.*figure += load(slot.*cell);
  }
  struct Series {
    const char* name;
    const char* type;
    const char* help;
    std::uint64_t value;
  };
  const Series series[] = {
      {"mr_ledger_pool_connections_in_use", "gauge", "PostgreSQL connections running a statement, all workers.",
       sum.in_use},
      {"mr_ledger_pool_queued", "gauge", "Statements waiting for a free connection, all workers.", sum.queued},
      {"mr_ledger_pool_timeouts_total", "counter",
       "Statements past mr_ledger_query_timeout (queued or running), answered service_unavailable.", sum.timed_out},
      {"mr_ledger_pool_reconnects_total", "counter", "Connections opened again after one was lost or refused.",
       sum.reconnects},
      {"mr_ledger_batches_total", "counter",
       "Settles that queued together and went to PostgreSQL as one mr_write_batch statement.", sum.batches},
      {"mr_ledger_batched_settles_total", "counter", "Settles sent inside those batches.", sum.batched_settles},
      {"mr_ledger_write_batches_total", "counter",
       "Reversals, or redemptions, that queued together and went to PostgreSQL as one mr_write_batch_each "
       "statement (one op per batch).",
       sum.write_batches},
      {"mr_ledger_batched_writes_total", "counter", "Reversals and redemptions sent inside those batches.",
       sum.batched_writes},
      {"mr_ledger_batch_fallbacks_total", "counter",
       "Batches of any kind that failed as a whole (a pool stripe too low, a duplicate, a deadlock) and ran their "
       "writes one by one.",
       sum.batch_fallbacks},
  };
  for (const Series& one : series) {
    family(out, one.name, one.type, one.help);
    sample(out, one.name, "", std::to_string(one.value));
  }
}

void render_catalogue(std::string& out, const Block& b, std::int64_t now_unix_ms) {
  family(out, "mr_catalogue_keys", "gauge", "Active API keys in the catalogue the master loaded last.");
  sample(out, "mr_catalogue_keys", "", std::to_string(load(b.catalogue_keys)));
  family(out, "mr_catalogue_loaded_timestamp_seconds", "gauge",
         "When the master last loaded the key catalogue (start or reload), Unix time.");
  sample(out, "mr_catalogue_loaded_timestamp_seconds", "", seconds(load(b.catalogue_loaded_unix_ms)));
  family(out, "mr_catalogue_load_duration_seconds", "gauge", "How long the last catalogue load took.");
  sample(out, "mr_catalogue_load_duration_seconds", "", seconds(load(b.catalogue_load_ms)));
  const auto source = static_cast<CatalogueSource>(load(b.catalogue_source));
  family(out, "mr_catalogue_source", "gauge",
         "1 for where the keys served came from at the last (re)load: the database, or the "
         "last-known-good snapshot when the database could not be read.");
  sample(out, "mr_catalogue_source", "source=\"database\"", source == CatalogueSource::database ? "1" : "0");
  sample(out, "mr_catalogue_source", "source=\"snapshot\"", source == CatalogueSource::snapshot ? "1" : "0");
  family(out, "mr_catalogue_snapshot_age_seconds", "gauge",
         "Served from the snapshot: how long ago its keys were read from the database (keys issued or "
         "revoked since are not known); 0 when the last load read the database.");
  const std::int64_t age =
      source == CatalogueSource::snapshot ? std::max<std::int64_t>(0, now_unix_ms - load(b.catalogue_read_unix_ms)) : 0;
  sample(out, "mr_catalogue_snapshot_age_seconds", "", seconds(age));
}

}  // namespace

void initialise(Block& block) { store(block.layout, Block::kLayout); }

bool valid(const Block& block) { return load(block.layout) == Block::kLayout; }

std::size_t status_slot(int status) {
  const auto it = std::find(kStatuses.begin(), kStatuses.end(), status);
  return static_cast<std::size_t>(it - kStatuses.begin());  // kStatuses.size(): other
}

void count_request(Block& block, ledger::Route route, int status, std::optional<ErrorCode> code,
                   std::uint64_t duration_ms) {
  const auto r = static_cast<std::size_t>(route);
  const std::size_t c = code ? static_cast<std::size_t>(*code) + 1 : 0;
  if (r >= ledger::kRouteCount || c >= kCodeSlots) return;
  add(block.requests[r][status_slot(status)][c]);
  const auto bucket = std::lower_bound(kBucketsMs.begin(), kBucketsMs.end(), duration_ms);
  add(block.duration_buckets[r][static_cast<std::size_t>(bucket - kBucketsMs.begin())]);
  add(block.duration_sum_ms[r], duration_ms);
}

void count_webhook_attempt(Block& block, std::size_t outcome, std::uint64_t duration_ms) {
  if (outcome >= kWebhookOutcomes) return;
  add(block.webhook_attempts[outcome]);
  const auto bucket = std::lower_bound(kWebhookBucketsMs.begin(), kWebhookBucketsMs.end(), duration_ms);
  add(block.webhook_duration_buckets[static_cast<std::size_t>(bucket - kWebhookBucketsMs.begin())]);
  add(block.webhook_duration_sum_ms, duration_ms);
}

PoolSlot* claim_pool_slot(Block& block, std::uint64_t pid, bool (*alive)(std::uint64_t pid), PoolFigures& base) {
  for (const bool take_dead : {false, true}) {
    for (PoolSlot& slot : block.pool) {
      std::uint64_t owner = load(slot.owner);
      if (owner != 0 && (!take_dead || alive(owner))) continue;
      if (!std::atomic_ref<std::uint64_t>(slot.owner).compare_exchange_strong(owner, pid)) continue;
      store<std::uint64_t>(slot.in_use, 0);
      store<std::uint64_t>(slot.queued, 0);
      base = PoolFigures{};
      for (const auto& [figure, cell] : kPoolCounters) base.*figure = load(slot.*cell);
      return &slot;
    }
  }
  return nullptr;
}

void publish(PoolSlot& slot, const PoolFigures& base, const PoolFigures& now) {
  store(slot.in_use, now.in_use);
  store(slot.queued, now.queued);
  for (const auto& [figure, cell] : kPoolCounters) store(slot.*cell, base.*figure + now.*figure);
}

void release(PoolSlot& slot, const PoolFigures& base, const PoolFigures& last) {
  PoolFigures counters_only = last;
  counters_only.in_use = counters_only.queued = 0;
  publish(slot, base, counters_only);
  store<std::uint64_t>(slot.owner, 0);
}

std::string render(const Block& b, bool (*alive)(std::uint64_t pid)) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  return render(b, alive, static_cast<std::int64_t>(now.count()));
}

std::string render(const Block& b, bool (*alive)(std::uint64_t pid), std::int64_t now_unix_ms) {
  std::string out;
  out.reserve(16384);
  render_requests(out, b);
  render_edges(out, b);
  render_webhooks(out, b);
  render_pool(out, b, alive);
  render_catalogue(out, b, now_unix_ms);
  return out;
}

}  // namespace mr::metrics
