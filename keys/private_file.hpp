// The one rule for a file that holds a secret (the master key, the ops
// token, the Redis password, mrctl's DSN file, the catalogue snapshot): a
// regular file that neither group nor others may read or write, owned by
// the reading user or root. A secret anyone else can read protects nothing;
// one a stranger owns can be swapped under us.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mr {

// nullopt when the open file `fd` keeps the rule; otherwise one line that
// names `path`, what is wrong and the fix, e.g.
// "/etc/nginx/mr-ops.token: mode 0644 lets group or others at it; chmod 600 it".
std::optional<std::string> private_file_problem(int fd, std::string_view path);

// Opens `path` read-only and applies the rule: the fd (>= 0), or -1 with
// `err` set (cannot open, or the rule's line). The caller closes the fd.
int open_private_file(std::string_view path, std::string& err);

// Reads all of a private file (at most `max_bytes`): nullopt + err when it
// cannot be opened, breaks the rule or is longer.
std::optional<std::string> read_private_file(std::string_view path, std::size_t max_bytes, std::string& err);

}  // namespace mr
