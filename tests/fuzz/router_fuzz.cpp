// The partner API's router (ledger::prepare) over any method, path, query
// and body (input: method \n path \n query \n body).
#include "tests/fuzz/prepared_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mr::fuzz::check_prepared(mr::ledger::prepare(mr::fuzz::request_from(data, size)));
  return 0;
}
