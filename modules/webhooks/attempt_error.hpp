// What a failed delivery attempt shows the partner (GET .../deliveries):
// the rule that failed, never an address, a resolver's answer or
// libcurl's own text, which could tell a partner what the operator's
// internal names resolve to. The detail goes to the error log.
#pragma once

#include <curl/curl.h>

#include <string>
#include <string_view>

namespace mr::webhooks {

// An HTTP answer other than 2xx: "HTTP 401".
std::string attempt_error_for_status(long status);
// No answer: the kind of failure libcurl reported.
std::string_view attempt_error_for(CURLcode code);
// libcurl did not connect because the address was not public.
inline constexpr std::string_view kNotPublic = "refused: the address is not public";

}  // namespace mr::webhooks
