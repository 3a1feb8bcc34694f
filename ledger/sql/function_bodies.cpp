// created_functions(): a small scanner over migration SQL, enough to find
// each created function's name and dollar-quoted body. mrctl migrate uses it
// to check a database's functions when it adopts migrations applied before
// checksums were recorded; the tests use it to check definition order.
#include <cctype>
#include <string>

#include "ledger/sql/migrations.hpp"

namespace mr {
namespace {

bool word_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool word_char(char c) { return word_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Where the block comment that starts at i ends (PostgreSQL nests them).
std::size_t after_block_comment(std::string_view sql, std::size_t i) {
  const std::size_t n = sql.size();
  int depth = 0;
  while (i < n) {
    if (sql.compare(i, 2, "/*") == 0) {
      depth++, i += 2;
    } else if (sql.compare(i, 2, "*/") == 0) {
      i += 2;
      if (--depth == 0) break;
    } else {
      i++;
    }
  }
  return i;
}

// Where the string or quoted name that starts at i ends: E'...' strings
// escape with a backslash; others double the quote.
std::size_t after_quoted(std::string_view sql, std::size_t i) {
  const std::size_t n = sql.size();
  const char c = sql[i];
  const bool escapes = c == '\'' && i > 0 && (sql[i - 1] == 'E' || sql[i - 1] == 'e');
  i++;
  while (i < n) {
    if (escapes && sql[i] == '\\') {
      i += 2;
    } else if (sql[i] == c) {
      if (i + 1 < n && sql[i + 1] == c) {
        i += 2;
      } else {
        return i + 1;
      }
    } else {
      i++;
    }
  }
  return i;
}

}  // namespace

std::vector<FunctionBody> created_functions(std::string_view sql) {
  std::vector<FunctionBody> out;
  std::string w1, w2, w3;  // the last three words, newest in w1
  std::string pending;     // a function whose body has not been seen yet
  bool want_name = false;
  std::size_t i = 0;
  const std::size_t n = sql.size();
  while (i < n) {
    const char c = sql[i];
    if (c == '-' && i + 1 < n && sql[i + 1] == '-') {
      const auto eol = sql.find('\n', i);
      i = eol == std::string_view::npos ? n : eol + 1;
    } else if (c == '/' && i + 1 < n && sql[i + 1] == '*') {
      i = after_block_comment(sql, i);
    } else if (c == '\'' || c == '"') {
      want_name = false;  // a quoted function name: not followed
      i = after_quoted(sql, i);
    } else if (c == '$' && (i + 1 < n) && (sql[i + 1] == '$' || word_start(sql[i + 1]))) {
      std::size_t end_tag = i + 1;
      while (end_tag < n && word_char(sql[end_tag])) end_tag++;
      if (end_tag >= n || sql[end_tag] != '$') {
        i = end_tag;  // not a dollar quote
        continue;
      }
      const std::string_view tag = sql.substr(i, end_tag + 1 - i);
      const std::size_t body_start = end_tag + 1;
      const auto close = sql.find(tag, body_start);
      const std::size_t body_end = close == std::string_view::npos ? n : close;
      if (!pending.empty()) {
        out.push_back({pending, sql.substr(body_start, body_end - body_start)});
        pending.clear();
      }
      i = close == std::string_view::npos ? n : close + tag.size();
    } else if (word_start(c)) {
      std::size_t j = i;
      while (j < n && word_char(sql[j])) j++;
      std::string w = lower(sql.substr(i, j - i));
      i = j;
      if (want_name) {
        // schema.name: keep the last part
        if (i < n && sql[i] == '.') {
          i++;
          continue;
        }
        pending = w;
        want_name = false;
      } else if (w == "function" && (w1 == "create" || (w1 == "replace" && w2 == "or" && w3 == "create"))) {
        want_name = true;
      }
      w3 = std::move(w2), w2 = std::move(w1), w1 = std::move(w);
    } else {
      if (c == ';') pending.clear(), want_name = false;
      i++;
    }
  }
  return out;
}

}  // namespace mr
