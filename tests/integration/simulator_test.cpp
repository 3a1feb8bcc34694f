// The sandbox payout simulator: turned on by a reload, it settles payouts
// after the delay — success, except bank account 00000000 which fails.
// Serial: it reloads nginx with the simulator on, then off again.
#include <chrono>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

struct Redemption {
  std::string id;
  Clock::time_point sent, answered;  // the POST /redemptions: sent, and its 202 read
};

Redemption redeem_for(mr::MrClient& c, const std::string& account) {
  const std::string id = unique("sim");
  std::string body = member_body("club-a", id);
  body.replace(body.find("12345678"), 8, account);
  cr_assert_eq(post(c, "/api/v1/members", body).status, 201);
  cr_assert_eq(post(c, "/api/v1/transactions/settled", settle_body("club-a", id, unique("tx"), 10000)).status, 200);
  const auto sent = Clock::now();
  auto r = post(c, "/api/v1/redemptions",
                R"({"partnerRef":"club-a","requestId":")" + unique("rq") + R"(","member":{"externalMemberId":")" + id +
                    R"("},"redemption":{"points":100,"currency":"GBP"}})");
  const auto answered = Clock::now();
  cr_assert_eq(r.status, 202, "%s", r.body.c_str());
  return {s(data_of(r), "redemptionId"), sent, answered};
}

std::string status_of(mr::MrClient& c, const std::string& redemption) {
  return s(data_of(c.get("/api/v1/redemptions/" + redemption)), "status");
}

// mr_payout_simulator_delay as the last reload rendered it into the
// stack's nginx.conf (tools/stack.sh; 5s unless MR_PAYOUT_SIMULATOR_DELAY).
milliseconds configured_delay() {
  std::ifstream in(env("MR_STACK_DIR") + "/nginx/nginx.conf");
  const std::regex directive(R"(^\s*mr_payout_simulator_delay\s+(\d+)(ms|s|m)\s*;)");
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (!std::regex_search(line, m, directive)) continue;
    const long n = std::stol(m[1]);
    return milliseconds(m[2] == "ms" ? n : m[2] == "s" ? n * 1000 : n * 60000);
  }
  cr_assert_fail("no mr_payout_simulator_delay in the stack's nginx.conf");
  return {};
}

long ms_between(Clock::time_point from, Clock::time_point to) {
  return static_cast<long>(std::chrono::duration_cast<milliseconds>(to - from).count());
}

// The payout, just accepted, is still pending, read at a time its age
// (counted by the database from inside the POST) cannot have reached
// `delay`: the simulator waits for the delay.
void expect_pending_within_delay(mr::MrClient& c, const Redemption& r, milliseconds delay) {
  const std::string status = status_of(c, r.id);
  const long elapsed = ms_between(r.sent, Clock::now());
  cr_assert_lt(elapsed, delay.count(), "read %ld ms after the POST, not before the delay of %ld ms: proves nothing",
               elapsed, static_cast<long>(delay.count()));
  cr_expect_eq(status, std::string("payout_pending"), "settled %ld ms after the POST, before the delay", elapsed);
}

}  // namespace

Test(simulator, settles_payouts_by_itself) {
  {
    const std::string failed = reload("MR_PAYOUT_SIMULATOR=on MR_PAYOUT_SIMULATOR_DELAY=2s ");
    cr_assert(failed.empty(), "%s", failed.c_str());
  }
  const milliseconds delay = configured_delay();
  cr_assert_eq(delay.count(), 2000);
  auto c = client("A");
  const Redemption good = redeem_for(c, "12345678");
  expect_pending_within_delay(c, good, delay);
  const Redemption bad = redeem_for(c, "00000000");
  expect_pending_within_delay(c, bad, delay);
  // Each worker asks the database every second: settled within the delay
  // and a few of those.
  std::string good_status, bad_status;
  eventually(
      [&] {
        good_status = status_of(c, good.id);
        bad_status = status_of(c, bad.id);
        return good_status != "payout_pending" && bad_status != "payout_pending";
      },
      delay + std::chrono::seconds(8), milliseconds(200));
  const std::string off = reload();
  cr_expect_eq(good_status, std::string("completed"));
  cr_expect_eq(bad_status, std::string("failed"));
  cr_assert(off.empty(), "%s", off.c_str());
  cr_expect_eq(sh(mrctl_cmd() + " audit >/dev/null"), 0);

  // Off again: a new payout waits for an operator. It stays pending past
  // the delay now configured (the default) and a second more, by when each
  // worker's simulator, were it still on, would have asked the database to
  // settle it.
  const milliseconds default_delay = configured_delay();
  const Redemption waiting = redeem_for(c, "12345678");
  const auto settled_by_then = waiting.answered + default_delay + std::chrono::seconds(1) + milliseconds(500);
  std::string status;
  Clock::time_point read_at;
  eventually(
      [&] {
        read_at = Clock::now();
        status = status_of(c, waiting.id);
        return status != "payout_pending" || read_at >= settled_by_then;
      },
      default_delay + std::chrono::seconds(10), milliseconds(200));
  cr_expect_eq(status, std::string("payout_pending"), "settled %ld ms after it was accepted, with the simulator off",
               ms_between(waiting.answered, read_at));
  if (status == "payout_pending") {
    cr_expect(read_at >= settled_by_then, "last read %ld ms after it was accepted, before a simulator could have run",
              ms_between(waiting.answered, read_at));
  }
}
