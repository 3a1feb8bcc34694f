// The ops listener over pods (ledger/ops_pods): which routes ask every pod
// for one thing by its id, and whose answer wins.
#include <criterion/criterion.h>

#include <string>
#include <vector>

#include "ledger/ops_pods.hpp"

namespace {

using namespace mr::ledger;

Response of(int status, std::string body = "") { return Response{status, std::move(body), false}; }

}  // namespace

Test(ops_pods, routes_addressed_by_id) {
  cr_expect(addressed_by_id(Route::ops_payout_result, "POST", "/payouts/po_1/succeed"));
  cr_expect(addressed_by_id(Route::ops_webhooks, "POST", "/webhooks/we_1/replay"));
  cr_expect(!addressed_by_id(Route::ops_webhooks, "GET", "/webhooks"));
  cr_expect(!addressed_by_id(Route::ops_webhooks, "GET", "/webhooks/failures"));
  cr_expect(!addressed_by_id(Route::ops_payouts, "GET", "/payouts"));
  cr_expect(!addressed_by_id(Route::ops_payout_result, "GET", "/payouts/po_1/succeed"));
  cr_expect(!addressed_by_id(Route::ops_readyz, "POST", "/readyz"));
}

Test(ops_pods, the_holder_answers) {
  // The pod that holds it, done or refused; the others' 404s do not count.
  cr_expect_eq(holder_answer({of(404, "a"), of(200, "b"), of(404, "c")}, "rid").body, "b");
  cr_expect_eq(holder_answer({of(404, "a"), of(409, "conflict")}, "rid").status, 409);
  cr_expect_eq(holder_answer({of(200, "x"), of(503, "down")}, "rid").status, 200);
  // Nobody holds it and every pod said so: the 404.
  cr_expect_eq(holder_answer({of(404, "a"), of(404, "b")}, "rid").body, "a");
  // Nobody that answered holds it, and a pod could not say: it may be there.
  cr_expect_eq(holder_answer({of(404, "a"), of(503, "down")}, "rid").body, "down");
  const Response none = holder_answer({}, "rid");
  cr_expect_eq(none.status, 503);
  cr_expect(none.body.find("\"requestId\":\"rid\"") != std::string::npos, "%s", none.body.c_str());
}

Test(ops_pods, lists_merge_in_their_order_and_limit) {
  Request r;
  r.method = "GET";
  r.path = "/payouts";
  r.query = "limit=2";
  r.request_id = "rid";
  cr_expect(is_pod_list(r));
  Response m = merged_list(r, {R"([{"createdAt":"2026-01-01T00:00:00.000Z","payoutId":"po_a"},)"
                               R"({"createdAt":"2026-01-03T00:00:00.000Z","payoutId":"po_c"}])",
                               R"([{"createdAt":"2026-01-02T00:00:00.000Z","payoutId":"po_b"}])"});
  cr_expect_eq(m.status, 200);
  cr_expect_eq(m.body, std::string(R"({"ok":true,"data":[{"createdAt":"2026-01-01T00:00:00.000Z","payoutId":"po_a"},)"
                                   R"({"createdAt":"2026-01-02T00:00:00.000Z","payoutId":"po_b"}]})"));
  // Failed deliveries: newest attempt first.
  r.path = "/webhooks/failures";
  r.query = "";
  m = merged_list(r, {R"([{"attemptedAt":"1"}])", R"([{"attemptedAt":"3"},{"attemptedAt":"2"}])"});
  cr_expect_eq(m.body, std::string(R"({"ok":true,"data":[{"attemptedAt":"3"},{"attemptedAt":"2"},{"attemptedAt":"1"}]})"));
  // A pod's answer that is not a list: an internal error, never half a list.
  r.path = "/webhooks";
  cr_expect_eq(merged_list(r, {"[]", R"({"x":1})"}).status, 500);
  r.method = "POST";
  cr_expect(!is_pod_list(r));
}
