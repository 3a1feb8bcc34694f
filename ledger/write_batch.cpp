#include "ledger/write_batch.hpp"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mr::ledger {

std::optional<std::string> write_batch_param(std::span<const Params* const> writes) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartArray();
  for (const Params* p : writes) {
    if (p->size() != write_param::count) return std::nullopt;
    w.StartArray();
    for (std::size_t i = 0; i < write_param::count; ++i) {
      const auto& v = (*p)[i];
      if (!v) return std::nullopt;
      // The command is JSON the domain wrote (write_requests.cpp).
      if (i == write_param::command) {
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
  using namespace write_param;
  if (a.size() <= key || b.size() <= key) return false;
  return a[club] == b[club] && a[key] == b[key];
}

}  // namespace mr::ledger
