// One database's migrations, for `migrate` (the catalogue, then each pod)
// and `pod add|list|set` (is a pod's schema whole?). In cmd_migrate.cpp.
#pragma once

#include <string_view>

#include "tools/mrctl/command.hpp"
#include "tools/mrctl/schema_check.hpp"

namespace mr::ctl {

struct MigrateOutcome {
  int applied = 0, adopted = 0, version = 0;
};

// Applies to `conn` the embedded migrations it lacks, up to version `to`,
// after checking the recorded ones; throws Failure (nothing applied) on a
// database migrated by another build. `label` ("pod p1 ", or "") prefixes
// the notices it writes on stderr.
MigrateOutcome migrate_database(Context& ctx, PGconn* conn, int to, std::string_view label);

// The recorded migrations of `conn` against the embedded ones (none when
// it has no schema_migrations table).
SchemaCheck read_schema(Context& ctx, PGconn* conn);

}  // namespace mr::ctl
