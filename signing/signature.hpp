// The signing rules of contract section 2, one copy for both sides: the
// partner's client (client/, mr-sign) signs with them and the auth edge
// (modules/auth/auth_core) checks with them. No nginx header, no database.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "signing/hmac_key.hpp"

namespace mr::signing {

// The canonical string's pieces, in order, for a method already upper
// case: signed as one string by clients, hashed piece by piece by the edge.
using CanonicalPieces = std::array<std::string_view, 7>;
CanonicalPieces canonical_pieces(std::string_view timestamp, std::string_view upper_method, std::string_view path,
                                 std::string_view body_sha256_hex);

// timestamp \n METHOD \n path \n body_sha256_hex
std::string canonical_string(std::string_view timestamp, std::string_view method, std::string_view path,
                             std::string_view body_sha256_hex);

// "v1=" + lower-case hex HMAC-SHA256 keyed with the secret's bytes. Throws
// std::runtime_error when OpenSSL fails: never an empty or wrong signature.
std::string sign(const HmacKey& key, std::string_view canonical);
std::string sign(std::string_view secret, std::string_view canonical);
// The MAC a header names: "v1=" + 64 hex digits, either case; else nullopt.
std::optional<HmacDigest> parse_signature(std::string_view header);
// mac_failed: OpenSSL could not compute the MAC, which is the server's
// fault (internal_error), not the client's (invalid_signature).
enum class SignatureCheck { matches, differs, mac_failed };
SignatureCheck check_signature(const HmacKey& key, std::string_view canonical, std::string_view header);
// The same over the canonical string's pieces, never joined (the edge's path).
SignatureCheck check_signature(const HmacKey& key, std::span<const std::string_view> canonical,
                               std::string_view header);
// The same for a header parse_signature already read: the edge keeps the
// MAC it checked (a POST's signature serves one idempotency key).
SignatureCheck check_signature(const HmacKey& key, std::span<const std::string_view> canonical,
                               const HmacDigest& given);

// X-MR-Timestamp for `t`: RFC 3339 in UTC to the second, YYYY-MM-DDTHH:MM:SSZ.
std::string format_timestamp(std::chrono::system_clock::time_point t);
// The same to the microsecond, YYYY-MM-DDTHH:MM:SS.uuuuuuZ: what a client
// signs a new request with. A POST's signature serves one idempotency key
// (contract section 2), so two calls with one body must not sign the same
// string, even when the first was answered within a millisecond.
std::string format_timestamp_us(std::chrono::system_clock::time_point t);

}  // namespace mr::signing
