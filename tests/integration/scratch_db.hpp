// A database of a test's own on the fixture's PostgreSQL server, and mrctl
// run against it: for tests that migrate, plant broken rows or issue keys
// where the shared stack never sees them (catalogue_mrctl_test,
// migrate_test).
#pragma once

#include <libpq-fe.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <criterion/criterion.h>
#include <rapidjson/document.h>

#include "client/mr_client.hpp"
#include "tests/integration/shell_run.hpp"
#include "tests/integration/stack_env.hpp"

namespace mr::test {

// Whether mrctl gets the fixture's master key (--master-key): the commands
// that seal or open secrets need it, the others run without.
enum class MasterKey { with, without };

class ScratchDb {
 public:
  // A fresh database named <prefix>_<pid>_<n>, dropped when the test ends;
  // `migrated`: mrctl migrate has run on it.
  explicit ScratchDb(const std::string& prefix, bool migrated = false) : admin_(connect(env("MR_DSN"))) {
    static int counter = 0;
    name_ = prefix + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    query(admin_.get(), "DROP DATABASE IF EXISTS " + name_);
    query(admin_.get(), "CREATE DATABASE " + name_);
    host_ = PQhost(admin_.get());
    port_ = PQport(admin_.get());
    user_ = PQuser(admin_.get());
    dsn_ = "host=" + host_ + " port=" + port_ + " user=" + user_ + " dbname=" + name_ + " sslmode=disable";
    if (migrated) cr_assert_eq(mrctl({"migrate"}).code, 0);
  }
  ~ScratchDb() {
    conn_.reset();
    other_.reset();
    query(admin_.get(), "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
  }
  ScratchDb(const ScratchDb&) = delete;
  ScratchDb& operator=(const ScratchDb&) = delete;

  const std::string& dsn() const { return dsn_; }
  std::string uri() const { return "postgresql://" + user_ + "@" + host_ + ":" + port_ + "/" + name_ + "?sslmode=disable"; }

  // The shell line of mrctl on this database. Connection flags first: a
  // flag left without its value at the end of `args` must stay without one.
  std::string mrctl_line(const std::vector<std::string>& args, MasterKey key) const {
    std::string cmd = shell_quote(env("MR_MRCTL")) + " --dsn " + shell_quote(dsn_);
    if (key == MasterKey::with) cmd += " --master-key " + shell_quote(env("MR_MASTER_KEY_FILE"));
    for (const auto& a : args) cmd += " " + shell_quote(a);
    return cmd;
  }

  // mrctl on this database with the master key, its standard error in
  // Run::out after its output (refusals are one line there).
  Run mrctl(const std::vector<std::string>& args) const {
    return run(mrctl_line(args, MasterKey::with), Stderr::into_out);
  }

  // One statement on the test's session: the first row's first value (""
  // when no row); asserts success.
  std::string sql(const std::string& statement) { return query(session(conn_), statement); }
  // The primary message of a statement that must fail.
  std::string sql_error(const std::string& statement) {
    Result r(PQexec(session(conn_), statement.c_str()));
    cr_assert_eq(PQresultStatus(r.get()), PGRES_FATAL_ERROR, "%s succeeded", statement.c_str());
    return PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY);
  }
  // A statement on a second session, to look at the first one's locks.
  std::string sql_other(const std::string& statement) { return query(session(other_), statement); }

 private:
  struct ConnFree {
    void operator()(PGconn* c) const { PQfinish(c); }
  };
  using Conn = std::unique_ptr<PGconn, ConnFree>;
  struct ResultFree {
    void operator()(PGresult* r) const { PQclear(r); }
  };
  using Result = std::unique_ptr<PGresult, ResultFree>;

  static Conn connect(const std::string& dsn) {
    Conn c(PQconnectdb(dsn.c_str()));
    cr_assert(c && PQstatus(c.get()) == CONNECTION_OK, "%s", c ? PQerrorMessage(c.get()) : "no memory");
    PQsetNoticeProcessor(c.get(), [](void*, const char*) {}, nullptr);  // DROP IF EXISTS chatter
    return c;
  }
  static std::string query(PGconn* c, const std::string& statement) {
    Result r(PQexec(c, statement.c_str()));
    const auto st = PQresultStatus(r.get());
    cr_assert(st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK, "%s: %s", statement.c_str(), PQerrorMessage(c));
    return PQntuples(r.get()) > 0 && PQnfields(r.get()) > 0 ? PQgetvalue(r.get(), 0, 0) : "";
  }
  PGconn* session(Conn& c) {
    if (!c) c = connect(dsn_);
    return c.get();
  }

  Conn admin_, conn_, other_;
  std::string name_, host_, port_, user_, dsn_;
};

// mrctl's answer on standard output: exit 0 and a JSON document of `type`.
inline rapidjson::Document json_of(const Run& r, rapidjson::Type type = rapidjson::kObjectType) {
  cr_assert_eq(r.code, 0, "mrctl failed (%d): %s%s", r.code, r.out.c_str(), r.err.c_str());
  auto d = mr::parse_json(r.out);
  cr_assert(!d.HasParseError() && d.GetType() == type, "not a JSON %s: %s",
            type == rapidjson::kArrayType ? "array" : "object", r.out.c_str());
  return d;
}

}  // namespace mr::test
