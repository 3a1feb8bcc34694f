// Pods (docs/operator-guide.md, "Pods"): the name of the pod that the
// catalogue's own database is, which mr_ledger_dsn names. Every other pod
// is named in the directory (table pods), which refuses this name.
#pragma once

#include <string_view>

namespace mr {

inline constexpr std::string_view kHomePod = "home";

// The SQLSTATE a writer raises while its club is moving to another pod
// (mr_refuse_moving): answered 503 service_unavailable with Retry-After.
inline constexpr std::string_view kClubMovingSqlstate = "MR503";

}  // namespace mr
