// The rule for a pod's name, as migration 018's CHECK has it, so that mrctl
// refuses a bad name with its own words (exit 2) before any database does.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mr::ctl {

// Why `name` cannot name a pod (^[a-z][a-z0-9_]{0,30}$, and not "home",
// the catalogue's own database); nullopt when it can.
std::optional<std::string> pod_name_problem(std::string_view name);

}  // namespace mr::ctl
