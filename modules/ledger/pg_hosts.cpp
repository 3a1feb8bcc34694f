#include "modules/ledger/pg_hosts.hpp"

#include <algorithm>
#include <memory>

#include <libpq-fe.h>

namespace mr::pg {
namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (std::size_t comma; (comma = s.find(',', at)) != std::string::npos; at = comma + 1) {
    out.push_back(s.substr(at, comma - at));
  }
  out.push_back(s.substr(at));
  return out;
}

std::string join_commas(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

std::vector<const char*> with_null(const std::vector<std::string>& v) {
  std::vector<const char*> out;
  for (const auto& s : v) out.push_back(s.c_str());
  out.push_back(nullptr);
  return out;
}

}  // namespace

std::vector<const char*> ConnectParams::keyword_ptrs() const { return with_null(keywords); }
std::vector<const char*> ConnectParams::value_ptrs() const { return with_null(values); }

std::optional<ConnectParams> params_from_host(std::string_view dsn, int first, std::string& err) {
  char* parse_err = nullptr;
  const std::string dsn_s(dsn);
  std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> opts(PQconninfoParse(dsn_s.c_str(), &parse_err),
                                                                       PQconninfoFree);
  if (!opts) {
    err = parse_err != nullptr ? parse_err : "cannot parse the DSN";
    PQfreemem(parse_err);
    return std::nullopt;
  }
  ConnectParams p;
  for (PQconninfoOption* o = opts.get(); o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    p.keywords.emplace_back(o->keyword);
    p.values.emplace_back(o->val);
  }
  // Each list with more than one entry names one entry per server.
  std::vector<std::vector<std::string>> lists;
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i < p.keywords.size(); ++i) {
    const auto& k = p.keywords[i];
    if (k != "host" && k != "hostaddr" && k != "port") continue;
    auto parts = split_commas(p.values[i]);
    if (parts.size() == 1) continue;
    if (p.hosts > 1 && static_cast<int>(parts.size()) != p.hosts) {
      err = "the DSN's host, hostaddr and port lists differ in length";
      return std::nullopt;
    }
    p.hosts = static_cast<int>(parts.size());
    lists.push_back(std::move(parts));
    at.push_back(i);
  }
  const int shift = p.hosts > 1 ? ((first % p.hosts) + p.hosts) % p.hosts : 0;
  for (std::size_t j = 0; j < lists.size(); ++j) {
    std::rotate(lists[j].begin(), lists[j].begin() + shift, lists[j].end());
    p.values[at[j]] = join_commas(lists[j]);
  }
  return p;
}

}  // namespace mr::pg
