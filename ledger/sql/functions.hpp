// Every SQL function's current text, one file a function
// (ledger/sql/functions/<name>.sql), embedded at build time (see
// CMakeLists.txt beside this file). `mrctl migrate` applies them after the
// numbered migrations, in the same transaction, in dependency order.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mr {

struct SqlFunction {
  std::string_view name;    // the file's name and the function's
  std::string_view sql;     // the whole file: CREATE OR REPLACE FUNCTION ... and what belongs to it
  std::string_view sha256;  // of `sql`, 64 lower-case hex digits
};

// In file-name order.
std::span<const SqlFunction> sql_functions();

// The other functions of `all` that `f`'s body calls: a name of theirs
// followed by `(`, outside comments and string literals.
std::vector<std::string_view> calls_of(const SqlFunction& f, std::span<const SqlFunction> all);

// `all` ordered so that each function comes after the functions it calls
// (PostgreSQL checks a LANGUAGE sql body when it is created). Calls that
// form a cycle (PL/pgSQL bodies may call each other) are ordered by name.
std::vector<const SqlFunction*> in_dependency_order(std::span<const SqlFunction> all);

}  // namespace mr
