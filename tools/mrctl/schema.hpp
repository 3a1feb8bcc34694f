// One database's migrations, for `migrate` (the catalogue, then each pod)
// and `pod add|list|set` (is a pod's schema whole?). In cmd_migrate.cpp.
#pragma once

#include <string_view>

#include "tools/mrctl/command.hpp"
#include "tools/mrctl/schema_check.hpp"

namespace mr::ctl {

struct MigrateOutcome {
  int applied = 0, adopted = 0, version = 0;
  int functions = 0;  // functions created, replaced or dropped
};

// Applies to `conn` the embedded migrations it lacks, up to version `to`,
// after checking the recorded ones, and then (when `to` is the newest) the
// SQL functions' files, in one transaction; throws Failure (nothing
// applied) on a database migrated by another build. `label` ("pod p1 ", or
// "") prefixes the notices it writes on stderr.
MigrateOutcome migrate_database(Context& ctx, PGconn* conn, int to, std::string_view label);

// Makes every function of ledger/sql/functions/ current in the caller's
// transaction (functions_apply.cpp): created or replaced where its file's
// checksum or body differs from what the database records and holds, in
// dependency order; a function of ours no file defines is dropped. Returns
// how many it created, replaced or dropped.
int apply_functions(Context& ctx, PGconn* conn);

// The server's message without "ERROR:  ", its newline or CONTEXT lines.
std::string first_error_line(std::string s);

// The recorded migrations of `conn` against the embedded ones (none when
// it has no schema_migrations table).
SchemaCheck read_schema(Context& ctx, PGconn* conn);

}  // namespace mr::ctl
