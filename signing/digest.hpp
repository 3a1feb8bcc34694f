// SHA-256 (OpenSSL's), and the two digests of a request:
// the body's (signed, contract section 2) and the idempotency fingerprint
// (SHA-256 of method, path and body, contract section 3). The auth edge
// hashes the body; the fingerprint is computed once, by the first module
// that needs it (modules/common/request_context). No nginx header: unit
// tests, mr-sign and the tests link it.
#pragma once

#include <array>
#include <initializer_list>
#include <string>
#include <string_view>

namespace mr {

std::string to_hex(const unsigned char* data, std::size_t len);  // lower-case
void to_hex(const unsigned char* data, std::size_t len, char* out);  // 2 * len chars, lower-case

// A SHA-256 as lower-case hex, held inline: no allocation per request.
using Sha256Hex = std::array<char, 64>;
inline std::string_view view(const Sha256Hex& hex) { return {hex.data(), hex.size()}; }

// SHA-256 of the pieces one after another, lower-case hex: held inline (the
// hot path, no allocation), or as a string. Throws std::runtime_error when
// OpenSSL fails: never a wrong digest.
Sha256Hex sha256_hex_inline(std::initializer_list<std::string_view> pieces);
inline Sha256Hex sha256_hex_inline(std::string_view data) { return sha256_hex_inline({data}); }
std::string sha256_hex(std::initializer_list<std::string_view> pieces);
inline std::string sha256_hex(std::string_view data) { return sha256_hex({data}); }

// The idempotency fingerprint: SHA-256 of method \n path \n body.
std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body);

}  // namespace mr
