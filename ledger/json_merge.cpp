#include "ledger/json_merge.hpp"

#include <algorithm>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace mr::ledger {
namespace {

std::string_view member_text(const rapidjson::Value& v, const std::string& key) {
  if (!v.IsObject()) return {};
  const auto it = v.FindMember(rapidjson::StringRef(key.data(), key.size()));
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

}  // namespace

std::optional<std::string> merge_json_arrays(const std::vector<std::string>& arrays, const ListOrder& order,
                                             std::size_t limit) {
  const std::vector<std::string>& keys = order.keys;
  const bool descending = order.descending;
  std::vector<rapidjson::Document> docs(arrays.size());
  std::vector<const rapidjson::Value*> items;
  for (std::size_t i = 0; i < arrays.size(); ++i) {
    docs[i].Parse(arrays[i].data(), arrays[i].size());
    if (docs[i].HasParseError() || !docs[i].IsArray()) return std::nullopt;
    for (const auto& v : docs[i].GetArray()) items.push_back(&v);
  }
  std::stable_sort(items.begin(), items.end(), [&](const rapidjson::Value* a, const rapidjson::Value* b) {
    for (const std::string& key : keys) {
      const std::string_view x = member_text(*a, key), y = member_text(*b, key);
      if (x != y) return descending ? y < x : x < y;
    }
    return false;
  });
  if (limit > 0 && items.size() > limit) items.resize(limit);
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartArray();
  for (const rapidjson::Value* v : items) v->Accept(w);
  w.EndArray();
  return std::string(out.GetString(), out.GetSize());
}

ListOrder order_of(OpsList list) {
  switch (list) {
    case OpsList::payouts:
      return {{"createdAt", "payoutId"}, false};
    case OpsList::webhook_endpoints:
      return {{"partnerRef", "createdAt"}, false};
    case OpsList::webhook_failures:
      return {{"attemptedAt"}, true};
  }
  return {};
}

}  // namespace mr::ledger
