#include "ledger/ops_pods.hpp"

#include "ledger/errors.hpp"
#include "ledger/json_merge.hpp"
#include "ledger/read_requests.hpp"
#include "ledger/result_render.hpp"

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
  return error_response(ErrorCode::service_unavailable, "", request_id);
}

bool is_pod_list(const Request& request) {
  return request.method == "GET" &&
         (request.path == "/payouts" || request.path == "/webhooks" || request.path == "/webhooks/failures");
}

Response merged_list(const Request& request, const std::vector<std::string>& pod_lists) {
  const OpsList list = request.path == "/payouts"  ? OpsList::payouts
                       : request.path == "/webhooks" ? OpsList::webhook_endpoints
                                                     : OpsList::webhook_failures;
  std::size_t limit = 0;  // the endpoints' list has none
  if (list != OpsList::webhook_endpoints) {
    auto query = parse_history_query(request.query, false);
    if (auto* e = std::get_if<Error>(&query)) return error_response(*e, request.request_id);
    limit = static_cast<std::size_t>(std::get<HistoryQuery>(query).limit);
  }
  const auto merged = merge_json_arrays(pod_lists, order_of(list), limit);
  auto body = !merged ? std::nullopt : ok_body([&](JsonWriter& w) {
    return w.RawValue(merged->data(), merged->size(), rapidjson::kArrayType);
  });
  if (!body) return error_response(ErrorCode::internal_error, "", request.request_id);
  return Response{200, std::move(*body), false};
}

}  // namespace mr::ledger
