// The ops listener's routes (ledger::prepare_ops): payout listing queries,
// payout verbs and the fail body (input: method \n path \n query \n body).
#include "tests/fuzz/prepared_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  mr::fuzz::check_prepared(mr::ledger::prepare_ops(mr::fuzz::request_from(data, size)));
  return 0;
}
