#include "tools/mrctl/pod_name.hpp"

#include "keys/key_catalogue.hpp"

namespace mr::ctl {

std::optional<std::string> pod_name_problem(std::string_view name) {
  if (name == kHomePod) {
    return std::string("\"home\" is the catalogue's own database (nginx's mr_ledger_dsn): give another name");
  }
  const auto lower = [](char c) { return c >= 'a' && c <= 'z'; };
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  bool ok = !name.empty() && name.size() <= 31 && lower(name.front());
  for (char c : name) ok = ok && (lower(c) || digit(c) || c == '_');
  if (!ok) return std::string("a pod's name is 1 to 31 of a-z, 0-9 and _, starting with a letter");
  return std::nullopt;
}

}  // namespace mr::ctl
