// Two pods on one machine for the pods tests: pod b's PostgreSQL cluster
// (tools/pod-cluster.sh), mrctl and psql against a given
// database, a club with its pool and a sandbox key, and mr_write run by SQL.
#pragma once

#include <criterion/criterion.h>
#include <unistd.h>

#include <string>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/own_node.hpp"

namespace mr::test {

inline std::string mrctl(const std::string& dsn, const std::string& args) {
  const Run r = run("'" + env("MR_MRCTL") + "' --dsn '" + dsn + "' --master-key '" + env("MR_MASTER_KEY_FILE") +
                    "' " + args);
  cr_assert_eq(r.rc, 0, "mrctl %s: %s", args.c_str(), r.out.c_str());
  return r.out;
}

// Pod b's PostgreSQL, stopped and removed when the test ends.
struct PodCluster {
  std::string dir = "/tmp/mr-pod-b-" + std::to_string(::getpid());
  std::string script = env("MR_REPO") + "/tools/pod-cluster.sh";
  std::string conninfo;
  PodCluster() {
    const Run r = run("'" + script + "' up '" + dir + "' " + std::to_string(free_port()));
    cr_assert_eq(r.rc, 0, "%s", r.out.c_str());
    conninfo = r.out.substr(0, r.out.find('\n'));
  }
  ~PodCluster() { run("'" + script + "' down '" + dir + "'"); }
  void stop() const { cr_assert_eq(run("'" + script + "' stop '" + dir + "'").rc, 0); }
  void start() const { cr_assert_eq(run("'" + script + "' start '" + dir + "'").rc, 0); }
  // Migrated, then named pod b in `catalogue`'s directory.
  void add_to(const std::string& catalogue) const {
    const Run migrated = run("'" + env("MR_MRCTL") + "' migrate --dsn '" + conninfo + "'");
    cr_assert_eq(migrated.rc, 0, "%s", migrated.out.c_str());
    mrctl(catalogue, "pod add --pod b --conninfo '" + conninfo + "'");
  }
};

inline std::string psql_value(const std::string& dsn, const std::string& sql) {
  const Run r = run("psql '" + dsn + "' -XqAtc \"" + sql + "\"");
  cr_assert_eq(r.rc, 0, "%s", r.out.c_str());
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

inline std::string json_field(const std::string& json, const std::string& name) {
  const auto d = parse_json(json);
  cr_assert(d.IsObject() && d.HasMember(name.c_str()) && d[name.c_str()].IsString(), "%s", json.c_str());
  return d[name.c_str()].GetString();
}

struct Club {
  std::string ref, key_id, secret;
};

inline Club make_club(const std::string& catalogue, const std::string& ref, const std::string& pod_flag) {
  mrctl(catalogue, "club create --ref " + ref + " --name '" + ref + "' --earn-rate-bp 100 --currencies GBP " +
                       pod_flag);
  mrctl(catalogue, "pool topup --ref " + ref + " --points 1000000000");
  const std::string key = mrctl(catalogue, "key issue --ref " + ref + " --env sandbox");
  return {ref, json_field(key, "keyId"), json_field(key, "secret")};
}

// The catalogue's database (pod home), migrated, and pod b in its directory.
struct TwoPods {
  Database home;
  PodCluster b;
  explicit TwoPods(const std::string& name) : home(name) {
    cr_assert_eq(home.migrate().rc, 0);
    b.add_to(home.dsn());
  }
};

inline std::string club_id_of(const std::string& dsn, const std::string& ref) {
  return psql_value(dsn, "SELECT club_id FROM clubs WHERE partner_ref = '" + ref + "'");
}

// A node of its own whose catalogue and ledger are `dsn` (pod home's);
// `delivering`: it delivers webhooks within seconds, as the pods tests wait.
inline NodeConf home_node_conf(const std::string& dsn, bool delivering = false) {
  NodeConf conf;
  conf.catalogue_dsn = dsn;
  conf.ledger_dsn = dsn;
  if (delivering) conf.webhooks = "mr_webhook_poll 1s; mr_webhook_schedule 0 1s 1s 1s; mr_webhook_timeout 2s;";
  return conf;
}

// A webhook endpoint of club `ref` posting to `url`, created through the API.
inline void add_endpoint(mr::MrClient& c, const std::string& ref, const std::string& url) {
  const auto created =
      c.post("/api/v1/webhook-endpoints", R"({"partnerRef":")" + ref + R"(","url":")" + url + R"("})", unique("we"));
  cr_assert_eq(created.status, 201, "%s", created.body.c_str());
}

// mr_write of club `id` (partner `ref`) as SQL selecting its outcome; the
// command is `cmd` (jsonb_build_object's arguments) with the partnerRef.
inline std::string write_sql(const std::string& id, const std::string& ref, const std::string& op,
                             const std::string& key, const std::string& cmd) {
  return "SELECT mr_write('" + op + "', " + id + ", '" + ref + "', '" + key + "', 'f', 'r', " +
         "jsonb_build_object('partnerRef', '" + ref + "', " + cmd + ")) ->> 'outcome'";
}

// The command for write_sql of member m1 joining.
inline const std::string kMemberM1 = "'externalMemberId', 'm1', 'firstName', 'A', 'lastName', 'B', 'email', 'a@b.c'";

// A club of pod home (make_club with `flags`) and its member m1, joined by
// SQL (idempotency key k1): how the tests of a move begin.
struct ClubWithMember {
  Club club;
  std::string id;  // clubs.club_id
};

inline ClubWithMember club_with_member(const TwoPods& pods, const std::string& ref, const std::string& flags = "") {
  ClubWithMember made{make_club(pods.home.dsn(), ref, flags), club_id_of(pods.home.dsn(), ref)};
  cr_assert_eq(psql_value(pods.home.dsn(), write_sql(made.id, ref, "member", "k1", kMemberM1)),
               std::string("created"));
  return made;
}

}  // namespace mr::test
