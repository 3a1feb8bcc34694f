// What a partner reads for a failed attempt: the rule, never an address or
// libcurl's own text, and never nothing.
#include <criterion/criterion.h>

#include <string>

#include "modules/webhooks/attempt_error.hpp"

using namespace mr::webhooks;

Test(attempt_error, an_answer_other_than_2xx_names_its_status) {
  cr_expect_eq(attempt_error_for_status(401), std::string("HTTP 401"));
  cr_expect_eq(attempt_error_for_status(500), std::string("HTTP 500"));
}

Test(attempt_error, every_failure_says_which_rule_and_nothing_else) {
  cr_expect_eq(std::string(attempt_error_for(CURLE_COULDNT_CONNECT)), "the connection was refused");
  cr_expect_eq(std::string(attempt_error_for(CURLE_COULDNT_RESOLVE_HOST)), "the host name did not resolve");
  cr_expect_eq(std::string(attempt_error_for(CURLE_PEER_FAILED_VERIFICATION)), "TLS failed");
  cr_expect_eq(std::string(attempt_error_for(CURLE_SSL_CONNECT_ERROR)), "TLS failed");
  cr_expect_eq(std::string(attempt_error_for(CURLE_OPERATION_TIMEDOUT)), "timed out");
  for (int c = 1; c < CURL_LAST; ++c) {
    const std::string text(attempt_error_for(static_cast<CURLcode>(c)));
    cr_expect(!text.empty(), "code %d has no text", c);
    cr_expect(text.find_first_of("0123456789:") == std::string::npos || text.starts_with("refused: "),
              "code %d: %s", c, text.c_str());
  }
  cr_expect(std::string(kNotPublic).find_first_of("0123456789") == std::string::npos);
}
