#include "modules/idempotency/replay_cache.hpp"

namespace mr::idempotency {
namespace {

// Heap and node overhead of an entry, roughly: strings, list node, index slot.
constexpr std::size_t kEntryOverhead = 160;

}  // namespace

const Record* ReplayCache::find(std::string_view redis_key, std::int64_t now_ms) {
  auto found = index_.find(redis_key);
  if (found == index_.end()) return nullptr;
  const List::iterator it = found->second;
  if (it->record.expires_ms <= now_ms) {
    erase(it);
    return nullptr;
  }
  entries_.splice(entries_.begin(), entries_, it);
  return &it->record;
}

void ReplayCache::put(std::string_view redis_key, Record record, std::int64_t now_ms) {
  if (!record.done || record.expires_ms <= now_ms) return;
  const std::size_t bytes =
      kEntryOverhead + redis_key.size() + record.fingerprint.size() + record.body.size();
  if (bytes > max_bytes_ / 8) return;
  // One lookup for a new key (every settle's): the index's key views the
  // new entry's string.
  entries_.push_front(Entry{std::string(redis_key), std::move(record), bytes});
  if (auto [slot, added] = index_.try_emplace(entries_.front().key, entries_.begin()); !added) {
    erase(slot->second);  // the key's older entry, and its index slot viewing that entry's string
    index_.emplace(entries_.front().key, entries_.begin());
  }
  bytes_ += bytes;
  while (bytes_ > max_bytes_) erase(std::prev(entries_.end()));
}

void ReplayCache::erase(List::iterator it) {
  bytes_ -= it->bytes;
  index_.erase(it->key);
  entries_.erase(it);
}

}  // namespace mr::idempotency
