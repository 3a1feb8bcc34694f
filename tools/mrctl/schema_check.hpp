// What a database's recorded migrations (schema_migrations) say against the
// ones this mrctl embeds: the whole schema, behind (mrctl migrate brings it
// up), or another build's (migrate would refuse it). Pure: `pod add` and
// `pod list` read the rows, migrate shares same_text().
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "ledger/sql/migrations.hpp"

namespace mr::ctl {

struct AppliedMigration {
  int version = 0;
  std::string name;
  std::optional<std::string> checksum;  // none on rows applied before checksums
};

// The recorded text is `m`'s, or an earlier one that a later migration
// restates whole (migrations/SUPERSEDED).
bool same_text(const Migration& m, std::string_view recorded, std::span<const EarlierText> earlier);

struct SchemaCheck {
  int version = 0;       // the highest recorded, 0 for none
  bool current = false;  // every embedded migration, each with its text
  bool behind = false;   // some missing (or recorded without a checksum); mrctl migrate finishes it
  std::string problem;   // why it is not current: behind, or another build's migrations
};

SchemaCheck check_schema(std::span<const AppliedMigration> applied, std::span<const Migration> embedded,
                         std::span<const EarlierText> earlier);

}  // namespace mr::ctl
