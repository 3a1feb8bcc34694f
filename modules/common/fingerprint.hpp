// The idempotency fingerprint of a request (contract section 3): SHA-256 of
// method, path and body, so a retry is recognised and a changed request is a
// conflict. One definition for the Redis edge and the ledger's records.
#pragma once

#include <string>
#include <string_view>

namespace mr {

std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body);

}  // namespace mr
