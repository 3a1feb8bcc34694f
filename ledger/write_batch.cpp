#include "ledger/write_batch.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mr::ledger {

std::optional<std::string> write_batch_param(std::span<const Params* const> writes) {
  constexpr std::size_t kParams = 7;  // op, club, ref, key, fingerprint, request id, command
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartArray();
  for (const Params* p : writes) {
    if (p->size() != kParams) return std::nullopt;
    w.StartArray();
    for (std::size_t i = 0; i < kParams; ++i) {
      const auto& v = (*p)[i];
      if (!v) return std::nullopt;
      // The command is JSON the domain wrote (write_requests.cpp).
      if (i == kParams - 1) {
        w.RawValue(v->data(), v->size(), rapidjson::kObjectType);
      } else {
        w.String(v->data(), static_cast<rapidjson::SizeType>(v->size()));
      }
    }
    w.EndArray();
  }
  w.EndArray();
  return std::string(out.GetString(), out.GetSize());
}

bool same_idempotency_key(const Params& a, const Params& b) {
  constexpr std::size_t kClub = 1, kKey = 3;
  if (a.size() <= kKey || b.size() <= kKey) return false;
  return a[kClub] == b[kClub] && a[kKey] == b[kKey];
}

}  // namespace mr::ledger
