// The Redis record decoder over any bytes Redis could hand back: a record
// it accepts survives a round trip through the encoder.
#include "modules/idempotency/idempotency_core.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mr::idempotency;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto record = parse_record(mr::fuzz::bytes(data, size));
  if (!record) return 0;
  const std::string again = record->done ? done_record(record->fingerprint, record->status, record->body)
                                         : pending_record(record->fingerprint);
  const auto back = parse_record(again);
  FUZZ_CHECK(back && back->done == record->done && back->fingerprint == record->fingerprint &&
             back->status == record->status && back->body == record->body);
  FUZZ_CHECK(decide(*record, record->fingerprint) != Decision::conflict);
  (void)storable(record->status, record->body);
  return 0;
}
