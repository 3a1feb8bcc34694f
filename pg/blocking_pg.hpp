// Blocking libpq with RAII, for the operator tool and for loading the key
// catalogue in nginx's master (never on a worker's event loop).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pg/pg_handles.hpp"

namespace mr::pg {

// nullptr and err set when the connection fails. `dsn` is a keyword=value
// string or a postgresql:// URI; connect_timeout_s (when > 0) and the
// application name are defaults that the dsn's own settings override.
Conn connect(std::string_view dsn, std::string& err, int connect_timeout_s = 0,
             std::string_view application_name = "mr");

// Runs one statement with text parameters (nullopt = NULL); binary params
// for bytea when `binary` lists their positions. nullptr + err on failure.
Result exec(PGconn* conn, std::string_view sql, const std::vector<std::optional<std::string>>& params,
            std::string& err, const std::vector<int>& binary = {});

// For a DSN used without blocking (the ledger's workers): nullopt when
// every server it names is an IP address or a unix socket folder, or comes
// with a hostaddr; else one line naming the first host that libpq would
// have to resolve (blocking the event loop), or why the DSN does not parse.
std::optional<std::string> host_needing_resolution(std::string_view dsn);

std::string value(const PGresult* r, int row, int col);
std::string unescape_bytea(const PGresult* r, int row, int col);

}  // namespace mr::pg
