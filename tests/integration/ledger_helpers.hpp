// Request builders and readers shared by the ledger integration tests.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "tests/integration/stack_env.hpp"

namespace mr::test {

// JSON via RapidJSON so test ids are escaped like any client would.
class Json {
 public:
  Json() : w_(buf_) { w_.StartObject(); }
  Json& str(const char* k, const std::string& v) { w_.Key(k); w_.String(v.c_str()); return *this; }
  Json& num(const char* k, std::int64_t v) { w_.Key(k); w_.Int64(v); return *this; }
  Json& raw(const char* k, const std::string& json) {
    w_.Key(k);
    w_.RawValue(json.c_str(), json.size(), rapidjson::kObjectType);
    return *this;
  }
  std::string done() { w_.EndObject(); return buf_.GetString(); }
 private:
  rapidjson::StringBuffer buf_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
};

inline std::string member_body(const std::string& ref, const std::string& id, bool bank = true) {
  Json m;
  m.str("externalMemberId", id).str("firstName", "Ada").str("lastName", "Lovelace").str("email", "ada@example.com");
  if (bank) {
    m.raw("wallet", Json().str("provider", "bank").str("walletRef", "w-" + id)
                        .raw("bankAccount", Json().str("accountNumber", "12345678").str("sortCode", "112233")
                                                 .str("name", "Ada Lovelace").done()).done());
  }
  return Json().str("partnerRef", ref).raw("member", m.done()).done();
}

inline std::string settle_body(const std::string& ref, const std::string& member, const std::string& tx,
                               std::int64_t amount, const std::string& currency = "GBP") {
  return Json().str("partnerRef", ref).str("eventId", "evt-" + tx).str("occurredAt", "2026-11-20T10:00:00Z")
      .raw("member", Json().str("externalMemberId", member).done())
      .raw("transaction", Json().str("externalTransactionId", tx).str("merchantId", "m-42")
                               .str("merchantName", "Corner Shop").num("amountMinor", amount)
                               .str("currency", currency).str("settledAt", "2026-11-20T10:00:01Z").done())
      .done();
}

inline std::string reverse_body(const std::string& ref, const std::string& member, const std::string& tx,
                                std::int64_t amount /* <=0: whole remainder */, const std::string& currency = "GBP") {
  Json t;
  t.str("externalTransactionId", tx).str("currency", currency);
  if (amount > 0) t.num("amountMinor", amount);
  return Json().str("partnerRef", ref).str("eventId", unique("rev")).str("occurredAt", "2026-11-21T10:00:00Z")
      .raw("member", Json().str("externalMemberId", member).done()).raw("transaction", t.done()).done();
}

inline std::string redeem_body(const std::string& ref, const std::string& member, const std::string& request_id,
                               std::int64_t points, const std::string& currency = "GBP") {
  return Json().str("partnerRef", ref).str("requestId", request_id)
      .raw("member", Json().str("externalMemberId", member).done())
      .raw("redemption", Json().num("points", points).str("currency", currency).done())
      .done();
}

inline HttpResponse post(MrClient& c, const std::string& path, const std::string& body) {
  return c.post(path, body, unique("idem"));
}

// `n` new members of `ref`, external ids `prefix`-unique.
inline std::vector<std::string> onboard_members(MrClient& c, const std::string& ref, int n, const std::string& prefix) {
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    ids.push_back(unique(prefix));
    cr_assert_eq(post(c, "/api/v1/members", member_body(ref, ids.back())).status, 201);
  }
  return ids;
}

inline rapidjson::Document data_of(const HttpResponse& r) {
  rapidjson::Document d = parse_json(r.body);
  cr_assert(d.IsObject() && d.HasMember("ok") && d["ok"].IsTrue() && d.HasMember("data"),
            "not a success envelope (%ld): %s", r.status, r.body.c_str());
  rapidjson::Document out;
  out.CopyFrom(d["data"], out.GetAllocator());
  return out;
}

inline std::int64_t i64(const rapidjson::Value& v, const char* k) {
  cr_assert(v.IsObject() && v.HasMember(k) && v[k].IsInt64(), "no integer %s", k);
  return v[k].GetInt64();
}

inline std::string s(const rapidjson::Value& v, const char* k) {
  cr_assert(v.IsObject() && v.HasMember(k) && v[k].IsString(), "no string %s", k);
  return v[k].GetString();
}

// A new member of club `ref`, created (201) or the test stops.
inline std::string onboard_member(MrClient& c, const std::string& ref) {
  const std::string id = unique("mem");
  auto r = c.post("/api/v1/members", member_body(ref, id), unique("k"));
  cr_assert_eq(r.status, 201, "%s", r.body.c_str());
  return id;
}

inline std::int64_t points_balance(MrClient& c, const std::string& id) {
  return i64(data_of(c.get("/api/v1/members/" + id + "/balance")), "pointsBalance");
}

// The answers of requests that compete: `ok_status`, refused with the error
// code `refusal` (what the race must refuse), or anything else.
struct Tally {
  long ok_status;
  std::string refusal;
  std::atomic<int> ok{0}, refused{0}, other{0};
  void count(const HttpResponse& r) {
    if (r.status == ok_status) ok++;
    else if (error_code(r) == refusal) refused++;
    else other++;
  }
};

// `threads` threads at once, each with a client of key `key` sending
// `per_thread` requests, `send(client, thread)` each; counted in `tally`.
inline void race(Tally& tally, const std::string& key, int threads, int per_thread,
                 const std::function<HttpResponse(MrClient&, int thread)>& send) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto c = client(key);
      for (int i = 0; i < per_thread; ++i) tally.count(send(c, t));
    });
  }
  for (auto& th : pool) th.join();
}

inline int sh(const std::string& cmd) { return std::system(cmd.c_str()); }

// "pg_ctl -D <data dir> " as the postgres user, for a test to append a command to.
inline std::string pg_ctl(const std::string& data_dir) {
  return "runuser -u postgres -- /usr/lib/postgresql/15/bin/pg_ctl -D '" + data_dir + "' ";
}

inline std::string mrctl_cmd() {
  // Flags rather than environment assignments, so xargs can run it too.
  return "'" + env("MR_MRCTL") + "' --dsn '" + env("MR_DSN") + "' --master-key '" + env("MR_MASTER_KEY_FILE") + "'";
}

}  // namespace mr::test
