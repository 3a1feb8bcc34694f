#include "keys/key_catalogue.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <new>

#include "pg/blocking_pg.hpp"

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

std::string_view KeyCatalogue::pod_name(std::uint32_t pod) const {
  if (pod == 0) return kHomePod;
  return pod <= pods_.size() ? std::string_view(pods_[pod - 1].name) : std::string_view();
}

std::optional<std::string> pod_conninfo_problem(std::string_view conninfo) {
  // Parse problems come back from here too.
  if (auto host = pg::host_needing_resolution(conninfo)) {
    return *host + " (nginx's workers never resolve names: give hostaddr=<its address>)";
  }
  const std::string text(conninfo);
  std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> options(PQconninfoParse(text.c_str(), nullptr),
                                                                          PQconninfoFree);
  if (!options) return std::string("it does not parse");
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->val != nullptr && std::string_view(o->keyword) == "password") {
      return std::string("it carries a password (the directory is readable by the API role): give it in each "
                         "node's passfile");
    }
  }
  return std::nullopt;
}

std::optional<KeyEntry> make_key_entry(std::string key_id, std::string secret, std::int64_t club_id,
                                       std::string partner_ref, std::string& err, std::uint32_t pod) {
  // HMAC accepts an empty key, which anyone can sign with: a key without
  // its secret must never verify a request.
  if (secret.empty()) {
    err = "key " + key_id + " has an empty secret";
    return std::nullopt;
  }
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
  e.pod = pod;
  return e;
}

namespace {

// True when the database's schema is at least the one these modules need.
bool schema_ready(PGconn* conn, int required_schema, bool& schema_behind, std::string& err) {
  if (required_schema <= 0) return true;
  const auto version = schema_version(conn, err);
  if (!version) return false;
  if (*version < required_schema) {
    schema_behind = true;
    err = "the database's schema is at migration " + std::to_string(*version) + ", these modules need " +
          std::to_string(required_schema) + ": run `mrctl migrate` (the mrctl of this release) on it";
    return false;
  }
  return true;
}

// The pods' directory in its order (a KeyEntry's pod is its index + 1);
// every conninfo must be one a worker can use without blocking.
std::optional<std::vector<PodAddress>> read_directory(const PGresult* pods, std::string& err) {
  std::vector<PodAddress> directory;
  for (int i = 0; i < PQntuples(pods); ++i) {
    PodAddress pod{pg::value(pods, i, 0), pg::value(pods, i, 1)};
    if (auto problem = pod_conninfo_problem(pod.conninfo)) {
      err = "pod " + pod.name + "'s conninfo cannot serve: " + *problem + " (mrctl pod set --pod " + pod.name +
            " --conninfo ...)";
      return std::nullopt;
    }
    directory.push_back(std::move(pod));
  }
  return directory;
}

// Row i of the keys' query (key_id, secret_sealed, club_id, partner_ref,
// pod) as an entry, its secret opened and its pod an index in directory.
std::optional<KeyEntry> key_of_row(const PGresult* r, int i, const MasterKey& master,
                                   const std::vector<PodAddress>& directory, std::string& err) {
  std::string key_id = pg::value(r, i, 0);
  // The key id is the AAD: a sealed secret copied onto another row fails.
  auto secret = open(master, pg::unescape_bytea(r, i, 1), key_id);
  if (!secret) {
    err = "the secret of key " + key_id + " does not open with this master key";
    return std::nullopt;
  }
  const std::string id = pg::value(r, i, 2);
  std::int64_t club_id = 0;
  if (std::from_chars(id.data(), id.data() + id.size(), club_id).ptr != id.data() + id.size()) {
    OPENSSL_cleanse(secret->data(), secret->size());
    err = "club id \"" + id + "\" of key " + key_id + " is not an integer";
    return std::nullopt;
  }
  std::uint32_t pod = 0;
  if (!PQgetisnull(r, i, 4)) {
    const std::string name = pg::value(r, i, 4);
    const auto at = std::find_if(directory.begin(), directory.end(), [&](const PodAddress& p) { return p.name == name; });
    if (at == directory.end()) {  // the foreign key forbids it; a snapshot read keeps it so
      OPENSSL_cleanse(secret->data(), secret->size());
      err = "club " + id + " names pod " + name + ", which the directory does not hold";
      return std::nullopt;
    }
    pod = static_cast<std::uint32_t>(at - directory.begin()) + 1;
  }
  return make_key_entry(std::move(key_id), std::move(*secret), club_id, pg::value(r, i, 3), err, pod);
}

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
  if (!schema_ready(conn.get(), required_schema, schema_behind, err)) return std::nullopt;
  // The keys and the directory as of one snapshot: a club moved between
  // the two reads would otherwise be routed by a stale row.
  if (!pg::exec(conn.get(), "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", {}, err)) return std::nullopt;
  auto pods = pg::exec(conn.get(), "SELECT pod, conninfo FROM pods ORDER BY pod", {}, err);
  if (!pods) return std::nullopt;
  auto r = pg::exec(conn.get(),
                    "SELECT k.key_id, k.secret_sealed, k.club_id, c.partner_ref, c.pod "
                    "FROM api_keys k JOIN clubs c USING (club_id) "
                    "WHERE k.status = 'active' AND c.status = 'active' AND k.environment = $1",
                    {std::string(environment)}, err);
  if (!r) return std::nullopt;
  auto directory = read_directory(pods.get(), err);
  if (!directory) return std::nullopt;
  KeyCatalogue catalogue;
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    auto entry = key_of_row(r.get(), i, master, *directory, err);
    if (!entry) return std::nullopt;
    catalogue.add(std::move(*entry));
  }
  catalogue.set_pods(std::move(*directory));
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
