// The schema's numbered migrations, embedded at build time (see
// CMakeLists.txt beside this file), applied in order by `mrctl migrate`.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mr {

struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
  std::string_view sha256;  // of `sql`, 64 lower-case hex digits
};

std::span<const Migration> migrations();

// A text a migration had on main before the file's, which a database may
// have recorded; a later migration restates every difference
// (migrations/SUPERSEDED), so mrctl migrate accepts it as that migration.
struct EarlierText {
  int version;
  std::string_view sha256;
};

std::span<const EarlierText> earlier_texts();

// A function a migration creates: its unquoted name (folded to lower case,
// without a schema) and the text between its dollar quotes, which is what
// PostgreSQL keeps in pg_proc.prosrc.
struct FunctionBody {
  std::string name;
  std::string_view body;
};

// Every `CREATE [OR REPLACE] FUNCTION name ... AS $tag$body$tag$` in `sql`,
// in order, skipping comments and string literals. Only dollar-quoted
// bodies are seen: the migrations write every function that way.
std::vector<FunctionBody> created_functions(std::string_view sql);

}  // namespace mr
