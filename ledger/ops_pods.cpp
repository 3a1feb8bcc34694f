#include "ledger/ops_pods.hpp"

#include "ledger/errors.hpp"

namespace mr::ledger {

bool addressed_by_id(Route route, std::string_view method, std::string_view path) {
  if (method != "POST") return false;
  if (route == Route::ops_payout_result) return true;
  // POST /webhooks/{id}/enable|disable|replay
  return route == Route::ops_webhooks && path.starts_with("/webhooks/");
}

Response holder_answer(const std::vector<Response>& answers, std::string_view request_id) {
  const Response* unavailable = nullptr;
  for (const Response& a : answers) {
    if (a.status == 503) {
      if (unavailable == nullptr) unavailable = &a;
    } else if (a.status != 404) {
      return a;
    }
  }
  if (unavailable != nullptr) return *unavailable;
  if (!answers.empty()) return answers.front();
  return Response{503, render_error(ErrorCode::service_unavailable, "", request_id), false};
}

}  // namespace mr::ledger
