#include "tools/mrctl/schema_check.hpp"

#include <algorithm>

namespace mr::ctl {

bool same_text(const Migration& m, std::string_view recorded, std::span<const EarlierText> earlier) {
  if (recorded == m.sha256) return true;
  return std::any_of(earlier.begin(), earlier.end(),
                     [&](const EarlierText& e) { return e.version == m.version && e.sha256 == recorded; });
}

SchemaCheck check_schema(std::span<const AppliedMigration> applied, std::span<const Migration> embedded,
                         std::span<const EarlierText> earlier) {
  SchemaCheck out;
  int unchecked = 0;
  for (const AppliedMigration& a : applied) {
    out.version = std::max(out.version, a.version);
    const auto m = std::find_if(embedded.begin(), embedded.end(), [&](const Migration& e) { return e.version == a.version; });
    if (m == embedded.end()) {
      out.problem = "migration " + std::to_string(a.version) + " (" + a.name +
                    ") is applied but this mrctl does not have it: migrated by another build";
      return out;
    }
    if (m->name != a.name) {
      out.problem = "migration " + std::to_string(a.version) + " is applied as " + a.name + " but this mrctl's is " +
                    std::string(m->name) + ": migrated by another build";
      return out;
    }
    if (!a.checksum) {
      unchecked++;
    } else if (!same_text(*m, *a.checksum, earlier)) {
      out.problem = "migration " + a.name + " differs from this mrctl's text (recorded sha256 " +
                    a.checksum->substr(0, 12) + "...)";
      return out;
    }
  }
  int missing = 0;
  for (const Migration& m : embedded) {
    missing += std::none_of(applied.begin(), applied.end(), [&](const AppliedMigration& a) { return a.version == m.version; });
  }
  const int newest = embedded.empty() ? 0 : embedded.back().version;
  if (missing > 0) {
    out.behind = true;
    out.problem = "its schema lacks " + std::to_string(missing) + " of this mrctl's migrations (at " +
                  std::to_string(out.version) + ", this mrctl's newest is " + std::to_string(newest) + ")";
  } else if (unchecked > 0) {
    out.behind = true;
    out.problem = std::to_string(unchecked) + " of its migrations were recorded without a checksum";
  } else {
    out.current = true;
  }
  return out;
}

}  // namespace mr::ctl
