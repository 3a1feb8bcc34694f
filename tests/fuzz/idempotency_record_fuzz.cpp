// The Redis record decoder over any bytes Redis could hand back: a stored
// value opens only when its seal verifies for that Redis key, a record the
// decoder accepts survives a round trip through the encoder, and a sealed
// record opens under its own key only.
#include "signing/hmac_key.hpp"
#include "modules/idempotency/idempotency_core.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mr::idempotency;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const mr::HmacKey mac("fuzz record key, 32 bytes long!!");
  const std::string_view input = mr::fuzz::bytes(data, size);
  // Anything stored without our seal is absent, whatever it holds.
  if (const auto opened = open_record(mac, "mr:idem:1:k", input)) {
    const auto resealed = seal_record(mac, "mr:idem:1:k", *opened);
    FUZZ_CHECK(resealed && *resealed == input);
  }
  const auto record = parse_record(input);
  if (!record) return 0;
  const std::string again = record->done ? done_record(record->fingerprint, record->status, record->body, record->expires_ms,
                                                                   record->error)
                                         : pending_record(record->fingerprint);
  const auto back = parse_record(again);
  FUZZ_CHECK(back && back->done == record->done && back->fingerprint == record->fingerprint &&
             back->status == record->status && back->body == record->body &&
             back->expires_ms == record->expires_ms && back->error == record->error);
  FUZZ_CHECK(decide(*record, record->fingerprint) != Decision::conflict);
  (void)storable(record->status, record->error);
  const auto sealed = seal_record(mac, "mr:idem:1:k", again);
  FUZZ_CHECK(sealed && open_record(mac, "mr:idem:1:k", *sealed) == again);
  FUZZ_CHECK(!open_record(mac, "mr:idem:2:k", *sealed));
  return 0;
}
