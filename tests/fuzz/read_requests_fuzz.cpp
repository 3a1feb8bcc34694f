// Path identifiers and the history query string, called directly: what the
// parsers accept is within the contract's limits.
#include "ledger/read_requests.hpp"
#include "ledger/text_rules.hpp"
#include "tests/fuzz/fuzz_check.hpp"

using namespace mr::ledger;

// Input: path segment \n query string.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto f = mr::fuzz::fields(mr::fuzz::bytes(data, size), 2);
  if (const auto id = path_identifier(f[0])) {
    FUZZ_CHECK(!id->empty() && id->size() <= 128 && mr::is_printable_ascii(*id));
  }
  for (const bool with_filter : {true, false}) {
    const auto q = parse_history_query(f[1], with_filter);
    if (const auto* h = std::get_if<HistoryQuery>(&q)) {
      FUZZ_CHECK(h->limit >= 1 && h->limit <= 100);
      FUZZ_CHECK(!h->before || *h->before >= 0);
      FUZZ_CHECK(with_filter || h->filter == "all");
    } else {
      const auto& e = std::get<mr::Error>(q);
      FUZZ_CHECK(e.code == mr::ErrorCode::invalid_request);
      FUZZ_CHECK(mr::fuzz::is_json_object(mr::render_error(e, "rid")));
    }
  }
  std::size_t pairs = 0;
  for_each_query_param(f[1], [&pairs](std::string_view, std::string_view) { return ++pairs, true; });
  FUZZ_CHECK(pairs <= f[1].size());
  (void)query_has_club_id(f[1]);
  return 0;
}
