// Secrets at rest: AES-256-GCM under a 32-byte master key kept in a file of
// mode 0600, so a database dump alone does not reveal any API key secret.
// Also the shapes of key ids and secrets as issued.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace mr {

// Wiped from memory when it goes.
struct MasterKey {
  std::array<unsigned char, 32> bytes{};
  ~MasterKey();
};

// Refuses a file that breaks the private-file rule (keys/private_file.hpp:
// a regular file, no group or other bits, owned by this user or root).
std::optional<MasterKey> load_master_key(std::string_view path, std::string& err);

// A 32-byte key for another purpose, derived from the master key
// (HMAC-SHA256 of the label), so one file keeps one secret. nullopt when
// OpenSSL fails.
std::optional<std::array<unsigned char, 32>> derive_key(const MasterKey& master, std::string_view label);
bool create_master_key_file(std::string_view path, std::string& err);

// nonce(12) || ciphertext || tag(16); the AAD (the key id) binds a sealed
// secret to its row. seal gives "" when OpenSSL fails; open gives nullopt
// for anything that does not authenticate.
std::string seal(const MasterKey& key, std::string_view plaintext, std::string_view aad);
std::optional<std::string> open(const MasterKey& key, std::string_view sealed, std::string_view aad);

// Each returns "" when the random generator fails (callers must refuse).
std::string random_base64url(std::size_t bytes);       // unpadded
std::string new_key_id(std::string_view environment);  // mrk_sbx_... / mrk_prd_... + 24 chars
std::string new_secret();                              // 32 random bytes, base64url (43 chars)

}  // namespace mr
