// What the two router targets (router, ops_api) share: the request read
// from the input, and what any prepared answer promises.
#pragma once

#include "ledger/api.hpp"
#include "ledger/json_fields.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace mr::fuzz {

// The glue's webhook secrets, faked: a fixed id and sealed text.
class FuzzWebhookSecrets final : public ledger::WebhookSecrets {
 public:
  std::string new_endpoint_id() const override { return "we_0123456789ab0123456789abcdef"; }
  std::string new_sealed_secret(std::string_view) const override { return "c2VhbGVkIHNlY3JldA=="; }
  std::optional<std::string> open(std::string_view, std::string_view sealed) const override {
    if (sealed != "c2VhbGVkIHNlY3JldA==") return std::nullopt;
    return "whsec_c2VjcmV0";
  }
};
inline const FuzzWebhookSecrets kFuzzWebhookSecrets;

// Input: method \n path \n query \n body; the edge's facts are fixed (the
// environment alternates with the input's length).
inline ledger::Request request_from(const std::uint8_t* data, std::size_t size) {
  const auto f = fields(bytes(data, size), 4);
  ledger::Request r;
  r.method = f[0];
  r.path = f[1];
  r.query = f[2];
  r.body = f[3];
  r.club_id = 7;
  r.partner_ref = "club-a";
  r.request_id = "rid";
  r.idempotency_key = "key-1";
  r.fingerprint = "fp";
  r.environment = size % 2 == 0 ? "production" : "sandbox";
  r.webhook_secrets = &kFuzzWebhookSecrets;
  return r;
}

// An immediate answer is a 4xx in valid JSON (never internal_error); a
// statement's parameters are text PostgreSQL accepts (valid UTF-8, no NUL).
inline void check_prepared(const ledger::Prepared& prepared) {
  if (const auto* r = std::get_if<ledger::Response>(&prepared)) {
    FUZZ_CHECK(r->status >= 400 && r->status < 500);
    FUZZ_CHECK(is_json_object(r->body));
    return;
  }
  const ledger::Query& q = std::get<std::unique_ptr<ledger::Pending>>(prepared)->query();
  FUZZ_CHECK(!q.sql.empty());
  for (const auto& p : q.params) {
    if (p) FUZZ_CHECK(ledger::is_storable_utf8(*p));
  }
}

}  // namespace mr::fuzz
