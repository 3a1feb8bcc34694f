// mrctl roles setup: the two roles of migration 017_least_privilege.sql on
// the catalogue's database and every pod's. The owner owns the database,
// the schema and everything in it (mrctl migrate and the operator's
// commands log in as it); the API role is what nginx logs in as, with
// exactly what the modules use (the table api_access). Run it as a
// superuser (or a role that may create roles and owns the database);
// running it again changes only what differs.
#include <libpq-fe.h>
#include <openssl/crypto.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "keys/private_file.hpp"
#include "tools/mrctl/command.hpp"
#include "tools/mrctl/privileges.hpp"

namespace mr::ctl {
namespace {

// migrate's lock: the roles are not set up while a migration runs.
constexpr const char* kLock = "SELECT pg_advisory_xact_lock(727274)";

// A secret (a conninfo with its password, a password), wiped when it goes.
class Secret {
 public:
  explicit Secret(std::string text) : text_(std::move(text)) {}
  Secret(const Secret&) = delete;
  Secret& operator=(const Secret&) = delete;
  ~Secret() { OPENSSL_cleanse(text_.data(), text_.size()); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

struct Role {
  std::string name;
  std::unique_ptr<Secret> password;  // none: the role's password is left as it is
};

// Plain lower-case names only: they go into SQL, DSNs and pg_hba.conf as
// they are, with nothing to quote.
void check_role_name(const std::string& what, const std::string& name) {
  static const std::regex plain("[a-z_][a-z0-9_]{0,62}");
  if (!std::regex_match(name, plain) || name.starts_with("pg_")) {
    throw Failure{what + " \"" + name + "\" must be 1 to 63 of a-z, 0-9 and _, not starting with a digit or pg_", 2};
  }
}

// The role of `kind` ("owner", "api"): --KIND-role names it; the conninfo
// it will log in with (--KIND-dsn-file, else MR_KIND_DSN, as mrctl's own
// --dsn-file and MR_DSN) names it too (user=) and gives its password
// (password=). The environment serves where the file is not readable by
// whoever runs mrctl, e.g. the database server's superuser
// (`runuser -u postgres`).
Role role_of(Context& ctx, const std::string& kind, const char* fallback) {
  const std::string file_flag = kind + "-dsn-file", env_name = kind == "api" ? "MR_API_DSN" : "MR_OWNER_DSN";
  std::unique_ptr<Secret> conninfo;
  std::string source;
  if (auto file = ctx.opt(file_flag)) {
    std::string err;
    auto text = read_private_file(*file, 64 * 1024, err);
    if (!text) throw Failure{"--" + file_flag + " " + err, 2};
    conninfo = std::make_unique<Secret>(std::move(*text));
    source = "--" + file_flag + " " + *file;
  } else if (const char* env = std::getenv(env_name.c_str()); env != nullptr && *env != 0) {
    conninfo = std::make_unique<Secret>(env);
    source = env_name;
  }
  std::optional<std::string> name = ctx.opt(kind + "-role");
  Role role;
  if (conninfo) {
    char* error = nullptr;
    std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> options(
        PQconninfoParse(conninfo->text().c_str(), &error), [](PQconninfoOption* o) {
          for (PQconninfoOption* p = o; p != nullptr && p->keyword != nullptr; ++p) {
            if (p->val != nullptr) OPENSSL_cleanse(p->val, std::strlen(p->val));
          }
          PQconninfoFree(o);
        });
    if (!options) {
      const std::string why = error != nullptr ? error : "out of memory";
      PQfreemem(error);
      throw Failure{source + " is not a conninfo: " + why.substr(0, why.find('\n')), 2};
    }
    std::optional<std::string> user;
    for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
      if (o->val == nullptr || *o->val == 0) continue;
      if (std::strcmp(o->keyword, "user") == 0) user = o->val;
      if (std::strcmp(o->keyword, "password") == 0) role.password = std::make_unique<Secret>(o->val);
    }
    if (!user) throw Failure{source + " names no user= (the " + kind + " role)", 2};
    if (name && *name != *user) {
      throw Failure{"--" + kind + "-role " + *name + " but " + source + " logs in as " + *user, 2};
    }
    name = user;
  }
  role.name = name.value_or(fallback);
  check_role_name(conninfo ? source + "'s user" : "--" + kind + "-role", role.name);
  return role;
}

bool yes(const pg::Result& r) { return pg::value(r.get(), 0, 0) == "t"; }

// Makes each role where it is missing and sets its password when one is
// given; names them in `created` and `passwords`.
void make_roles(Context& ctx, PGconn* conn, const Role& owner, const Role& api, std::vector<std::string>& created,
                std::vector<std::string>& passwords) {
  for (const Role* role : {&owner, &api}) {
    if (!yes(ctx.exec(conn, "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)", {role->name}))) {
      ctx.exec(conn, "CREATE ROLE \"" + role->name + "\" LOGIN");
      created.push_back(role->name);
    }
    if (role->password) {
      // The verifier is computed here: the password never reaches the
      // server (nor its log) in clear.
      std::unique_ptr<char, decltype(&PQfreemem)> verifier(
          PQencryptPasswordConn(conn, role->password->text().c_str(), role->name.c_str(), nullptr), PQfreemem);
      if (!verifier) throw Failure{std::string("cannot encrypt the password: ") + PQerrorMessage(conn)};
      std::unique_ptr<char, decltype(&PQfreemem)> literal(
          PQescapeLiteral(conn, verifier.get(), std::strlen(verifier.get())), PQfreemem);
      if (!literal) throw Failure{std::string("cannot quote the password: ") + PQerrorMessage(conn)};
      ctx.exec(conn, "ALTER ROLE \"" + role->name + "\" PASSWORD " + literal.get());
      passwords.push_back(role->name);
    }
  }
}

void refuse_unsafe_roles(Context& ctx, PGconn* conn, const Role& owner, const Role& api) {
  // Least privilege means nothing for a role that bypasses privileges,
  // or that may take them (membership, new roles or databases).
  auto a = ctx.exec(conn,
                    "SELECT concat_ws(', ', CASE WHEN rolsuper THEN 'is a superuser' END, "
                    "CASE WHEN rolbypassrls THEN 'bypasses row security' END, "
                    "CASE WHEN rolcreaterole THEN 'may create roles' END, "
                    "CASE WHEN rolcreatedb THEN 'may create databases' END, "
                    "CASE WHEN rolreplication THEN 'may replicate' END, "
                    "(SELECT 'is a member of ' || string_agg(g.rolname, ', ' ORDER BY g.rolname) "
                    " FROM pg_roles g WHERE g.rolname IN ($2, 'pg_read_all_data', 'pg_write_all_data') "
                    " AND pg_has_role(r.oid, g.oid, 'MEMBER'))) "
                    "FROM pg_roles r WHERE r.rolname = $1",
                    {api.name, owner.name});
  if (const std::string why = pg::value(a.get(), 0, 0); !why.empty()) {
    throw Failure{"the API role " + api.name + " " + why + ": give it none of that (ALTER ROLE, REVOKE) or name another"};
  }
  if (yes(ctx.exec(conn, "SELECT current_user = $1", {api.name}))) {
    throw Failure{"run roles setup as a superuser, not as the API role " + api.name};
  }
  if (yes(ctx.exec(conn, "SELECT rolsuper FROM pg_roles WHERE rolname = $1", {owner.name}))) {
    throw Failure{"the owner role " + owner.name + " is a superuser: the writers would run as one; name another"};
  }
}

// A former API role keeps nothing here.
void revoke_former_api(Context& ctx, PGconn* conn, const Role& api) {
  auto former = ctx.exec(conn,
                         "SELECT role_name FROM access_roles WHERE kind = 'api' AND role_name <> $1 "
                         "AND to_regrole(quote_ident(role_name)) IS NOT NULL",
                         {api.name});
  if (PQntuples(former.get()) > 0) {
    const std::string old = pg::value(former.get(), 0, 0);
    for (const char* what : {"ALL TABLES IN SCHEMA", "ALL SEQUENCES IN SCHEMA", "ALL ROUTINES IN SCHEMA", "SCHEMA"}) {
      auto revoke = ctx.exec(conn, "SELECT format('REVOKE ALL ON %s %I FROM %I', $1::text, current_schema(), $2::text)",
                             {what, old});
      ctx.exec(conn, pg::value(revoke.get(), 0, 0));
    }
  }
}

// The owner owns the database (and so PostgreSQL 15's public schema,
// whose owner is the database's) and the schema; nobody else creates
// in it. Each statement only when something differs.
void give_ownership(Context& ctx, PGconn* conn, const Role& owner, const Role& api) {
  auto steps = ctx.exec(conn,
                        "SELECT s FROM (VALUES "
                        "(1, CASE WHEN (SELECT datdba FROM pg_database WHERE datname = current_database()) "
                        "  <> $1::regrole THEN format('ALTER DATABASE %I OWNER TO %I', current_database(), $1) END), "
                        "(2, CASE WHEN (SELECT nspowner FROM pg_namespace WHERE oid = current_schema()::regnamespace) "
                        "  NOT IN ($1::regrole, 'pg_database_owner'::regrole) "
                        "  THEN format('ALTER SCHEMA %I OWNER TO %I', current_schema(), $1) END), "
                        "(3, CASE WHEN EXISTS (SELECT 1 FROM pg_namespace n, aclexplode(n.nspacl) x "
                        "  WHERE n.oid = current_schema()::regnamespace AND x.grantee = 0 "
                        "  AND x.privilege_type = 'CREATE') "
                        "  THEN format('REVOKE CREATE ON SCHEMA %I FROM PUBLIC', current_schema()) END), "
                        "(4, CASE WHEN NOT EXISTS (SELECT 1 FROM pg_database d, aclexplode(d.datacl) x "
                        "  WHERE d.datname = current_database() AND x.grantee = $2::regrole "
                        "  AND x.privilege_type = 'CONNECT') "
                        "  THEN format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), $2) END)"
                        ") v(n, s) WHERE s IS NOT NULL ORDER BY n",
                        {owner.name, api.name});
  for (int i = 0; i < PQntuples(steps.get()); ++i) ctx.exec(conn, pg::value(steps.get(), i, 0));
}

// The database's part of the answer: {"pod", "created", "passwordSet",
// "changed"}, the last as mr_apply_privileges() counted it.
void write_database_answer(rapidjson::Writer<rapidjson::StringBuffer>& w, const std::string& pod,
                           const std::vector<std::string>& created, const std::vector<std::string>& passwords,
                           const std::string& changes) {
  w.StartObject();
  w.Key("pod");
  w.String(pod.c_str());
  for (const auto& [key, names] : {std::pair{"created", &created}, std::pair{"passwordSet", &passwords}}) {
    w.Key(key);
    w.StartArray();
    for (const auto& n : *names) w.String(n.c_str());
    w.EndArray();
  }
  // {"owned": n, "definers": n, "public": n, "api": n}: what differed.
  rapidjson::Document changed;
  changed.Parse(changes.c_str(), changes.size());
  if (changed.HasParseError() || !changed.IsObject()) throw Failure{"mr_apply_privileges() answered " + changes};
  w.Key("changed");
  changed.Accept(w);
  w.EndObject();
}

// One database: the roles (made where missing), their checks, passwords,
// the database's and schema's owner, the record in access_roles and
// mr_apply_privileges(). Returns the database's part of the answer.
void setup_database(Context& ctx, PGconn* conn, const std::string& pod, const Role& owner, const Role& api,
                    rapidjson::Writer<rapidjson::StringBuffer>& w) {
  if (!yes(ctx.exec(conn, "SELECT to_regprocedure('mr_apply_privileges()') IS NOT NULL"))) {
    throw Failure{"the schema lacks migration 17 (017_least_privilege): run `mrctl migrate` first"};
  }
  std::vector<std::string> created, passwords;
  std::string changes;
  ctx.in_transaction(conn, [&] {
    ctx.exec(conn, kLock);
    make_roles(ctx, conn, owner, api, created, passwords);
    refuse_unsafe_roles(ctx, conn, owner, api);
    revoke_former_api(ctx, conn, api);
    give_ownership(ctx, conn, owner, api);
    ctx.exec(conn,
             "INSERT INTO access_roles (kind, role_name) VALUES ('owner', $1), ('api', $2) "
             "ON CONFLICT (kind) DO UPDATE SET role_name = EXCLUDED.role_name "
             "WHERE access_roles.role_name <> EXCLUDED.role_name",
             {owner.name, api.name});
    changes = pg::value(ctx.exec(conn, "SELECT mr_apply_privileges()").get(), 0, 0);
  });
  write_database_answer(w, pod, created, passwords, changes);
}

int roles_setup(Context& ctx) {
  const Role owner = role_of(ctx, "owner", "mr_owner");
  const Role api = role_of(ctx, "api", "mr_api");
  if (owner.name == api.name) throw Failure{"--owner-role and --api-role must be two roles", 2};
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("ownerRole");
  w.String(owner.name.c_str());
  w.Key("apiRole");
  w.String(api.name.c_str());
  w.Key("databases");
  w.StartArray();
  const auto failed = ctx.for_each_pod(
      [&](const std::string& pod, PGconn* conn) { setup_database(ctx, conn, pod, owner, api, w); });
  w.EndArray();
  w.EndObject();
  std::cout << out.GetString() << "\n";
  return failed.empty() ? 0 : 1;
}

Register r1("roles setup", "[--owner-role ROLE] [--api-role ROLE] [--owner-dsn-file FILE] [--api-dsn-file FILE]",
            "as a superuser, create or update the owner role (owns the database and the schema, runs mrctl; "
            "default mr_owner) and the API role nginx logs in as (default mr_api, exactly the privileges the "
            "modules use) on the catalogue's database and every pod's; a role's conninfo (--owner-dsn-file, "
            "--api-dsn-file, or MR_OWNER_DSN, MR_API_DSN) names it (user=) and sets its password (password=); "
            "run again, it changes only what differs",
            roles_setup);

}  // namespace

void keep_privileges(Context& ctx, PGconn* conn) {
  if (!yes(ctx.exec(conn, "SELECT to_regprocedure('mr_apply_privileges()') IS NOT NULL"))) return;
  try {
    ctx.exec(conn, "SELECT mr_apply_privileges()");
  } catch (const Failure& f) {
    throw Failure{"the privileges of the roles of `mrctl roles setup` cannot be kept: " + f.message +
                  " (another role made it: run mrctl migrate once as a superuser); nothing applied"};
  }
}

}  // namespace mr::ctl
