// Settles queued at the same moment on one worker go to PostgreSQL as one
// mr_write_batch call (006_write_batch.sql): one round trip and one commit,
// each request keeping its own outcome and idempotency record.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mr::ledger {

using Params = std::vector<std::optional<std::string>>;

// Where each of mr_write's parameters sits in a write's Params (the order
// of sql::write in statements.hpp, which router.cpp builds them in).
namespace write_param {
inline constexpr std::size_t op = 0, club = 1, partner_ref = 2, key = 3, fingerprint = 4, request_id = 5,
                             command = 6, count = 7;
}  // namespace write_param

// mr_write_batch's one parameter: a JSON array holding each request's
// mr_write parameters in order, the command embedded as JSON. nullopt if a
// request is not a complete mr_write call.
std::optional<std::string> write_batch_param(std::span<const Params* const> writes);

// Whether two writes name one idempotency key of one club. mr_write_batch
// (009) leaves such a pair to the one-by-one fallback (the later one would
// replay the earlier one's record), so the pool keeps the later one for the
// next batch instead.
bool same_idempotency_key(const Params& a, const Params& b);

}  // namespace mr::ledger
