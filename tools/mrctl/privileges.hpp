// The privileges of the owner and API roles (migration
// 017_least_privilege.sql, `mrctl roles setup`), kept by every migrate. In
// cmd_roles.cpp.
#pragma once

#include <libpq-fe.h>

#include "tools/mrctl/command.hpp"

namespace mr::ctl {

// Runs mr_apply_privileges() on `conn` in the caller's transaction (migrate's,
// under its lock), once the schema has it: what a migration made or
// replaced passes to the owner, the writers stay definers and the API role
// keeps exactly its grants. Changes nothing when nothing differs. Throws
// Failure saying how to run it.
void keep_privileges(Context& ctx, PGconn* conn);

}  // namespace mr::ctl
