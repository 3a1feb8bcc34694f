#include "keys/key_catalogue.hpp"

#include <openssl/crypto.h>

#include <charconv>
#include <new>

#include "keys/blocking_pg.hpp"

namespace mr {

KeyCatalogue::~KeyCatalogue() {
  for (auto& [id, entry] : keys_) OPENSSL_cleanse(entry.secret.data(), entry.secret.size());
}

const KeyEntry* KeyCatalogue::find(std::string_view key_id) const {
  auto it = keys_.find(key_id);
  return it == keys_.end() ? nullptr : &it->second;
}

void KeyCatalogue::add(KeyEntry entry) {
  std::string id = entry.key_id;
  keys_.insert_or_assign(std::move(id), std::move(entry));
}

std::optional<KeyEntry> make_key_entry(std::string key_id, std::string secret, std::int64_t club_id,
                                       std::string partner_ref, std::string& err) {
  KeyEntry e;
  e.key_id = std::move(key_id);
  e.secret = std::move(secret);
  e.hmac = std::make_shared<const HmacKey>(e.secret);
  if (!e.hmac->valid()) {
    OPENSSL_cleanse(e.secret.data(), e.secret.size());
    err = "OpenSSL cannot key HMAC-SHA256 for key " + e.key_id;
    return std::nullopt;
  }
  e.club_id = club_id;
  e.club_id_text = std::to_string(club_id);
  e.partner_ref = std::move(partner_ref);
  return e;
}

namespace {

std::optional<KeyCatalogue> load(std::string_view dsn, const MasterKey& master, std::string_view environment,
                                 int required_schema, bool& schema_behind, std::string& err) {
  if (environment != "sandbox" && environment != "production") {
    err = "environment must be sandbox or production, not \"" + std::string(environment) + "\"";
    return std::nullopt;
  }
  // nginx's master blocks here: a database that does not answer must not
  // hang a reload for long.
  auto conn = pg::connect(dsn, err, 5, "mr-key-catalogue");
  if (!conn) return std::nullopt;
  if (required_schema > 0) {
    const auto version = schema_version(conn.get(), err);
    if (!version) return std::nullopt;
    if (*version < required_schema) {
      schema_behind = true;
      err = "the database's schema is at migration " + std::to_string(*version) + ", these modules need " +
            std::to_string(required_schema) + ": run `mrctl migrate` (the mrctl of this release) on it";
      return std::nullopt;
    }
  }
  auto r = pg::exec(conn.get(),
                    "SELECT k.key_id, k.secret_sealed, k.club_id, c.partner_ref "
                    "FROM api_keys k JOIN clubs c USING (club_id) "
                    "WHERE k.status = 'active' AND c.status = 'active' AND k.environment = $1",
                    {std::string(environment)}, err);
  if (!r) return std::nullopt;
  KeyCatalogue catalogue;
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    std::string key_id = pg::value(r.get(), i, 0);
    // The key id is the AAD: a sealed secret copied onto another row fails.
    auto secret = open(master, pg::unescape_bytea(r.get(), i, 1), key_id);
    if (!secret) {
      err = "the secret of key " + key_id + " does not open with this master key";
      return std::nullopt;
    }
    const std::string id = pg::value(r.get(), i, 2);
    std::int64_t club_id = 0;
    if (std::from_chars(id.data(), id.data() + id.size(), club_id).ptr != id.data() + id.size()) {
      OPENSSL_cleanse(secret->data(), secret->size());
      err = "club id \"" + id + "\" of key " + key_id + " is not an integer";
      return std::nullopt;
    }
    auto entry = make_key_entry(std::move(key_id), std::move(*secret), club_id, pg::value(r.get(), i, 3), err);
    if (!entry) return std::nullopt;
    catalogue.add(std::move(*entry));
  }
  return catalogue;
}

}  // namespace

std::optional<int> schema_version(PGconn* conn, std::string& err) {
  auto exists = pg::exec(conn, "SELECT to_regclass('schema_migrations') IS NOT NULL", {}, err);
  if (!exists) return std::nullopt;
  if (pg::value(exists.get(), 0, 0) != "t") return 0;
  auto r = pg::exec(conn, "SELECT coalesce(max(version), 0) FROM schema_migrations", {}, err);
  if (!r) return std::nullopt;
  const std::string v = pg::value(r.get(), 0, 0);
  int version = 0;
  if (std::from_chars(v.data(), v.data() + v.size(), version).ptr != v.data() + v.size()) {
    err = "schema_migrations holds version \"" + v + "\"";
    return std::nullopt;
  }
  return version;
}

std::optional<KeyCatalogue> load_key_catalogue(std::string_view dsn, const MasterKey& master,
                                               std::string_view environment, std::string& err) {
  bool behind = false;
  return load_key_catalogue(dsn, master, environment, 0, behind, err);
}

std::optional<KeyCatalogue> load_key_catalogue(std::string_view dsn, const MasterKey& master,
                                               std::string_view environment, int required_schema,
                                               bool& schema_behind, std::string& err) {
  schema_behind = false;
  // Called from nginx's configuration code: nothing may escape.
  try {
    return load(dsn, master, environment, required_schema, schema_behind, err);
  } catch (const std::bad_alloc&) {
    err = "out of memory while loading the key catalogue";
    return std::nullopt;
  }
}

}  // namespace mr
