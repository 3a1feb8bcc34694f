// /readyz (contract section 8): whether each pod's database can serve these
// modules, and the one answer for all of them. A pod is ready when its
// database answered with a schema at the modules' newest migration or
// later; the node is ready when every pod is. With only the home pod the
// answer names no pod.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ledger/api.hpp"

namespace mr::ledger {

struct PodReadiness {
  std::string pod;
  bool ready = false;
  std::string reason;  // not ready: why, for the operator
};

// From the answer to sql::ready (the newest migration, as text).
PodReadiness readiness_of_version(std::string_view pod, std::string_view version_text);
// From sql::ready's failure: undefined_table is a database no migration ran on.
PodReadiness readiness_of_sql_error(std::string_view pod, std::string_view sqlstate);
PodReadiness readiness_unavailable(std::string_view pod);

// 200 when every pod is ready, else 503 service_unavailable naming each
// pod that is not and why.
Response render_readiness(const std::vector<PodReadiness>& pods, std::string_view request_id);

}  // namespace mr::ledger
