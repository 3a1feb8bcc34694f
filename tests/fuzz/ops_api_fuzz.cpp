// The ops listener's routes (ledger::prepare_ops): payout listing queries,
// payout verbs and the fail body. Same promises as the partner router.
#include "ledger/api.hpp"
#include "ledger/json_fields.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mr::ledger;

// Input: method \n path \n query \n body.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto f = mr::fuzz::fields(mr::fuzz::bytes(data, size), 4);
  Request r;
  r.method = f[0];
  r.path = f[1];
  r.query = f[2];
  r.body = f[3];
  r.request_id = "rid";
  const Prepared prepared = prepare_ops(r);
  if (const auto* resp = std::get_if<Response>(&prepared)) {
    FUZZ_CHECK(resp->status >= 400 && resp->status < 500);
    FUZZ_CHECK(mr::fuzz::is_json_object(resp->body));
    return 0;
  }
  for (const auto& p : std::get<std::unique_ptr<Pending>>(prepared)->query().params) {
    if (p) FUZZ_CHECK(is_storable_utf8(*p));
  }
  return 0;
}
