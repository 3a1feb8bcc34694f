// The idempotency module in front of proxy_pass to a tiny upstream (an
// nginx server answering with its own request id) replays and conflicts as
// in front of the ledger: it knows nothing of the ledger.
#include <string>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {
mr::MrClient proxy_client() {
  return mr::MrClient(env("MR_PROXY_URL"), env("MR_KEY_A_ID"), env("MR_KEY_A_SECRET"));
}
}  // namespace

Test(proxy_idempotency, replays_and_conflicts) {
  auto c = proxy_client();
  const std::string key = unique("k");
  auto first = c.post("/orders", R"({"n":1})", key);
  cr_assert_eq(first.status, 200, "%s", first.body.c_str());
  cr_expect(header(first, "x-mr-idempotent-replay").empty());
  auto again = c.post("/orders", R"({"n":1})", key);
  cr_expect_eq(again.status, 200);
  cr_expect_eq(again.body, first.body, "a replay must not reach the upstream");
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
  EXPECT_ERROR(c.post("/orders", R"({"n":2})", key), 422, "duplicate_idempotency_conflict");
  // A fresh key reaches the upstream again.
  auto other = c.post("/orders", R"({"n":1})", unique("k"));
  cr_expect_neq(other.body, first.body);
}

Test(proxy_idempotency, upstream_rejection_is_kept) {
  auto c = proxy_client();
  const std::string key = unique("k");
  auto first = c.post("/rejected", "{}", key);
  cr_assert_eq(first.status, 409, "%s", first.body.c_str());
  auto again = c.post("/rejected", "{}", key);
  cr_expect_eq(again.status, 409);
  cr_expect_eq(again.body, first.body);
  cr_expect_eq(header(again, "x-mr-idempotent-replay"), std::string("true"));
}
