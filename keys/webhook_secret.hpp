// Webhook endpoint secrets (contract section 10): made here, sealed at rest
// under a key derived from the master key (the endpoint id as AAD, so a
// sealed secret opens only for its own endpoint), opened to render a create
// or rotate answer and to sign deliveries. No nginx header: the partner API
// glue and the delivery engine both use it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "keys/secret_box.hpp"

namespace mr {

inline constexpr std::string_view kWebhookSecretPrefix = "whsec_";
inline constexpr std::string_view kWebhookEndpointIdPrefix = "we_";

// The key webhook secrets are sealed with: derive_key(master, "mr webhook
// secret v1"), never the master key itself. nullopt when OpenSSL fails.
std::optional<MasterKey> webhook_sealing_key(const MasterKey& master);

// "whsec_" + standard base64 (with padding) of 32 random bytes; "" when the
// random generator fails (callers must refuse).
std::string new_webhook_secret();

// Standard base64 of seal(secret) with the endpoint id as AAD; "" when
// OpenSSL fails.
std::string seal_webhook_secret(const MasterKey& sealing_key, std::string_view endpoint_id, std::string_view secret);

// The secret back; nullopt for anything that is not base64 or does not
// authenticate under this key and endpoint id.
std::optional<std::string> open_webhook_secret(const MasterKey& sealing_key, std::string_view endpoint_id,
                                               std::string_view sealed_b64);

// The HMAC key of Standard Webhooks: the base64-decoded bytes after
// "whsec_"; nullopt when the secret has another shape.
std::optional<std::string> webhook_signing_key(std::string_view secret);

// "we_" + 12 hex digits of Unix milliseconds + 16 random hex digits: opaque
// and time-ordered as every id the service issues; "" when the random
// generator fails.
std::string new_endpoint_id();

// Standard base64 (RFC 4648 section 4, padded) through OpenSSL's EVP
// encoder; decode refuses anything else (whitespace, base64url, bad
// padding).
std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace mr
