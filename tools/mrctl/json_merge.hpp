// One JSON list out of several databases' lists (payout list, webhook list
// and failures over every pod): concatenated, sorted as each database sorted
// its own, cut to the limit. Pure, for mrctl and its unit test.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mr::ctl {

// `arrays`: JSON arrays of objects. Sorted by the string members `keys`
// (the first that differs decides; a missing or non-string member sorts as
// ""), stable, descending when `descending`; the first `limit` kept (0: all).
// nullopt when one of them is not an array.
std::optional<std::string> merge_json_arrays(const std::vector<std::string>& arrays,
                                             const std::vector<std::string>& keys, bool descending,
                                             std::size_t limit);

}  // namespace mr::ctl
