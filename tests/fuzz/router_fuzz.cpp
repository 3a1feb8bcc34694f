// The partner API's router (ledger::prepare) over any method, path, query
// and body: an immediate answer is a JSON error other than internal_error;
// a statement's parameters are text PostgreSQL accepts (valid UTF-8, no NUL).
#include "ledger/api.hpp"
#include "ledger/json_fields.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mr::ledger;

namespace {

void check(const Prepared& prepared) {
  if (const auto* r = std::get_if<Response>(&prepared)) {
    FUZZ_CHECK(r->status >= 400 && r->status < 500);
    FUZZ_CHECK(mr::fuzz::is_json_object(r->body));
    return;
  }
  const Query& q = std::get<std::unique_ptr<Pending>>(prepared)->query();
  FUZZ_CHECK(!q.sql.empty());
  for (const auto& p : q.params) {
    if (p) FUZZ_CHECK(is_storable_utf8(*p));
  }
}

}  // namespace

// Input: method \n path \n query \n body.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto f = mr::fuzz::fields(mr::fuzz::bytes(data, size), 4);
  Request r;
  r.method = f[0];
  r.path = f[1];
  r.query = f[2];
  r.body = f[3];
  r.club_id = 7;
  r.partner_ref = "club-a";
  r.request_id = "rid";
  r.idempotency_key = "key-1";
  r.fingerprint = "fp";
  check(prepare(r));
  return 0;
}
