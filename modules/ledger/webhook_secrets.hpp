// The partner API's webhook secrets (ledger::WebhookSecrets): new endpoint
// ids and secrets, sealed and opened with keys/webhook_secret under the key
// mr_auth derived from the master key when the configuration loaded.
#pragma once

#include "ledger/api.hpp"

namespace mr::ngx::ledger {

// This worker's, for its cycle; nullptr when mr_auth loaded no key (the
// webhook endpoint writes then answer internal_error).
const mr::ledger::WebhookSecrets* webhook_secrets();

}  // namespace mr::ngx::ledger
