// mrctl's pure rules: pod names (migration 018's CHECK), a database's
// recorded migrations against the embedded ones (pod add|list|set), and one
// list merged from every pod's (payout list, webhook list and failures).
#include <criterion/criterion.h>

#include <array>
#include <string>
#include <vector>

#include "ledger/json_merge.hpp"
#include "tools/mrctl/pod_name.hpp"
#include "tools/mrctl/schema_check.hpp"

using mr::ctl::AppliedMigration;
using mr::ctl::check_schema;
using mr::ledger::merge_json_arrays;
using mr::ctl::pod_name_problem;

Test(pod_name, the_rule_of_migration_018) {
  for (const char* ok : {"a", "eu1", "pod_b", "z012345678901234567890123456789"}) {
    cr_expect(!pod_name_problem(ok).has_value(), "%s", ok);
  }
  const std::string long_name(32, 'a');
  for (const std::string& bad : {std::string(), std::string("1pod"), std::string("_a"), std::string("Pod"),
                                std::string("a-b"), std::string("a b"), long_name, std::string("p\xc3\xa9")}) {
    const auto p = pod_name_problem(bad);
    cr_assert(p.has_value(), "\"%s\" passed", bad.c_str());
    cr_expect(p->find("1 to 31") != std::string::npos, "%s", p->c_str());
  }
  const auto home = pod_name_problem("home");
  cr_assert(home.has_value());
  cr_expect(home->find("catalogue's own database") != std::string::npos, "%s", home->c_str());
}

namespace {

const std::string kSum1(64, '1'), kSum2(64, '2'), kSum3(64, '3'), kOld2(64, 'e');
const std::array<mr::Migration, 3> kEmbedded{{{1, "001_a", "", kSum1}, {2, "002_b", "", kSum2}, {4, "004_d", "", kSum3}}};
const std::array<mr::EarlierText, 1> kEarlier{{{2, kOld2}}};

mr::ctl::SchemaCheck check(const std::vector<AppliedMigration>& applied) {
  return check_schema(applied, kEmbedded, kEarlier);
}

}  // namespace

Test(schema_check, whole_behind_and_foreign) {
  auto s = check({{1, "001_a", kSum1}, {2, "002_b", kSum2}, {4, "004_d", kSum3}});
  cr_expect(s.current && !s.behind && s.problem.empty(), "%s", s.problem.c_str());
  cr_expect_eq(s.version, 4);

  s = check({{1, "001_a", kSum1}, {2, "002_b", kOld2}, {4, "004_d", kSum3}});
  cr_expect(s.current, "an earlier text a later migration restates is ours: %s", s.problem.c_str());

  s = check({});
  cr_expect(!s.current && s.behind);
  cr_expect_eq(s.version, 0);
  cr_expect(s.problem.find("lacks 3") != std::string::npos, "%s", s.problem.c_str());

  s = check({{1, "001_a", kSum1}, {2, "002_b", kSum2}});
  cr_expect(!s.current && s.behind);
  cr_expect_eq(s.version, 2);
  cr_expect(s.problem.find("at 2, this mrctl's newest is 4") != std::string::npos, "%s", s.problem.c_str());

  s = check({{1, "001_a", kSum1}, {2, "002_b", std::nullopt}, {4, "004_d", kSum3}});
  cr_expect(!s.current && s.behind, "recorded before checksums: migrate adopts it");
  cr_expect(s.problem.find("without a checksum") != std::string::npos, "%s", s.problem.c_str());

  s = check({{1, "001_a", kSum1}, {3, "003_c", kSum2}});
  cr_expect(!s.current && !s.behind);
  cr_expect(s.problem.find("another build") != std::string::npos, "%s", s.problem.c_str());

  s = check({{1, "001_x", kSum1}});
  cr_expect(!s.current && !s.behind);
  cr_expect(s.problem.find("applied as 001_x") != std::string::npos, "%s", s.problem.c_str());

  s = check({{1, "001_a", kSum2}});
  cr_expect(!s.current && !s.behind);
  cr_expect(s.problem.find("differs from this mrctl's text") != std::string::npos, "%s", s.problem.c_str());
}

Test(json_merge, sorted_as_each_pod_sorts_and_cut) {
  const auto m = merge_json_arrays({R"([{"t":"2026-01-01","id":"a"},{"t":"2026-01-03","id":"c"}])",
                                    R"([{"t":"2026-01-02","id":"b"},{"t":"2026-01-03","id":"b2"}])"},
                                   {{"t", "id"}, false}, 0);
  cr_assert(m.has_value());
  cr_expect_eq(*m, std::string(R"([{"t":"2026-01-01","id":"a"},{"t":"2026-01-02","id":"b"},)"
                               R"({"t":"2026-01-03","id":"b2"},{"t":"2026-01-03","id":"c"}])"));

  const auto newest = merge_json_arrays({R"([{"t":"3"},{"t":"1"}])", R"([{"t":"2"}])", "[]"}, {{"t"}, true}, 2);
  cr_assert(newest.has_value());
  cr_expect_eq(*newest, std::string(R"([{"t":"3"},{"t":"2"}])"));

  // Stable for equal keys; a missing or non-string key sorts as "".
  const auto odd = merge_json_arrays({R"([{"t":"b","n":1},{"n":2},{"t":5,"n":3}])", R"([{"t":"b","n":4}])"},
                                     {{"t"}, false}, 0);
  cr_assert(odd.has_value());
  cr_expect_eq(*odd, std::string(R"([{"n":2},{"t":5,"n":3},{"t":"b","n":1},{"t":"b","n":4}])"));

  const auto text = merge_json_arrays({R"([{"s":"caf\u00e9 \"q\""}])"}, {{"s"}, false}, 0);
  cr_assert(text.has_value());
  cr_expect_eq(*text, std::string("[{\"s\":\"caf\xc3\xa9 \\\"q\\\"\"}]"), "%s", text->c_str());

  cr_expect(!merge_json_arrays({"[]", R"({"not":"a list"})"}, {{"t"}, false}, 0).has_value());
  cr_expect(!merge_json_arrays({"[1,"}, {{"t"}, false}, 0).has_value());
  cr_expect_eq(*merge_json_arrays({}, {{"t"}, false}, 0), std::string("[]"));
}
