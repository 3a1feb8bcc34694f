#include "modules/webhooks/schedule.hpp"

#include <algorithm>

namespace mr::webhooks {

std::optional<std::int64_t> retry_after_to_report(std::int64_t header_seconds) {
  if (header_seconds <= 0) return std::nullopt;
  return std::min(header_seconds, kMaxRetryAfterSeconds);
}

std::optional<std::int64_t> next_wait_ms(std::span<const std::int64_t> schedule_ms, int attempt,
                                         std::optional<std::int64_t> retry_after_s) {
  if (attempt < 1 || static_cast<std::size_t>(attempt) >= schedule_ms.size()) return std::nullopt;
  const std::int64_t step = schedule_ms[static_cast<std::size_t>(attempt)];
  const std::int64_t asked = retry_after_s ? std::min(*retry_after_s, kMaxRetryAfterSeconds) * 1000 : 0;
  return std::max(step, asked);
}

std::int64_t schedule_span_ms(std::span<const std::int64_t> schedule_ms) {
  std::int64_t total = 0;
  for (const std::int64_t step : schedule_ms) total += step;
  return total;
}

std::string sql_int_array(std::span<const std::int64_t> values) {
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i != 0) out.push_back(',');
    out += std::to_string(values[i]);
  }
  out.push_back('}');
  return out;
}

std::int64_t lease_ms(std::int64_t timeout_ms) { return timeout_ms + kLeaseMarginMs; }

std::int64_t claim_limit(std::int64_t concurrency, std::int64_t in_flight) {
  return std::max<std::int64_t>(0, concurrency - in_flight);
}

std::string_view outcome_label(Outcome o) {
  switch (o) {
    case Outcome::delivered:
      return "delivered";
    case Outcome::failed:
      return "failed";
    case Outcome::gone:
      return "gone";
    case Outcome::timeout:
      return "timeout";
    case Outcome::refused:
      return "refused";
  }
  return "failed";
}

Outcome outcome_of_status(long status) {
  if (status >= 200 && status <= 299) return Outcome::delivered;
  if (status == 410) return Outcome::gone;
  return Outcome::failed;
}

}  // namespace mr::webhooks
