// Renders the webhook endpoint statements' results. The database holds an
// endpoint's secret sealed only, also in the idempotency record of the
// answer that showed it: the create and rotate results carry
// "secretSealed", opened here into "secret" when they are rendered, so a
// replay from the database shows the same secret, byte for byte. Every
// other answer (every GET) drops a "secretSealed" it might carry.
#pragma once

#include <string_view>

#include "ledger/api.hpp"

namespace mr::ledger {

// As render_result; `reveal_with` non-null: a success's data.secretSealed
// becomes data.secret (opened for data.endpointId; internal_error when it
// does not open). Null: data.secretSealed is left out.
Response render_webhook_result(std::string_view result_json, std::string_view request_id,
                               const WebhookSecrets* reveal_with);

}  // namespace mr::ledger
