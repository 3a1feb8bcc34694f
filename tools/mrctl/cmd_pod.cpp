// mrctl pod add|list|set: the directory of pods (migration 018, table
// pods in the catalogue's database) that nginx's catalogue load reads at
// every start and reload. A pod is a whole database with every migration;
// what is recorded here is what nginx's workers will connect to, so it is
// checked as they would use it (keys/key_catalogue.hpp,
// pod_conninfo_problem) and connected to before it is written.
#include <iostream>
#include <map>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ledger/sql/migrations.hpp"
#include "tools/mrctl/command.hpp"
#include "tools/mrctl/pod_name.hpp"
#include "tools/mrctl/schema.hpp"

namespace mr::ctl {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void check_name(const std::string& name) {
  if (auto problem = pod_name_problem(name)) throw Failure{"--pod: " + *problem, 2};
}

void check_conninfo(const std::string& conninfo) {
  if (auto problem = pod_conninfo_problem(conninfo)) throw Failure{"--conninfo cannot serve nginx's workers: " + *problem, 2};
}

// Pod commands need the directory: a catalogue before migration 018 has none.
void require_directory(Context& ctx) {
  if (pg::value(ctx.exec("SELECT to_regclass('pods') IS NOT NULL").get(), 0, 0) != "t") {
    throw Failure{"the catalogue's database has no pods directory (migration 018): run mrctl migrate first"};
  }
}

// Which database a connection reached: the cluster's system identifier and
// the database's name. nullopt when the role may not read the cluster's
// control data (then databases are not compared).
std::optional<std::string> identity(Context& ctx, PGconn* conn) {
  try {
    auto r = ctx.exec(conn, "SELECT system_identifier::text || '/' || current_database() FROM pg_control_system()");
    return pg::value(r.get(), 0, 0);
  } catch (const Failure&) {
    return std::nullopt;
  }
}

// A pod's database must not be the catalogue's or another pod's: two names
// for one database would mix their clubs' books. Pods that cannot be
// reached now are not compared.
void check_distinct(Context& ctx, const std::string& name, const std::string& conninfo, PGconn* conn) {
  const auto mine = identity(ctx, conn);
  if (mine && mine == identity(ctx, ctx.db())) {
    throw Failure{"pod " + name + "'s conninfo reaches the catalogue's own database (the home pod)"};
  }
  for (const PodAddress& other : ctx.directory()) {
    if (other.name == name) continue;
    if (other.conninfo == conninfo) throw Failure{"pod " + other.name + " already has this conninfo"};
    if (!mine) continue;
    std::optional<std::string> theirs;
    try {
      theirs = identity(ctx, ctx.pod_db(other.name));
    } catch (const Failure&) {  // unreachable now: not compared
    }
    if (theirs == mine) throw Failure{"pod " + name + "'s conninfo reaches the database of pod " + other.name};
  }
}

int clubs_in(Context& ctx, PGconn* conn) {
  if (pg::value(ctx.exec(conn, "SELECT to_regclass('clubs') IS NOT NULL").get(), 0, 0) != "t") return 0;
  return std::stoi(pg::value(ctx.exec(conn, "SELECT count(*) FROM clubs").get(), 0, 0));
}

// The schema must be whole: nginx's workers call every function of the
// newest migration.
void require_schema(Context& ctx, const std::string& name, PGconn* conn, bool migrate) {
  const SchemaCheck schema = read_schema(ctx, conn);
  if (schema.current) return;
  if (schema.behind && migrate) {
    const auto all = migrations();
    migrate_database(ctx, conn, all.back().version, "pod " + name + " ");
    return;
  }
  throw Failure{"pod " + name + ": " + schema.problem +
                (schema.behind ? ": give --migrate true to migrate it first (or run mrctl migrate on it)" : "")};
}

// One pod as `pod list` shows it, and `pod add|set` print.
void write_pod(JsonWriter& w, Context& ctx, const std::string& name, const std::optional<std::string>& conninfo,
               std::int64_t clubs, const std::function<PGconn*()>& connect) {
  w.StartObject();
  w.Key("pod");
  w.String(name.c_str());
  w.Key("conninfo");
  conninfo ? w.String(conninfo->c_str()) : w.Null();
  w.Key("clubs");
  w.Int64(clubs);
  std::optional<SchemaCheck> schema;
  std::string problem;
  try {
    schema = read_schema(ctx, connect());
    if (!schema->current) problem = schema->problem;
  } catch (const Failure& f) {
    problem = f.message;
  }
  w.Key("reachable");
  w.Bool(schema.has_value());
  w.Key("version");
  schema ? w.Int(schema->version) : w.Null();
  w.Key("schemaCurrent");
  w.Bool(schema && schema->current);
  w.Key("problem");
  problem.empty() ? w.Null() : w.String(problem.c_str());
  w.EndObject();
}

int print_pod(Context& ctx, const std::string& name, const std::string& conninfo, PGconn* conn) {
  auto n = ctx.exec("SELECT count(*) FROM clubs WHERE pod = $1", {name});
  rapidjson::StringBuffer out;
  JsonWriter w(out);
  write_pod(w, ctx, name, conninfo, std::stoll(pg::value(n.get(), 0, 0)), [&] { return conn; });
  std::cout << out.GetString() << "\n";
  return 0;
}

bool migrate_flag(Context& ctx) {
  const auto v = ctx.opt("migrate");
  if (v && *v != "true" && *v != "false") throw Failure{"--migrate is true or false", 2};
  return v == "true";
}

int pod_add(Context& ctx) {
  const std::string name = ctx.required("pod"), conninfo = ctx.required("conninfo");
  check_name(name);
  check_conninfo(conninfo);
  const bool migrate = migrate_flag(ctx);
  require_directory(ctx);
  if (PQntuples(ctx.exec("SELECT 1 FROM pods WHERE pod = $1", {name}).get()) > 0) {
    throw Failure{"pod " + name + " already exists (mrctl pod set --pod " + name + " --conninfo ... changes it)"};
  }
  pg::Conn conn = connect_pod(name, conninfo);
  check_distinct(ctx, name, conninfo, conn.get());
  require_schema(ctx, name, conn.get(), migrate);
  // A new pod starts empty: rows already there are clubs the catalogue does
  // not know, whose ids its sequence may hand out again.
  if (const int n = clubs_in(ctx, conn.get()); n > 0) {
    throw Failure{"pod " + name + "'s database already holds " + std::to_string(n) + " clubs: a new pod starts empty"};
  }
  auto r = ctx.exec("INSERT INTO pods (pod, conninfo) VALUES ($1, $2) ON CONFLICT (pod) DO NOTHING RETURNING pod",
                    {name, conninfo});
  if (PQntuples(r.get()) == 0) throw Failure{"pod " + name + " already exists"};
  return print_pod(ctx, name, conninfo, conn.get());
}

int pod_list(Context& ctx) {
  require_directory(ctx);
  std::map<std::string, std::int64_t> clubs;
  auto counts = ctx.exec("SELECT coalesce(pod, 'home'), count(*) FROM clubs GROUP BY 1");
  for (int i = 0; i < PQntuples(counts.get()); ++i) {
    clubs[pg::value(counts.get(), i, 0)] = std::stoll(pg::value(counts.get(), i, 1));
  }
  rapidjson::StringBuffer out;
  JsonWriter w(out);
  w.StartArray();
  // The home pod's conninfo is nginx's mr_ledger_dsn, which mrctl does not
  // know (its own --dsn may carry a password): null.
  write_pod(w, ctx, std::string(kHomePod), std::nullopt, clubs[std::string(kHomePod)], [&] { return ctx.db(); });
  for (const PodAddress& pod : ctx.directory()) {
    write_pod(w, ctx, pod.name, pod.conninfo, clubs[pod.name], [&] { return ctx.pod_db(pod.name); });
  }
  w.EndArray();
  std::cout << out.GetString() << "\n";
  return 0;
}

// A new address for the same database (a new primary's address, say): the
// database must hold exactly the clubs the catalogue routes to the pod, so
// that a typo cannot send a pod's clubs to another database.
int pod_set(Context& ctx) {
  const std::string name = ctx.required("pod"), conninfo = ctx.required("conninfo");
  if (name == kHomePod) {
    throw Failure{"the home pod is the catalogue's own database: nginx's mr_ledger_dsn names it, not the directory", 2};
  }
  check_name(name);
  check_conninfo(conninfo);
  require_directory(ctx);
  pg::Conn conn;
  ctx.in_transaction([&] {
    // Locked: a club create --pod of this pod waits (it reads the row FOR SHARE).
    if (PQntuples(ctx.exec("SELECT 1 FROM pods WHERE pod = $1 FOR UPDATE", {name}).get()) == 0) {
      throw Failure{"no pod " + name + " (mrctl pod add adds one)"};
    }
    conn = connect_pod(name, conninfo);
    check_distinct(ctx, name, conninfo, conn.get());
    require_schema(ctx, name, conn.get(), false);
    auto ours = ctx.exec("SELECT club_id, partner_ref FROM clubs WHERE pod = $1 ORDER BY club_id", {name});
    const int n = PQntuples(ours.get());
    for (int i = 0; i < n; ++i) {
      const std::string id = pg::value(ours.get(), i, 0), ref = pg::value(ours.get(), i, 1);
      if (PQntuples(ctx.exec(conn.get(), "SELECT 1 FROM clubs WHERE club_id = $1 AND partner_ref = $2", {id, ref}).get()) == 0) {
        throw Failure{"the database at --conninfo lacks club " + ref + " (club_id " + id + ") of pod " + name +
                      ": not this pod's database"};
      }
    }
    if (n == 0 && clubs_in(ctx, conn.get()) > 0) {
      throw Failure{"pod " + name + " has no clubs but the database at --conninfo holds some: not this pod's database"};
    }
    ctx.exec("UPDATE pods SET conninfo = $2 WHERE pod = $1", {name, conninfo});
  });
  return print_pod(ctx, name, conninfo, conn.get());
}

Register r1("pod add", "--pod NAME --conninfo CONNINFO [--migrate true|false]",
            "add a pod (a database with the whole schema and no clubs yet) to the directory; nginx uses it after "
            "a reload",
            pod_add);
Register r2("pod list", "",
            "list the pods (home first) with their conninfo, clubs, and whether each answers with the whole schema",
            pod_list);
Register r3("pod set", "--pod NAME --conninfo CONNINFO",
            "change a pod's conninfo (the same database at another address); nginx uses it after a reload",
            pod_set);

}  // namespace
}  // namespace mr::ctl
