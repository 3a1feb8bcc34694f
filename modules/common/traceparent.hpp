// W3C Trace Context: the traceparent header
// (https://www.w3.org/TR/trace-context/#traceparent-header). No nginx header.
#pragma once

#include <optional>
#include <string_view>

namespace mr {

// The valid traceparent in `header`: version-traceid-parentid-flags, lower
// case hex, version not ff, ids not all zero; version 00 exactly 55
// characters, a later version 55 or more with a '-' after the flags (only
// those first 55 characters are kept). nullopt when invalid: ignored.
std::optional<std::string_view> valid_traceparent(std::string_view header);

}  // namespace mr
