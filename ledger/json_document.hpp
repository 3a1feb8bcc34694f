// A RapidJSON document whose memory pool starts inside the object.
//
// rapidjson::Document's own pool takes its first chunk, 64 KiB, from malloc
// on the first string or member. glibc serves any request of 1 KiB or more
// only after malloc_consolidate has walked and merged every fast bin of the
// heap, and frees a 64 KiB chunk the same way: a settled POST parses
// several documents (a body, a ledger result, idempotency records), so each
// request would pay several consolidations (bench/RESULTS.md). The documents parsed here are request bodies and
// results of a few KiB: their first 4 KiB live in the object (on the
// caller's stack), and a larger one takes further 4 KiB chunks.
#pragma once

#include <cstddef>

#include <rapidjson/document.h>

namespace mr::ledger {

inline constexpr std::size_t kJsonChunkBytes = 4096;

namespace detail {
// Declared as the first base so the pool exists before the document that
// points to it, and outlives it.
struct SmallChunkPool {
  alignas(std::max_align_t) char first_chunk[kJsonChunkBytes];
  rapidjson::MemoryPoolAllocator<> pool{first_chunk, sizeof first_chunk, kJsonChunkBytes};
};
}  // namespace detail

class JsonDocument : private detail::SmallChunkPool, public rapidjson::Document {
 public:
  JsonDocument() : rapidjson::Document(&pool) {}
  // The document points into its own pool: neither may be copied or moved.
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;
};

}  // namespace mr::ledger
