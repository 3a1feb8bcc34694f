// mrctl key issue|revoke|list. A secret is printed once, at issue, and
// stored sealed under the master key. Keys take effect on nginx reload.
#include <iostream>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "tools/mrctl/command.hpp"

namespace mr::ctl {
namespace {

int key_issue(Context& ctx) {
  const std::string ref = ctx.required("ref"), env = ctx.required("env");
  if (env != "sandbox" && env != "production") throw Failure{"--env is sandbox or production", 2};
  const MasterKey& master = ctx.master_key();
  const std::string key_id = new_key_id(env), secret = new_secret();
  if (key_id.empty() || secret.empty()) throw Failure{"no random bytes from OpenSSL"};
  const std::string sealed = seal(master, secret, key_id);
  if (sealed.empty()) throw Failure{"cannot seal the secret"};
  ctx.in_transaction([&] {
    // The club row lock serialises issuers: at most two active keys per
    // club and environment, so rotation overlaps but never piles up.
    auto club = ctx.exec("SELECT club_id FROM clubs WHERE partner_ref = $1 FOR UPDATE", {ref});
    if (PQntuples(club.get()) == 0) throw Failure{"no club " + ref};
    const std::string club_id = pg::value(club.get(), 0, 0);
    auto count = ctx.exec("SELECT count(*) FROM api_keys WHERE club_id = $1 AND environment = $2 AND status = 'active'",
                          {club_id, env});
    if (std::stoi(pg::value(count.get(), 0, 0)) >= 2) {
      throw Failure{"club " + ref + " already has two active " + env + " keys; revoke one first"};
    }
    ctx.exec("INSERT INTO api_keys (key_id, club_id, environment, secret_sealed) VALUES ($1, $2, $3, $4)",
             {key_id, club_id, env, sealed}, {3});
  });
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("keyId");
  w.String(key_id.c_str());
  w.Key("secret");
  w.String(secret.c_str());
  w.Key("environment");
  w.String(env.c_str());
  w.EndObject();
  std::cout << out.GetString() << "\n";
  return 0;
}

int key_revoke(Context& ctx) {
  const std::string id = ctx.required("key-id");
  auto r = ctx.exec("UPDATE api_keys SET status = 'revoked', revoked_at = coalesce(revoked_at, now()) "
                    "WHERE key_id = $1 RETURNING key_id",
                    {id});
  if (PQntuples(r.get()) == 0) throw Failure{"no key " + id};
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("keyId");
  w.String(id.data(), static_cast<rapidjson::SizeType>(id.size()));
  w.Key("status");
  w.String("revoked");
  w.EndObject();
  std::cout << out.GetString() << "\n";
  return 0;
}

int key_list(Context& ctx) {
  auto r = ctx.exec(
      "SELECT coalesce(jsonb_agg(jsonb_build_object('keyId', k.key_id, 'environment', k.environment, "
      "'status', k.status, 'createdAt', k.created_at, 'revokedAt', k.revoked_at) ORDER BY k.created_at) FILTER (WHERE k.key_id IS NOT NULL), "
      "'[]'::jsonb) FROM clubs c LEFT JOIN api_keys k USING (club_id) WHERE c.partner_ref = $1 "
      "HAVING count(c.club_id) > 0",
      {ctx.required("ref")});
  if (PQntuples(r.get()) == 0) throw Failure{"no club " + ctx.required("ref")};
  print_json_result(r.get());
  return 0;
}

Register r1("key issue", "--ref REF --env sandbox|production",
            "issue an API key (at most two active per club and environment); prints the secret once", key_issue);
Register r2("key revoke", "--key-id ID", "revoke a key; nginx refuses it after the next reload", key_revoke);
Register r3("key list", "--ref REF", "list a club's keys (never their secrets)", key_list);

}  // namespace
}  // namespace mr::ctl
