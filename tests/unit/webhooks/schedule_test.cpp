// The attempt schedule as the engine and mr_webhook_report share it: the
// default (8 attempts in about 27.6 hours), Retry-After honoured when it
// asks for longer and capped, the last attempt having no next one.
#include <criterion/criterion.h>

#include <vector>

#include "modules/webhooks/schedule.hpp"

namespace wh = mr::webhooks;

Test(webhook_schedule, default_is_the_contracts) {
  cr_expect_eq(wh::kDefaultScheduleMs.size(), 8u);
  cr_expect_eq(wh::kDefaultScheduleMs[0], 0, "the first attempt at once");
  const std::int64_t span = wh::schedule_span_ms(wh::kDefaultScheduleMs);
  cr_expect_eq(span, ((27 * 60 + 35) * 60 + 5) * 1000LL, "27 h 35 min 5 s");
  cr_expect(span > 27.5 * 3600e3 && span < 27.7 * 3600e3, "about 27.6 hours");
  cr_expect_eq(wh::sql_int_array(wh::kDefaultScheduleMs),
               std::string("{0,5000,300000,1800000,7200000,18000000,36000000,36000000}"));
  cr_expect_eq(wh::sql_int_array({}), std::string("{}"));
}

Test(webhook_schedule, next_wait_follows_the_steps) {
  const auto& s = wh::kDefaultScheduleMs;
  cr_expect_eq(wh::next_wait_ms(s, 1, std::nullopt).value_or(-1), 5'000);
  cr_expect_eq(wh::next_wait_ms(s, 2, std::nullopt).value_or(-1), 300'000);
  cr_expect_eq(wh::next_wait_ms(s, 7, std::nullopt).value_or(-1), 36'000'000);
  cr_expect(!wh::next_wait_ms(s, 8, std::nullopt).has_value(), "the eighth attempt was the last");
  cr_expect(!wh::next_wait_ms(s, 9, std::nullopt).has_value());
  cr_expect(!wh::next_wait_ms(s, 0, std::nullopt).has_value(), "attempts count from 1");
  const std::vector<std::int64_t> once = {0};
  cr_expect(!wh::next_wait_ms(once, 1, std::nullopt).has_value(), "a schedule of one attempt never retries");
}

Test(webhook_schedule, retry_after_wins_only_when_longer) {
  const auto& s = wh::kDefaultScheduleMs;
  cr_expect_eq(wh::next_wait_ms(s, 1, 60).value_or(-1), 60'000, "longer than 5 s: honoured");
  cr_expect_eq(wh::next_wait_ms(s, 2, 60).value_or(-1), 300'000, "shorter than 5 min: the step");
  cr_expect_eq(wh::next_wait_ms(s, 1, 10'000'000).value_or(-1), wh::kMaxRetryAfterSeconds * 1000, "capped");
  cr_expect(!wh::next_wait_ms(s, 8, 60).has_value(), "no next attempt whatever it asks");
}

Test(webhook_schedule, retry_after_as_reported) {
  cr_expect(!wh::retry_after_to_report(-1).has_value(), "libcurl: no header");
  cr_expect(!wh::retry_after_to_report(0).has_value(), "a date in the past asks for nothing");
  cr_expect_eq(wh::retry_after_to_report(120).value_or(-1), 120);
  cr_expect_eq(wh::retry_after_to_report(1LL << 40).value_or(-1), wh::kMaxRetryAfterSeconds);
}

Test(webhook_schedule, lease_and_claim_limit) {
  cr_expect_eq(wh::lease_ms(15'000), 45'000, "the timeout plus 30 s");
  cr_expect_eq(wh::claim_limit(16, 0), 16);
  cr_expect_eq(wh::claim_limit(16, 15), 1);
  cr_expect_eq(wh::claim_limit(16, 16), 0);
  cr_expect_eq(wh::claim_limit(16, 20), 0, "never negative");
}

Test(webhook_schedule, outcomes_of_statuses) {
  cr_expect_eq(wh::outcome_of_status(200), wh::Outcome::delivered);
  cr_expect_eq(wh::outcome_of_status(204), wh::Outcome::delivered);
  cr_expect_eq(wh::outcome_of_status(299), wh::Outcome::delivered);
  cr_expect_eq(wh::outcome_of_status(410), wh::Outcome::gone);
  for (long status : {100L, 199L, 300L, 301L, 302L, 400L, 404L, 429L, 500L, 503L, 0L}) {
    cr_expect_eq(wh::outcome_of_status(status), wh::Outcome::failed, "%ld", status);
  }
  cr_expect_eq(wh::outcome_label(wh::Outcome::refused), std::string_view("refused"));
  cr_expect_eq(wh::outcome_label(wh::Outcome::timeout), std::string_view("timeout"));
}
