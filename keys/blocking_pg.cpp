#include "keys/blocking_pg.hpp"

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
