// mrctl's command table, options and the context commands run in. Each
// cmd_*.cpp registers its commands with a static Register object.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "keys/blocking_pg.hpp"
#include "keys/secret_box.hpp"

namespace mr::ctl {

// Thrown by commands for a one-line error on stderr; main() catches it.
struct Failure {
  std::string message;
  int exit_code = 1;
};

class Context {
 public:
  Context(std::map<std::string, std::string> options) : options_(std::move(options)) {}

  std::optional<std::string> opt(const std::string& name) const;
  std::string required(const std::string& name) const;
  std::int64_t integer(const std::string& name, std::int64_t min, std::int64_t max) const;
  bool has(const std::string& name) const { return options_.contains(name); }

  PGconn* db();                    // --dsn or MR_DSN, opened on first use
  const MasterKey& master_key();   // --master-key or MR_MASTER_KEY_FILE

  // One statement; throws Failure with the server's message.
  pg::Result exec(std::string_view sql, const std::vector<std::optional<std::string>>& params = {},
                  const std::vector<int>& binary = {});

  // BEGIN, `body`, COMMIT; ROLLBACK and rethrow if `body` throws.
  void in_transaction(const std::function<void()>& body);

 private:
  std::map<std::string, std::string> options_;
  pg::Conn conn_;
  std::optional<MasterKey> master_;
};

using CommandFn = std::function<int(Context&)>;

struct Command {
  std::string words;  // "club create"
  std::string usage;
  std::string summary;  // one line for `mrctl <words> --help`
  CommandFn run;
};

std::vector<Command>& registry();

struct Register {
  Register(std::string words, std::string usage, std::string summary, CommandFn run) {
    registry().push_back({std::move(words), std::move(usage), std::move(summary), std::move(run)});
  }
  Register(std::string words, std::string usage, CommandFn run)
      : Register(std::move(words), std::move(usage), {}, std::move(run)) {}
};

// Prints a JSON document from PostgreSQL (row 0, column 0) with a newline.
void print_json_result(const PGresult* r);

// Validation shared by the commands.
void check_ref(const std::string& ref);
void check_currency(const std::string& cur);

}  // namespace mr::ctl
