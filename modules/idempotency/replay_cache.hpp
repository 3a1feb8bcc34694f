// A worker's own copy of final answers it stored in Redis or read back
// from it, so a retry of a request already answered is replayed without a
// Redis round trip (mr_idempotency_replay_cache). Safe because a final
// record does not change while Redis holds it, and leaves Redis at its
// expiry, which the record itself carries (sealed): an entry is kept no
// longer, so the cache answers what Redis would. (A second final answer
// under one key needs a request that outlived mr_idempotency_lock_ttl;
// behind the ledger it is the first answer again, replayed by the
// database.) Bounded in bytes, least recently used out first. No nginx
// header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>

#include "modules/idempotency/idempotency_core.hpp"

namespace mr::idempotency {

class ReplayCache {
 public:
  explicit ReplayCache(std::size_t max_bytes) : max_bytes_(max_bytes) {}

  // The final record kept under the Redis key, unless it expired by now_ms.
  const Record* find(std::string_view redis_key, std::int64_t now_ms);
  // Keeps a final record until record.expires_ms. Not kept: pending
  // records, records without an expiry or already expired, and one larger
  // than an eighth of the cache (it would push out many small answers).
  // By value: a caller done with its record moves it in (body, fingerprint).
  void put(std::string_view redis_key, Record record, std::int64_t now_ms);

  std::size_t bytes() const { return bytes_; }
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    std::string key;
    Record record;
    std::size_t bytes = 0;
  };
  using List = std::list<Entry>;  // most recently used first
  void erase(List::iterator it);

  std::size_t max_bytes_;
  std::size_t bytes_ = 0;
  List entries_;
  std::unordered_map<std::string_view, List::iterator> index_;  // views into Entry::key
};

}  // namespace mr::idempotency
