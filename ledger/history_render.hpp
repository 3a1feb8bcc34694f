// GET /api/v1/members/{id}/points and .../transactions from the plain
// columns of the history statements (ledger/statements.hpp; the reads are
// mr_points_rows'). The rows say:
//   none                          the member does not exist: cardholder_not_found
//   one, every column NULL        the member exists, the page is empty
//   up to limit + 1               the page, newest first; an extra row only
//                                 says that an older page exists
// The answer is what the jsonb functions mr_points / mr_transactions
// render, field for field and byte for byte, so a client sees one API
// whichever serves it (tests/integration/history_compare_test.cpp) (jsonb's key order: shorter keys first, then
// bytewise): entries newest first, nextBefore = createdAt of the last entry
// kept when an older one exists, else null (contract section 6). `limit`
// is 1 to 100 (the statements read at most 101 rows); anything else is an
// internal error.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ledger/api.hpp"

namespace mr::ledger {

Response render_points_page(const ResultView& rows, int limit, std::string_view request_id);
Response render_transactions_page(const ResultView& rows, int limit, std::string_view request_id);

// Milliseconds since 1970 as the API writes a time ("2026-11-22T10:00:00.123Z"),
// as PostgreSQL's to_char(..., 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') wrote it
// (mr_ms_text, mr_ts_text): the milliseconds truncated, years before 1 as
// to_char's YYYY writes them. Returns the 24 or more bytes written to `out`.
std::size_t write_ms_text(std::int64_t ms, char (&out)[40]);

// extract(epoch FROM timestamptz)'s text ("1795681740.450705",
// "-0.000500") as microseconds since 1970; nullopt for anything else
// (Infinity included).
std::optional<std::int64_t> epoch_text_us(std::string_view text);

}  // namespace mr::ledger
