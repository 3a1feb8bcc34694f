// What the domain's unit tests send to ledger::prepare and read back: a
// request as the partner handler builds it (club 7, club-a, fixed ids), the
// immediate answer or the statement it prepared, and the error code of an
// answer. One copy for every test of the router.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include <criterion/criterion.h>
#include <rapidjson/document.h>

#include "ledger/api.hpp"

namespace mr::ledger::test {

inline Request req(std::string_view method, std::string_view path, std::string_view body = "",
                              std::string_view query = "") {
  Request r;
  r.method = method;
  r.path = path;
  r.body = body;
  r.query = query;
  r.club_id = 7;
  r.partner_ref = "club-a";
  r.request_id = "rid";
  r.idempotency_key = "k";
  r.fingerprint = "fp";
  return r;
}

// The immediate answer, or status 0 when a statement is pending.
inline Response immediate(const Request& r) {
  Prepared p = prepare(r);
  if (auto* resp = std::get_if<Response>(&p)) return *resp;
  return Response{0, "", false};
}

// The statement prepared; the test stops when the answer came at once.
inline const Query& pending_query(const Prepared& p) {
  const auto* pending = std::get_if<std::unique_ptr<Pending>>(&p);
  cr_assert(pending != nullptr, "no statement: %s", std::get<Response>(p).body.c_str());
  return (*pending)->query();
}

inline std::string code_of(const Response& r) {
  rapidjson::Document d;
  d.Parse(r.body.data(), r.body.size());
  return d.IsObject() && d.HasMember("error") ? d["error"]["code"].GetString() : "";
}

}  // namespace mr::ledger::test
