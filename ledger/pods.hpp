// Pods (docs/operator-guide.md, "Pods"): the name of the pod that the
// catalogue's own database is, which mr_ledger_dsn names. Every other pod
// is named in the directory (migration 018), which refuses this name.
#pragma once

#include <string_view>

namespace mr {

inline constexpr std::string_view kHomePod = "home";

}  // namespace mr
