// The ops listener over pods. A route that names one thing by
// its id (a payout's result; a webhook endpoint's enable, disable or
// replay) is asked of every pod and answered by the pod that holds it: ids
// are random (mr_new_id), so at most one does. A list (payouts, webhook
// endpoints, failed deliveries) is every pod's, merged as mrctl merges it
// (json_merge.hpp); /readyz and /metrics speak for every pod
// (readiness.hpp, books_metrics.hpp).
#pragma once

#include <string_view>
#include <vector>

#include <string>

#include "ledger/api.hpp"
#include "ledger/routes.hpp"

namespace mr::ledger {

bool addressed_by_id(Route route, std::string_view method, std::string_view path);

// The holder's answer (the first that is not 404: done, or refused, such as
// payout_state_conflict); none holds it: 503 if a pod could not say (it may
// be there), else the 404.
Response holder_answer(const std::vector<Response>& answers, std::string_view request_id);

// GET /payouts, /webhooks, /webhooks/failures (a request the ops route
// already accepted): whether it is a list.
bool is_pod_list(const Request& request);

// Such a list from every pod's (each its statement's one value, a JSON
// array), merged in the list's order and cut to the request's limit, in
// the success envelope.
Response merged_list(const Request& request, const std::vector<std::string>& pod_lists);

}  // namespace mr::ledger
