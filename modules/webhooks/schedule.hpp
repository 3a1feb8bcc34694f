// When the attempts of a delivery happen (contract section 10, Delivery),
// and the figures the delivery engine derives from its directives. The
// database keeps the schedule per attempt (mr_webhook_report gets it as an
// int[]); this is the same arithmetic, for the engine's own wake-ups and
// the tests. No nginx header.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mr::webhooks {

// The wait before each attempt, in milliseconds: at once, 5 s, 5 min,
// 30 min, 2 h, 5 h, 10 h, 10 h (8 attempts in about 27.6 hours).
inline constexpr std::array<std::int64_t, 8> kDefaultScheduleMs = {
    0, 5'000, 300'000, 1'800'000, 7'200'000, 18'000'000, 36'000'000, 36'000'000};
inline constexpr std::size_t kMaxScheduleSteps = 32;
// A wait no schedule step may exceed, and the most a Retry-After may ask
// for: a day (mr_webhook_report takes seconds as an int; a receiver's
// "Retry-After: 99999999999" must not park a delivery for ever).
inline constexpr std::int64_t kMaxStepMs = 86'400'000;
inline constexpr std::int64_t kMaxRetryAfterSeconds = 86'400;
// A claim holds a delivery for the attempt's timeout plus this margin (the
// report's round trip, a busy worker): only then may another claim it.
inline constexpr std::int64_t kLeaseMarginMs = 30'000;

// The Retry-After to report: libcurl's reading of the header (seconds from
// now, negative or -1 when absent or unparsable), capped; nullopt when none.
std::optional<std::int64_t> retry_after_to_report(std::int64_t header_seconds);

// The wait after failed attempt `attempt` (1-based) before the next one,
// as mr_webhook_report schedules it: the next step, or Retry-After when it
// asks for longer; nullopt when `attempt` was the schedule's last.
std::optional<std::int64_t> next_wait_ms(std::span<const std::int64_t> schedule_ms, int attempt,
                                         std::optional<std::int64_t> retry_after_s);

// The sum of every wait: how long a delivery may be retried for.
std::int64_t schedule_span_ms(std::span<const std::int64_t> schedule_ms);

// A PostgreSQL int[] literal of the schedule, "{0,5000,...}".
std::string sql_int_array(std::span<const std::int64_t> values);

// The lease a claim takes for an attempt that may last `timeout_ms`.
std::int64_t lease_ms(std::int64_t timeout_ms);

// How many deliveries one claim may take: the worker's free attempt slots.
std::int64_t claim_limit(std::int64_t concurrency, std::int64_t in_flight);

// What an attempt came to, as /metrics counts it.
enum class Outcome { delivered, failed, gone, timeout, refused };
inline constexpr std::size_t kOutcomes = 5;
std::string_view outcome_label(Outcome o);
// An HTTP answer: 2xx delivered, 410 gone, anything else failed.
Outcome outcome_of_status(long status);

}  // namespace mr::webhooks
