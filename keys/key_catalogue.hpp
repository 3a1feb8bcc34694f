// The active API keys of one environment, with their clubs and the pods
// that keep those clubs' books, read from PostgreSQL by nginx's master at
// start and at every reload. Immutable after load; a lookup per request is
// one hash probe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "signing/hmac_key.hpp"
#include "ledger/pods.hpp"
#include "pg/pg_handles.hpp"
#include "keys/secret_box.hpp"

namespace mr {

struct KeyEntry {
  std::string key_id;
  std::string secret;  // decrypted, as issued
  std::int64_t club_id;
  std::string partner_ref;
  std::shared_ptr<const HmacKey> hmac;  // the secret keyed once for verification
  std::string club_id_text;  // club_id in decimal, written once for every log line
  // Where the club's books are: 0 the home pod (mr_ledger_dsn), i the
  // catalogue's pods()[i - 1].
  std::uint32_t pod = 0;
};

// A pod other than the home one, as the directory (table pods) names it.
struct PodAddress {
  std::string name;
  std::string conninfo;  // libpq's, without a password
  bool operator==(const PodAddress&) const = default;
};

class KeyCatalogue {
 public:
  KeyCatalogue() = default;
  KeyCatalogue(KeyCatalogue&&) = default;
  KeyCatalogue& operator=(KeyCatalogue&&) = default;
  ~KeyCatalogue();  // wipes the decrypted secrets

  const KeyEntry* find(std::string_view key_id) const;
  std::size_t size() const { return keys_.size(); }
  void add(KeyEntry entry);
  // The directory's pods, in name order; a key's `pod` indexes them from 1.
  const std::vector<PodAddress>& pods() const { return pods_; }
  void set_pods(std::vector<PodAddress> pods) { pods_ = std::move(pods); }
  // The name of pod index `pod` ("home" for 0); "" when out of range.
  std::string_view pod_name(std::uint32_t pod) const;
  // Every entry, in no particular order (the snapshot writes them all).
  template <typename F>
  void for_each(F&& f) const {
    for (const auto& [id, entry] : keys_) f(entry);
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, KeyEntry, Hash, std::equal_to<>> keys_;
  std::vector<PodAddress> pods_;
};


// An entry as the database or a snapshot holds it, its HMAC keyed once;
// nullopt + err when OpenSSL cannot key it.
std::optional<KeyEntry> make_key_entry(std::string key_id, std::string secret, std::int64_t club_id,
                                       std::string partner_ref, std::string& err, std::uint32_t pod = 0);

// Why a pod's conninfo cannot serve nginx's workers (libpq cannot parse it,
// it carries a password, or it names a host that would need resolving);
// nullopt when it can.
std::optional<std::string> pod_conninfo_problem(std::string_view conninfo);

// nullopt + err when the database cannot be read or a secret does not
// open: nginx then refuses the new configuration and keeps the old one.
std::optional<KeyCatalogue> load_key_catalogue(std::string_view dsn, const MasterKey& master,
                                               std::string_view environment, std::string& err);

// The same, first checking that the database's schema has every migration
// up to `required_schema` (schema_migrations): when it lacks some, nullopt
// with `schema_behind` set and err saying "run `mrctl migrate`". A database
// that could not be read leaves `schema_behind` false.
std::optional<KeyCatalogue> load_key_catalogue(std::string_view dsn, const MasterKey& master,
                                               std::string_view environment, int required_schema,
                                               bool& schema_behind, std::string& err);

// The newest migration recorded in schema_migrations, 0 when it has none or
// there is no such table; nullopt + err when the query fails.
std::optional<int> schema_version(PGconn* conn, std::string& err);

}  // namespace mr
