// The partner route table (ledger/routes.cpp) against the router that uses
// it: every (method, path template) it lists is served, every other method
// on that path is method_not_allowed, and every partner route is listed
// once. docs/openapi.yaml is held against the same table by
// tests/docs/openapi_check.py (through mr-route-table).
#include <criterion/criterion.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <variant>

#include <rapidjson/document.h>

#include "ledger/api.hpp"
#include "ledger/routes.hpp"
#include "tests/unit/ledger/domain_requests.hpp"

using namespace mr::ledger;
using mr::ledger::test::code_of;
using mr::ledger::test::immediate;
using mr::ledger::test::pending_query;

namespace {

// The template with every "{name}" replaced by a plausible id.
std::string sample_path(std::string_view tmpl) {
  std::string out;
  for (std::size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] == '{') {
      out += "id-1";
      i = tmpl.find('}', i);
    } else {
      out += tmpl[i];
    }
  }
  return out;
}

// status 0: a statement is pending (the request got past routing).
Response answer(std::string_view method, const std::string& path, bool test_helpers = true) {
  Request r = test::req(method, path);
  r.environment = "sandbox";
  r.test_helpers = test_helpers;
  return test::immediate(r);
}


constexpr std::array kMethods = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"};

}  // namespace

Test(route_table, every_partner_route_listed_once) {
  std::set<Route> listed;
  std::set<std::pair<std::string_view, std::string_view>> operations;
  for (const auto& r : partner_routes()) {
    cr_expect(listed.insert(r.route).second, "%s listed twice", std::string(route_label(r.route)).c_str());
    cr_expect(operations.insert({r.method, r.path}).second, "%s %s twice", std::string(r.method).c_str(),
              std::string(r.path).c_str());
    cr_expect(r.method == "GET" || r.method == "POST", "%s", std::string(r.method).c_str());
  }
  // Every route but the ops listener's and `other` is a partner route.
  for (std::size_t i = 0; i < kRouteCount; ++i) {
    const auto route = static_cast<Route>(i);
    const bool partner = route != Route::other && !route_label(route).starts_with("ops_");
    cr_expect_eq(listed.count(route) == 1, partner, "%s", std::string(route_label(route)).c_str());
  }
}

Test(route_table, the_router_serves_each_listed_operation) {
  for (const auto& r : partner_routes()) {
    const std::string path = sample_path(r.path);
    cr_expect_eq(route_of(r.method, path), r.route, "%s %s", std::string(r.method).c_str(), path.c_str());
    cr_expect(route_serves(r.route, r.method));
    const Response got = answer(r.method, path);
    // Past routing: a statement, or the body's or query's own refusal (an
    // empty body is invalid_request), never not_found or method_not_allowed.
    cr_expect(got.status != 404 && got.status != 405, "%s %s: %d %s", std::string(r.method).c_str(),
              path.c_str(), got.status, got.body.c_str());
  }
}

Test(route_table, other_methods_are_method_not_allowed) {
  for (const auto& r : partner_routes()) {
    const std::string path = sample_path(r.path);
    for (const std::string_view method : kMethods) {
      const bool served = std::any_of(partner_routes().begin(), partner_routes().end(), [&](const PartnerRoute& o) {
        return o.path == r.path && o.method == method;
      });
      if (served) continue;
      const Response got = answer(method, path);
      cr_expect_eq(got.status, 405, "%s %s: %d", std::string(method).c_str(), path.c_str(), got.status);
      cr_expect_eq(code_of(got), std::string("method_not_allowed"));
    }
  }
}

Test(route_table, paths_around_the_templates_are_not_found) {
  for (const auto& r : partner_routes()) {
    const std::string path = sample_path(r.path);
    for (const std::string& other : {path + "/", path + "/x", path.substr(0, path.rfind('/')) + "/zzz-unknown"}) {
      if (route_of(other) != Route::other) continue;  // e.g. /members/id-1/zzz-unknown is no route either way
      const Response got = answer("GET", other);
      cr_expect_eq(got.status, 404, "%s: %d", other.c_str(), got.status);
      cr_expect_eq(code_of(got), std::string("not_found"), "%s", other.c_str());
    }
    cr_expect_eq(route_of(r.method, path + "/"), Route::other, "%s/", path.c_str());
  }
  // The test helper exists only where mr_test_helpers is on.
  for (const char* method : {"POST", "GET"}) {
    const Response off = answer(method, "/api/v1/test-helpers/redemptions/rdm_1/payout", false);
    cr_expect_eq(code_of(off), std::string("not_found"), "%s", method);
  }
}

Test(route_table, an_empty_id_inside_a_path_is_a_malformed_id) {
  for (const auto& r : partner_routes()) {
    const auto brace = r.path.find('{');
    if (brace == std::string_view::npos) continue;
    const std::string path = sample_path(r.path);
    const std::string empty = sample_path(r.path.substr(0, brace)) +
                              sample_path(r.path.substr(r.path.find('}', brace) + 1));
    const Response got = answer(r.method, empty);
    if (empty.ends_with('/')) {
      cr_expect_eq(code_of(got), std::string("not_found"), "%s", empty.c_str());  // a trailing slash
    } else {
      cr_expect_eq(got.status, 400, "%s: %d", empty.c_str(), got.status);
      cr_expect_eq(code_of(got), std::string("invalid_request"), "%s", empty.c_str());
    }
  }
}
