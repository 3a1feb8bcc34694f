// Context's pods: which database keeps a club's books, and every pod's
// database for the commands that cover them all (migrate, audit, prunes,
// lists). The catalogue (db()) is the only source of where a club lives.
#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "tools/mrctl/command.hpp"

namespace mr::ctl {

namespace {
// A pod that does not answer fails the command in this long rather than
// hanging it; a connect_timeout in the pod's conninfo wins.
constexpr int kPodConnectTimeoutS = 10;
}  // namespace

const std::vector<PodAddress>& Context::directory() {
  if (!directory_) {
    directory_.emplace();
    // Before migration 018 the catalogue has no directory: every club is home.
    has_directory_ = pg::value(exec("SELECT to_regclass('pods') IS NOT NULL").get(), 0, 0) == "t";
    if (has_directory_) {
      auto r = exec("SELECT pod, conninfo FROM pods ORDER BY pod");
      for (int i = 0; i < PQntuples(r.get()); ++i) directory_->push_back({pg::value(r.get(), i, 0), pg::value(r.get(), i, 1)});
    }
  }
  return *directory_;
}

std::vector<std::string> Context::pod_names() {
  std::vector<std::string> names{std::string(kHomePod)};
  for (const PodAddress& p : directory()) names.push_back(p.name);
  return names;
}

pg::Conn connect_pod(const std::string& name, const std::string& conninfo) {
  // Defaults, then the expanded conninfo (its own settings win), then
  // MR_POD_USER: the directory names the role nginx's workers use, and an
  // operator may need another (one that may migrate, say).
  const std::string timeout = std::to_string(kPodConnectTimeoutS);
  std::vector<const char*> keys{"connect_timeout", "fallback_application_name", "dbname"};
  std::vector<const char*> values{timeout.c_str(), "mrctl", conninfo.c_str()};
  if (const char* user = std::getenv("MR_POD_USER"); user != nullptr && *user != '\0') {
    keys.push_back("user");
    values.push_back(user);
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  pg::Conn conn(PQconnectdbParams(keys.data(), values.data(), 1));
  if (!conn || PQstatus(conn.get()) != CONNECTION_OK) {
    // libpq's message, one line: which server and why.
    std::string err = conn ? PQerrorMessage(conn.get()) : "out of memory";
    const std::size_t start = err.find_first_not_of('\n');
    err = start == std::string::npos ? "" : err.substr(start);
    throw Failure{"pod " + name + " is unreachable: " + err.substr(0, err.find('\n'))};
  }
  PQclear(PQexec(conn.get(), "SET client_min_messages TO warning"));
  return conn;
}

PGconn* Context::pod_db(const std::string& name) {
  if (name == kHomePod) return db();
  if (auto it = pods_.find(name); it != pods_.end()) return it->second.get();
  const auto& dir = directory();
  const auto at = std::find_if(dir.begin(), dir.end(), [&](const PodAddress& p) { return p.name == name; });
  if (at == dir.end()) throw Failure{"no pod " + name + " in the directory (mrctl pod list)"};
  return pods_.emplace(name, connect_pod(name, at->conninfo)).first->second.get();
}

std::pair<std::string, std::string> Context::locate(const std::string& ref) {
  directory();
  auto r = exec(has_directory_ ? "SELECT coalesce(pod, 'home'), club_id FROM clubs WHERE partner_ref = $1"
                               : "SELECT 'home', club_id FROM clubs WHERE partner_ref = $1",
                {ref});
  if (PQntuples(r.get()) == 0) throw Failure{"no club " + ref};
  return {pg::value(r.get(), 0, 0), pg::value(r.get(), 0, 1)};
}

std::string Context::club_pod(const std::string& ref) { return locate(ref).first; }

PGconn* Context::club_db(const std::string& ref) {
  const auto [pod, club_id] = locate(ref);
  if (pod == kHomePod) return db();
  PGconn* conn = pod_db(pod);
  // The row the pod's functions will find by its reference must be the
  // catalogue's club: a directory pointing at another database, or a row
  // left by an interrupted create, is refused before anything is written.
  auto there = exec(conn, "SELECT club_id FROM clubs WHERE partner_ref = $1", {ref});
  if (PQntuples(there.get()) == 0 || pg::value(there.get(), 0, 0) != club_id) {
    throw Failure{"club " + ref + " (club_id " + club_id + ") is not in pod " + pod +
                  "'s database: the directory and the pod disagree (mrctl pod list)"};
  }
  return conn;
}

std::map<std::string, std::string> Context::for_each_pod(
    const std::function<void(const std::string& pod, PGconn* db)>& body) {
  std::map<std::string, std::string> failed;
  for (const std::string& pod : pod_names()) {
    try {
      body(pod, pod_db(pod));
    } catch (const Failure& f) {
      // The catalogue itself failing is the command failing.
      if (pod == kHomePod) throw;
      std::cerr << "mrctl: pod " << pod << ": " << f.message << "\n";
      failed.emplace(pod, f.message);
    }
  }
  return failed;
}

PGconn* Context::db_holding(std::string_view probe, const std::string& id, std::string_view what) {
  std::string unreachable;
  for (const std::string& pod : pod_names()) {
    try {
      PGconn* conn = pod_db(pod);
      if (PQntuples(exec(conn, probe, {id}).get()) > 0) return conn;
    } catch (const Failure& f) {
      if (pod == kHomePod) throw;
      unreachable += (unreachable.empty() ? "" : "; ") + f.message;
    }
  }
  if (!unreachable.empty()) {
    throw Failure{"no " + std::string(what) + " " + id + " in the pods reached, and " + unreachable};
  }
  return db();
}

int print_every_pods_list(Context& ctx, std::string_view sql, const std::vector<std::optional<std::string>>& params,
                          ledger::OpsList list, std::size_t limit) {
  std::vector<std::string> lists;
  const auto failed = ctx.for_each_pod([&](const std::string&, PGconn* conn) {
    auto r = ctx.exec(conn, sql, params);
    lists.push_back(pg::value(r.get(), 0, 0));
  });
  // One database: its own answer as it wrote it.
  if (lists.size() == 1) {
    std::cout << lists.front() << "\n";
  } else {
    auto merged = ledger::merge_json_arrays(lists, ledger::order_of(list), limit);
    if (!merged) throw Failure{"a pod answered a list that is not a JSON array"};
    std::cout << *merged << "\n";
  }
  return failed.empty() ? 0 : 1;
}

}  // namespace mr::ctl
