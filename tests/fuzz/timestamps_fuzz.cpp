// The RFC 3339 parser: what it accepts is exactly the date and time the
// text names (formatting it back gives the same text).
#include <chrono>

#include "ledger/timestamps.hpp"
#include "signing/signature.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace std::chrono;
  const std::string_view text = mr::fuzz::bytes(data, size);
  const auto parsed = mr::parse_rfc3339_utc(text);
  if (!parsed) return 0;
  FUZZ_CHECK(text.size() >= 20 && text.size() <= 35);
  FUZZ_CHECK(parsed->fraction >= nanoseconds(0) && parsed->fraction < seconds(1));
  const year_month_day ymd{floor<days>(parsed->seconds)};
  // system_clock counts 64-bit nanoseconds: format only what it can hold.
  if (ymd.year() >= year(1678) && ymd.year() <= year(2261)) {
    const auto formatted = mr::signing::format_timestamp(time_point_cast<system_clock::duration>(parsed->seconds));
    FUZZ_CHECK(formatted.substr(0, 19) == text.substr(0, 19));
  }
  return 0;
}
