// mrctl: the operator's tool over libpq. `mrctl help` lists the commands.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <set>

#include "keys/private_file.hpp"
#include "ledger/text_rules.hpp"
#include "tools/mrctl/command.hpp"

namespace mr::ctl {

std::vector<Command>& registry() {
  static std::vector<Command> commands;
  return commands;
}

std::optional<std::string> Context::opt(const std::string& name) const {
  auto it = options_.find(name);
  if (it == options_.end()) return std::nullopt;
  return it->second;
}

std::string Context::required(const std::string& name) const {
  auto v = opt(name);
  if (!v || v->empty()) throw Failure{"--" + name + " is required", 2};
  return *v;
}

std::int64_t Context::integer(const std::string& name, std::int64_t min, std::int64_t max) const {
  const std::string v = required(name);
  std::int64_t n = 0;
  // Whole string, plain decimal: no spaces, no '+', no trailing text.
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc{} || end != v.data() + v.size() || n < min || n > max) {
    throw Failure{"--" + name + " must be an integer from " + std::to_string(min) + " to " +
                      std::to_string(max),
                  2};
  }
  return n;
}

PGconn* Context::db() {
  if (!conn_) {
    // --dsn shows a password to anyone who can list processes: prefer
    // --dsn-file or MR_DSN.
    auto dsn = opt("dsn");
    if (auto file = opt("dsn-file"); !dsn && file) {
      // It holds a password: the master key's rule (keys/private_file.hpp).
      std::string err;
      dsn = read_private_file(*file, 64 * 1024, err);
      if (!dsn) throw Failure{"--dsn-file " + err, 2};
      while (!dsn->empty() && (dsn->back() == '\n' || dsn->back() == '\r')) dsn->pop_back();
    }
    if (!dsn) {
      const char* env = std::getenv("MR_DSN");
      if (env == nullptr) throw Failure{"no database: give --dsn-file, set MR_DSN or give --dsn", 2};
      dsn = env;
    }
    std::string err;
    conn_ = pg::connect(*dsn, err);
    if (!conn_) throw Failure{"cannot connect to the database: " + err};
    PQclear(PQexec(conn_.get(), "SET client_min_messages TO warning"));
  }
  return conn_.get();
}

const MasterKey& Context::master_key() {
  if (!master_) {
    auto path = opt("master-key");
    if (!path) {
      const char* env = std::getenv("MR_MASTER_KEY_FILE");
      if (env == nullptr) throw Failure{"no master key: give --master-key or set MR_MASTER_KEY_FILE", 2};
      path = env;
    }
    std::string err;
    master_ = load_master_key(*path, err);
    if (!master_) throw Failure{"master key: " + err};
  }
  return *master_;
}

void Context::in_transaction(const std::function<void()>& body) { in_transaction(db(), body); }

void Context::in_transaction(PGconn* conn, const std::function<void()>& body) {
  exec(conn, "BEGIN");
  try {
    body();
    exec(conn, "COMMIT");
  } catch (...) {
    PQclear(PQexec(conn, "ROLLBACK"));
    throw;
  }
}

pg::Result Context::exec(std::string_view sql, const std::vector<std::optional<std::string>>& params,
                         const std::vector<int>& binary) {
  return exec(db(), sql, params, binary);
}

pg::Result Context::exec(PGconn* conn, std::string_view sql, const std::vector<std::optional<std::string>>& params,
                         const std::vector<int>& binary) {
  std::string err;
  auto r = pg::exec(conn, sql, params, err, binary);
  if (!r) {
    // Raised by our own SQL with a message meant for the operator.
    // One line: the server's message without its CONTEXT lines.
    auto pos = err.find("ERROR:  ");
    std::string line = pos == std::string::npos ? err : err.substr(pos + 8);
    line = line.substr(0, line.find('\n'));
    throw Failure{line};
  }
  return r;
}

void print_json_result(const PGresult* r) {
  if (PQntuples(r) > 0) std::cout << pg::value(r, 0, 0) << "\n";
}

void check_ref(const std::string& ref) {
  if (ref.empty() || ref.size() > 128) throw Failure{"--ref must be 1 to 128 characters", 2};
  if (!is_printable_ascii(ref)) throw Failure{"--ref must be printable ASCII", 2};
}

void check_currency(const std::string& cur) {
  if (cur.size() != 3 || !std::all_of(cur.begin(), cur.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
    throw Failure{"currency \"" + cur + "\" is not three upper-case letters", 2};
  }
}

}  // namespace mr::ctl

namespace {

// The flags a command takes are the ones its usage names, plus the
// connection and master key: anything else is a typo that would otherwise
// be ignored (an update that silently changes nothing).
std::set<std::string> allowed_flags(const mr::ctl::Command& c) {
  std::set<std::string> flags{"dsn", "dsn-file", "master-key"};
  static const std::regex flag("--([a-z][a-z0-9-]*)");
  for (std::sregex_iterator it(c.usage.begin(), c.usage.end(), flag), end; it != end; ++it) flags.insert((*it)[1]);
  return flags;
}

// Every command, or those of one group ("club"), with their flags.
void usage(std::ostream& out, const std::string& group = {}) {
  out << "usage: mrctl <command> [--flag value ...]  (--dsn-file, MR_DSN or --dsn; "
         "--master-key or MR_MASTER_KEY_FILE)\n       mrctl <command> --help\ncommands:\n";
  for (const auto& c : mr::ctl::registry()) {
    if (group.empty() || c.words.starts_with(group + " ")) out << "  " << c.words << (c.usage.empty() ? "" : " ") << c.usage << "\n";
  }
}

// `mrctl <command> --help` (or `mrctl help <command>`): exit 0 for a
// command or a group of commands, 2 for an unknown one.
int help(const std::string& joined) {
  for (const auto& c : mr::ctl::registry()) {
    if (c.words != joined) continue;
    std::cout << "usage: mrctl " << c.words << (c.usage.empty() ? "" : " ") << c.usage << "\n";
    if (!c.summary.empty()) std::cout << c.summary << "\n";
    std::cout << "common flags: --dsn-file FILE, MR_DSN or --dsn DSN; --master-key FILE (or MR_MASTER_KEY_FILE)\n";
    return 0;
  }
  const auto& all = mr::ctl::registry();
  if (joined.empty() || std::any_of(all.begin(), all.end(), [&](const auto& c) { return c.words.starts_with(joined + " "); })) {
    usage(std::cout, joined);
    return 0;
  }
  std::cerr << "mrctl: unknown command \"" << joined << "\"\n";
  usage(std::cerr);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words;
  std::map<std::string, std::string> options;
  bool want_help = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      want_help = true;
    } else if (a.starts_with("--")) {
      if (i + 1 >= argc) {
        std::cerr << "mrctl: " << a << " needs a value\n";
        return 2;
      }
      if (!options.emplace(a.substr(2), argv[++i]).second) {
        std::cerr << "mrctl: " << a << " given twice\n";
        return 2;
      }
    } else {
      words.push_back(a);
    }
  }
  std::string joined;
  for (const auto& w : words) joined += (joined.empty() ? "" : " ") + w;
  if (want_help) return help(joined);
  if (joined == "help" || joined.starts_with("help ")) return help(joined.substr(std::min<std::size_t>(joined.size(), 5)));
  for (const auto& c : mr::ctl::registry()) {
    if (c.words != joined) continue;
    const auto allowed = allowed_flags(c);
    for (const auto& [name, value] : options) {
      if (!allowed.contains(name)) {
        std::cerr << "mrctl: " << joined << " takes no --" << name << " (usage: mrctl " << c.words << " " << c.usage
                  << ")\n";
        return 2;
      }
    }
    try {
      mr::ctl::Context ctx(std::move(options));
      return c.run(ctx);
    } catch (const mr::ctl::Failure& f) {
      std::cerr << "mrctl: " << f.message << "\n";
      return f.exit_code;
    } catch (const std::exception& e) {
      std::cerr << "mrctl: " << e.what() << "\n";
      return 1;
    }
  }
  if (!joined.empty()) std::cerr << "mrctl: unknown command \"" << joined << "\"\n";
  usage(std::cerr);
  return 2;
}
