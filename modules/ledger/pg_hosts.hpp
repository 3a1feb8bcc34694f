// Which server of a multi-host DSN a connect tries first. libpq moves to
// the next host only when one refuses or fails; a host that hangs (a frozen
// or unreachable machine) holds a non-blocking connect until the pool's own
// connect timeout, and the next attempt would start at that host again.
// After a timeout the pool starts the next attempt one host further on.
// No nginx header: unit-tested on its own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mr::pg {

struct ConnectParams {
  std::vector<std::string> keywords, values;  // for PQconnectStartParams
  int hosts = 1;                              // servers the DSN names
  // Null-terminated views of the two lists.
  std::vector<const char*> keyword_ptrs() const;
  std::vector<const char*> value_ptrs() const;
};

// The DSN's options (libpq parses them) with its host, hostaddr and port
// lists rotated to begin at server `first` (modulo their count). A single
// port for every host stays as it is. nullopt and `err` when libpq cannot
// parse the DSN or its lists disagree in length.
std::optional<ConnectParams> params_from_host(std::string_view dsn, int first, std::string& err);

}  // namespace mr::pg
