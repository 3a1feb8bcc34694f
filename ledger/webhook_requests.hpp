// The webhook endpoint POST bodies (contract section 10), validated into
// typed fields and then into the command mr_write receives as jsonb. The
// endpoint id and the sealed secret come from the glue (WebhookSecrets in
// ledger/api.hpp), never from the body.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ledger/errors.hpp"
#include "ledger/write_requests.hpp"

namespace mr::ledger {

// Every event type, as contract section 10's table names them.
inline constexpr std::array<std::string_view, 9> kEventTypes = {
    "member.created",       "member.updated",       "member.closed",
    "transaction.settled",  "transaction.reversed", "redemption.created",
    "redemption.completed", "redemption.failed",    "points.adjusted"};

bool is_event_type(std::string_view type);
// "member.created, member.updated, ..." for field messages.
std::string event_type_list();

inline constexpr std::size_t kMaxWebhookUrl = 2048;
inline constexpr std::size_t kMaxWebhookDescription = 256;

// Why `url` cannot be a webhook endpoint's address, or nullopt when it can:
// an absolute http(s) URL of printable ASCII, at most 2048 bytes, with a
// host, no user information and no fragment. `https://` only, and no
// localhost and no IP literal the delivery engine would refuse to connect
// to (ledger/address_policy.hpp, whatever its spelling), unless `sandbox`.
// (The engine checks the address a name resolves to at connect time; this
// only refuses early what can never work.)
std::optional<std::string> webhook_url_problem(std::string_view url, bool sandbox);

enum class WebhookOp { create, update, rotate, remove, replay };

// The mr_write operation of each: webhook_create ... webhook_replay.
std::string_view webhook_op_name(WebhookOp op);

struct WebhookBody {
  std::string partner_ref;
  std::optional<std::string> url;
  // Known types, each once, in the order first sent; empty: every type.
  std::optional<std::vector<std::string>> event_types;
  // Present with nullopt inside: clear it (null or "" sent).
  std::optional<std::optional<std::string>> description;
  std::optional<std::string> status;  // update: enabled | disabled
  std::optional<std::string> since;   // replay: RFC 3339 UTC
};

// The body of `op`: create {partnerRef, url, eventTypes?, description?},
// update {partnerRef, url?, eventTypes?, description?, status?}, rotate and
// remove {partnerRef}, replay {partnerRef, since}. Unknown fields are
// ignored; clubId anywhere is invalid_request. `environment` is the
// deployment's ("sandbox" allows http:// and loopback URLs).
std::variant<Error, WebhookBody> parse_webhook_body(WebhookOp op, std::string_view body,
                                                    std::string_view environment);

// mr_write's command for a parsed body: the body's fields, the endpoint id
// and, for create and rotate, the sealed secret.
WriteCommand webhook_command(WebhookOp op, const WebhookBody& body, std::string_view endpoint_id,
                             std::string_view secret_sealed = {});

}  // namespace mr::ledger
