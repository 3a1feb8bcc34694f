#include "ledger/write_batch.hpp"

#include "signing/digest.hpp"

#include "ledger/json_text.hpp"

namespace mr::ledger {

BatchKind batch_kind(std::string_view op) {
  if (op == "settle") return BatchKind::settle;
  if (op == "reverse") return BatchKind::reverse;
  if (op == "redeem") return BatchKind::redeem;
  return BatchKind::none;
}

std::optional<std::string> write_batch_param(std::span<const Params* const> writes) {
  std::size_t size = 2;
  for (const Params* p : writes) {
    for (const auto& v : *p) size += 4 + (v ? v->size() : 0);
  }
  JsonText w(size);
  w.StartArray();
  for (const Params* p : writes) {
    if (p->size() != write_param::count) return std::nullopt;
    w.StartArray();
    for (std::size_t i = 0; i < write_param::count; ++i) {
      const auto& v = (*p)[i];
      if (!v && i == write_param::signature) {
        w.Null();
        continue;
      }
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
  return w.str();
}

std::optional<std::string> signature_param(const std::optional<HmacDigest>& mac) {
  if (!mac) return std::nullopt;
  return "\\x" + to_hex(mac->data(), mac->size());
}

bool batch_apart(const Params& a, const Params& b) {
  using namespace write_param;
  if (a.size() <= key || b.size() <= key) return false;
  if (a[club] == b[club] && a[key] == b[key]) return true;
  return a.size() > signature && b.size() > signature && a[signature] && a[signature] == b[signature];
}

}  // namespace mr::ledger
