// Which embedded functions a function calls, and the order that creates
// each after those it calls: mrctl migrate applies the files in this order
// with PostgreSQL's check of LANGUAGE sql bodies on.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "ledger/sql/functions.hpp"

namespace mr {
namespace {

bool word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool word_char(char c) { return word_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// Skips a comment starting at `i`, if there is one; returns where scanning goes on.
std::size_t past_comment(std::string_view s, std::size_t i) {
  if (s.compare(i, 2, "--") == 0) {
    const auto eol = s.find('\n', i);
    return eol == std::string_view::npos ? s.size() : eol + 1;
  }
  if (s.compare(i, 2, "/*") == 0) {
    int depth = 0;  // PostgreSQL nests block comments
    while (i < s.size()) {
      if (s.compare(i, 2, "/*") == 0) {
        depth++, i += 2;
      } else if (s.compare(i, 2, "*/") == 0) {
        i += 2;
        if (--depth == 0) break;
      } else {
        i++;
      }
    }
    return i;
  }
  return i;
}

}  // namespace

std::vector<std::string_view> calls_of(const SqlFunction& f, std::span<const SqlFunction> all) {
  std::set<std::string_view> names;
  for (const auto& g : all) {
    if (g.name != f.name) names.insert(g.name);
  }
  std::set<std::string_view> found;
  const std::string_view s = f.sql;
  std::size_t i = 0;
  while (i < s.size()) {
    if (const std::size_t next = past_comment(s, i); next != i) {
      i = next;
      continue;
    }
    const char c = s[i];
    if (c == '$') {  // a dollar-quote tag is no identifier: step over it
      std::size_t j = i + 1;
      while (j < s.size() && word_char(s[j])) j++;
      i = j < s.size() && s[j] == '$' ? j + 1 : i + 1;
      continue;
    }
    if (!word_start(c) || (i > 0 && (word_char(s[i - 1]) || s[i - 1] == '.'))) {
      i++;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && word_char(s[j])) j++;
    const std::string_view word = s.substr(i, j - i);
    std::size_t k = j;
    while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) k++;
    if (k < s.size() && s[k] == '(' && names.contains(word)) found.insert(word);
    i = j;
  }
  return {found.begin(), found.end()};
}

std::vector<const SqlFunction*> in_dependency_order(std::span<const SqlFunction> all) {
  std::map<std::string_view, const SqlFunction*> by_name;
  for (const auto& f : all) by_name[f.name] = &f;
  std::map<std::string_view, std::set<std::string_view>> waits;  // a function and what it still waits for
  for (const auto& f : all) {
    auto calls = calls_of(f, all);
    waits[f.name] = {calls.begin(), calls.end()};
  }
  std::vector<const SqlFunction*> out;
  while (!waits.empty()) {
    // The first (by name) that waits for nothing; in a cycle, the first.
    auto ready = std::find_if(waits.begin(), waits.end(), [](const auto& w) { return w.second.empty(); });
    if (ready == waits.end()) ready = waits.begin();
    const std::string_view name = ready->first;
    out.push_back(by_name[name]);
    waits.erase(ready);
    for (auto& [other, pending] : waits) pending.erase(name);
  }
  return out;
}

}  // namespace mr
