// The nginx-free rules of the idempotency edge (contract section 3): the
// Redis key and record format, what an existing record means for a new
// request, and which responses are kept for replay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ledger/errors.hpp"

namespace mr {
class HmacKey;
}

namespace mr::idempotency {

struct Record {
  bool done = false;         // false: the first request is still running
  std::string fingerprint;   // request_fingerprint of the first request
  int status = 0;            // done only
  std::string body;          // done only: byte for byte as first sent
  // Done only: when Redis drops the record (Unix ms, the storing worker's
  // clock); 0 in records written before it was kept.
  std::int64_t expires_ms = 0;
  // Done only: the failure envelope's code (nullopt for a success). Records
  // stored before it was kept have none: then it is read from the body.
  std::optional<ErrorCode> error = std::nullopt;
};

std::string redis_key(std::int64_t club_id, std::string_view idempotency_key);

// What is stored in Redis: hex HMAC-SHA256 over the Redis key (club and
// idempotency key) and the record, then the record. Anyone who can write to
// Redis could otherwise plant an answer that is replayed as ours; a record
// that does not verify (or was copied under another key) is treated as
// absent and the database decides. nullopt when OpenSSL fails.
std::optional<std::string> seal_record(const HmacKey& mac, std::string_view redis_key, std::string_view record);
std::optional<std::string> open_record(const HmacKey& mac, std::string_view redis_key, std::string_view stored);
std::string pending_record(std::string_view fingerprint);
std::string done_record(std::string_view fingerprint, int status, std::string_view body,
                        std::int64_t expires_ms = 0, std::optional<ErrorCode> error = std::nullopt);
std::optional<Record> parse_record(std::string_view text);

enum class Decision { replay, conflict, in_progress };
Decision decide(const Record& existing, std::string_view fingerprint);

// Kept for replay: every outcome decided after the body passed its schema
// check: 2xx and the 404, 409 and 422 answers, except the idempotency
// answers themselves and an unknown path's not_found. Not kept: 400, 401,
// 413, 429, 5xx.
bool storable(int status, std::optional<ErrorCode> error);

// error.code of a JSON failure envelope, for an answer no mr module gave
// (an upstream's, in front of proxy_pass) and for a record stored before
// codes were kept: the only code read back from a body.
std::optional<ErrorCode> envelope_code(std::string_view body);

}  // namespace mr::idempotency
