// Writes queued at the same moment on one worker go to PostgreSQL as one
// call: settles as mr_write_batch (set-based: ledger/sql/functions/
// mr_write_batch_decide.sql), reversals or redemptions as
// mr_write_batch_each, one mr_write
// per write. One round trip and one commit, each request keeping its own
// outcome and idempotency record.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "signing/hmac_key.hpp"

namespace mr::ledger {

// Which writes may share a batch: only writes of one kind go together
// (never settles with reversals, nor reversals with redemptions); none:
// always alone.
enum class BatchKind : std::uint8_t { none, settle, reverse, redeem };

// The kind of a partner write by its op (mr_write's first parameter).
BatchKind batch_kind(std::string_view op);

using Params = std::vector<std::optional<std::string>>;

// Where each of mr_write's parameters sits in a write's Params (the order
// of sql::write in statements.hpp, which router.cpp builds them in).
namespace write_param {
inline constexpr std::size_t op = 0, club = 1, partner_ref = 2, key = 3, fingerprint = 4, request_id = 5,
                             command = 6, signature = 7, count = 8;
}  // namespace write_param

// mr_write_batch's (and mr_write_batch_each's) one parameter: a JSON array holding each request's
// mr_write parameters in order, the command embedded as JSON. nullopt if a
// request is not a complete mr_write call.
std::optional<std::string> write_batch_param(std::span<const Params* const> writes);

// mr_write's signature parameter: bytea's hex input (a backslash, x and 64 hex
// digits); nullopt (NULL: unchecked) without one.
std::optional<std::string> signature_param(const std::optional<HmacDigest>& mac);

// Whether two writes must go in different batches: they name one
// idempotency key of one club, or carry one signature. mr_write_batch
// would leave such a pair to the one-by-one fallback (the later one
// replays the earlier one's record, or is refused for its signature), so
// the pool keeps the later one for the next batch instead.
bool batch_apart(const Params& a, const Params& b);

}  // namespace mr::ledger
