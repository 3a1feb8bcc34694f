// The schema's numbered migrations, embedded at build time (see
// CMakeLists.txt beside this file), applied in order by `mrctl migrate`.
#pragma once

#include <span>
#include <string_view>

namespace mr {

struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

std::span<const Migration> migrations();

}  // namespace mr
