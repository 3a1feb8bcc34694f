#include "pg/blocking_pg.hpp"

#include <arpa/inet.h>

#include <algorithm>

namespace mr::pg {

Conn connect(std::string_view dsn, std::string& err, int connect_timeout_s, std::string_view application_name) {
  // Defaults first, then the expanded dsn: libpq keeps the last value of a
  // repeated keyword, so the operator's dsn wins. Appending " key=value" to
  // the dsn instead would break a postgresql:// URI.
  const std::string timeout = std::to_string(connect_timeout_s), dsn_s(dsn), app(application_name);
  std::vector<const char*> keys, values;
  if (connect_timeout_s > 0) {
    keys.push_back("connect_timeout");
    values.push_back(timeout.c_str());
  }
  keys.push_back("fallback_application_name");
  values.push_back(app.c_str());
  keys.push_back("dbname");
  values.push_back(dsn_s.c_str());
  keys.push_back(nullptr);
  values.push_back(nullptr);
  Conn c(PQconnectdbParams(keys.data(), values.data(), 1));
  if (!c || PQstatus(c.get()) != CONNECTION_OK) {
    err = c ? PQerrorMessage(c.get()) : "out of memory";
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return nullptr;
  }
  return c;
}

Result exec(PGconn* conn, std::string_view sql, const std::vector<std::optional<std::string>>& params,
            std::string& err, const std::vector<int>& binary) {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  for (std::size_t i = 0; i < params.size(); ++i) {
    values.push_back(params[i] ? params[i]->data() : nullptr);
    lengths.push_back(params[i] ? static_cast<int>(params[i]->size()) : 0);
    formats.push_back(std::find(binary.begin(), binary.end(), static_cast<int>(i)) != binary.end() ? 1 : 0);
  }
  Result r(PQexecParams(conn, std::string(sql).c_str(), static_cast<int>(params.size()), nullptr,
                        values.data(), lengths.data(), formats.data(), 0));
  const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    err = r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn);
    while (!err.empty() && err.back() == '\n') err.pop_back();
    return nullptr;
  }
  return r;
}

std::optional<std::string> host_needing_resolution(std::string_view dsn) {
  char* error = nullptr;
  const std::string text(dsn);
  PQconninfoOption* options = PQconninfoParse(text.c_str(), &error);
  if (options == nullptr) {
    std::string why = error != nullptr ? error : "out of memory";
    PQfreemem(error);
    while (!why.empty() && why.back() == '\n') why.pop_back();
    return "it does not parse: " + why;
  }
  std::string host, hostaddr;
  for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    if (std::string_view(o->keyword) == "host") host = o->val;
    if (std::string_view(o->keyword) == "hostaddr") hostaddr = o->val;
  }
  PQconninfoFree(options);
  // libpq connects to hostaddr when it is given; host then only names the
  // server for TLS and password files.
  if (!hostaddr.empty()) return std::nullopt;
  std::size_t start = 0;
  while (start <= host.size()) {
    const std::size_t comma = std::min(host.find(',', start), host.size());
    const std::string one = host.substr(start, comma - start);
    start = comma + 1;
    if (one.empty() || one.front() == '/' || one.front() == '@') continue;  // default, or a unix socket
    in6_addr v6{};
    in_addr v4{};
    if (inet_pton(AF_INET, one.c_str(), &v4) == 1 || inet_pton(AF_INET6, one.c_str(), &v6) == 1) continue;
    return "host \"" + one + "\" is a name";
  }
  return std::nullopt;
}

std::string value(const PGresult* r, int row, int col) {
  return {PQgetvalue(r, row, col), static_cast<std::size_t>(PQgetlength(r, row, col))};
}

std::string unescape_bytea(const PGresult* r, int row, int col) {
  std::size_t n = 0;
  unsigned char* raw = PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(r, row, col)), &n);
  if (raw == nullptr) return {};
  std::string out(reinterpret_cast<char*>(raw), n);
  PQfreemem(raw);
  return out;
}

}  // namespace mr::pg
