// The operator's lists over pods (payouts, webhook endpoints, failed
// deliveries): one JSON list out of every pod's, concatenated, sorted as
// each pod's function sorts its own, cut to the limit. One rule for mrctl
// and the ops listener.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mr::ledger {

struct ListOrder;

// `arrays`: JSON arrays of objects. Sorted by the string members of
// `order.keys` (the first that differs decides; a missing or non-string
// member sorts as ""), stable, descending when `order.descending`; the
// first `limit` kept (0: all). nullopt when one of them is not an array.
std::optional<std::string> merge_json_arrays(const std::vector<std::string>& arrays, const ListOrder& order,
                                             std::size_t limit);

enum class OpsList { payouts, webhook_endpoints, webhook_failures };

struct ListOrder {
  std::vector<std::string> keys;
  bool descending = false;
};

// mr_payouts: oldest first; mr_ops_webhook_endpoints: by club, then oldest;
// mr_ops_webhook_failures: newest attempt first.
ListOrder order_of(OpsList list);

}  // namespace mr::ledger
