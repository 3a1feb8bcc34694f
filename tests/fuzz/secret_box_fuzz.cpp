// The secret box opener over any sealed bytes and key id: a box that opens
// stops opening when any bit of it changes, and what seal() makes of the
// same bytes opens to them again under that key id only.
#include <string>

#include "keys/secret_box.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

mr::MasterKey fixed_key() {
  mr::MasterKey k;
  for (std::size_t i = 0; i < k.bytes.size(); ++i) k.bytes[i] = static_cast<unsigned char>(i * 7 + 1);
  return k;
}

}  // namespace

// Input: key id \n sealed bytes.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const mr::MasterKey key = fixed_key();
  const auto f = mr::fuzz::fields(mr::fuzz::bytes(data, size), 2);
  const std::string_view aad = f[0], sealed = f[1];
  // Seeds are real boxes under `key`, so the opening path runs too.
  if (mr::open(key, sealed, aad)) {
    std::string flipped(sealed);
    flipped[size % flipped.size()] ^= 0x01;
    FUZZ_CHECK(!mr::open(key, flipped, aad));
  }
  const std::string box = mr::seal(key, sealed, aad);
  if (box.empty()) return 0;  // longer than a secret box holds
  const auto opened = mr::open(key, box, aad);
  FUZZ_CHECK(opened && *opened == sealed);
  FUZZ_CHECK(!mr::open(key, box, std::string(aad) + "x"));
  std::string tampered = box;
  tampered[size % tampered.size()] ^= 0x01;
  FUZZ_CHECK(!mr::open(key, tampered, aad));
  return 0;
}
