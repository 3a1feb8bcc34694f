// mrctl's command table, options and the context commands run in. Each
// cmd_*.cpp registers its commands with a static Register object.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pg/blocking_pg.hpp"
#include "keys/key_catalogue.hpp"
#include "keys/secret_box.hpp"
#include "ledger/json_merge.hpp"

namespace mr::ctl {

// Thrown by commands for a one-line error on stderr; main() catches it.
struct Failure {
  std::string message;
  int exit_code = 1;
};

class Context {
 public:
  Context(std::map<std::string, std::string> options) : options_(std::move(options)) {}

  std::optional<std::string> opt(const std::string& name) const;
  std::string required(const std::string& name) const;
  std::int64_t integer(const std::string& name, std::int64_t min, std::int64_t max) const;
  bool has(const std::string& name) const { return options_.contains(name); }

  // The catalogue's database (clubs, keys, the pods directory), which is
  // also the home pod's: --dsn or MR_DSN, opened on first use.
  PGconn* db();
  const MasterKey& master_key();   // --master-key or MR_MASTER_KEY_FILE

  // Pods (context_pods.cpp). A pod's database is reached with the
  // directory's conninfo, which carries no password: libpq finds it in
  // PGPASSFILE or ~/.pgpass (or PGPASSWORD) of the user running mrctl, and
  // a user where the conninfo names none in PGUSER; MR_POD_USER overrides
  // the conninfo's user (it names nginx's role, which may not migrate).
  //
  // The database that keeps club `ref`'s books (members, entries, pool,
  // cash, payouts, events, webhooks): its pod's, found from the catalogue,
  // or db() for a club of the home pod. Every command that reads or writes
  // a club's books goes through here. Throws "no club REF".
  PGconn* club_db(const std::string& ref);
  // The pod that club `ref` lives in ("home" for the catalogue's own).
  std::string club_pod(const std::string& ref);
  // Pod `name`'s database, connected on first use; "home" is db().
  PGconn* pod_db(const std::string& name);
  // The directory (table pods) in name order; empty before migration 018.
  const std::vector<PodAddress>& directory();
  // Every pod's name: "home" first, then the directory's.
  std::vector<std::string> pod_names();
  // `body` on every pod's database, home first. A pod that cannot be
  // reached or whose `body` throws is named on stderr ("mrctl: pod P: ...")
  // and the others still run; returns those that failed, with why. The
  // catalogue's own failure throws.
  std::map<std::string, std::string> for_each_pod(const std::function<void(const std::string& pod, PGconn* db)>& body);
  // The database whose `probe` (one statement, $1 = id) returns a row: ids
  // of payouts and endpoints are unique across pods. db() when none does,
  // so that the server function there names the unknown id; throws when a
  // pod that might hold it cannot be reached.
  PGconn* db_holding(std::string_view probe, const std::string& id, std::string_view what);

  // One statement on db() or on `conn`; throws Failure with the server's message.
  pg::Result exec(std::string_view sql, const std::vector<std::optional<std::string>>& params = {},
                  const std::vector<int>& binary = {});
  pg::Result exec(PGconn* conn, std::string_view sql, const std::vector<std::optional<std::string>>& params = {},
                  const std::vector<int>& binary = {});

  // BEGIN, `body`, COMMIT on db() or on `conn`; ROLLBACK and rethrow if
  // `body` throws.
  void in_transaction(const std::function<void()>& body);
  void in_transaction(PGconn* conn, const std::function<void()>& body);

 private:
  std::map<std::string, std::string> options_;
  pg::Conn conn_;
  std::optional<MasterKey> master_;
  std::map<std::string, pg::Conn, std::less<>> pods_;  // by name, "home" never
  std::optional<std::vector<PodAddress>> directory_;
  bool has_directory_ = false;  // migration 018 applied to the catalogue
  // Club `ref`'s pod and club_id, from the catalogue; throws "no club REF".
  std::pair<std::string, std::string> locate(const std::string& ref);
};

using CommandFn = std::function<int(Context&)>;

struct Command {
  std::string words;  // "club create"
  std::string usage;
  std::string summary;  // one line for `mrctl <words> --help`
  CommandFn run;
};

std::vector<Command>& registry();

struct Register {
  Register(std::string words, std::string usage, std::string summary, CommandFn run) {
    registry().push_back({std::move(words), std::move(usage), std::move(summary), std::move(run)});
  }
  Register(std::string words, std::string usage, CommandFn run)
      : Register(std::move(words), std::move(usage), {}, std::move(run)) {}
};

// Prints a JSON document from PostgreSQL (row 0, column 0) with a newline.
void print_json_result(const PGresult* r);

// A connection to pod `name` at `conninfo` (context_pods.cpp); throws
// "pod NAME is unreachable: ..." when it cannot connect.
pg::Conn connect_pod(const std::string& name, const std::string& conninfo);

// `sql` (a JSON array in row 0, column 0) on every pod, printed as one
// array: merged in `list`'s order (ledger/json_merge.hpp), cut to `limit`
// (0: all). Returns the exit status: 1 when a pod failed (its part is
// missing; stderr names it).
int print_every_pods_list(Context& ctx, std::string_view sql, const std::vector<std::optional<std::string>>& params,
                          ledger::OpsList list, std::size_t limit);

// Validation shared by the commands.
void check_ref(const std::string& ref);
void check_currency(const std::string& cur);

}  // namespace mr::ctl
