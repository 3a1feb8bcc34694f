// nginx is never held hostage by the catalogue database: with PostgreSQL
// stopped, `nginx -s reopen`, `-s reload`, `-t` and a fresh start succeed
// from the last-known-good snapshot and keep answering signed requests with
// the keys it holds; a key issued since is unknown until a reload reaches
// the database; a tampered, foreign or open snapshot is refused, and with
// neither database nor snapshot nginx does not start and says why in the
// configured error log. Runs on a stack of its own (it stops PostgreSQL);
// each test brings the stack back whole (tools/stack.sh up) when it ends.
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/metrics_helpers.hpp"
#include "tests/integration/own_node.hpp"

using namespace mr::test;

namespace {

std::string stack() { return env("MR_STACK_DIR"); }
std::string snapshot_path() { return stack() + "/mr-catalogue-sandbox.snapshot"; }
std::string error_log() { return stack() + "/nginx/logs/error.log"; }

// The stack's nginx as tools/stack.sh runs it, with `conf` (default its own).
std::string nginx(const std::string& args, const std::string& conf = "") {
  const std::string prefix = stack() + "/nginx";
  return nginx_command() + " -p '" + prefix + "' -c '" + (conf.empty() ? prefix + "/nginx.conf" : conf) +
         "' -e '" + error_log() + "' " + args;
}

void pg_stop() { cr_assert_eq(sh(pg_ctl(env("MR_PG_DATA")) + "-m fast -w stop >/dev/null"), 0); }
void pg_start() {
  cr_assert_eq(sh(pg_ctl(env("MR_PG_DATA")) + "-w -l '" + stack() + "/pg/postgres.log' start >/dev/null"), 0);
}

// Whatever a test stopped or changed: PostgreSQL, nginx and its
// configuration come back as the fixture made them.
void restore() {
  const std::string up = "'" + env("MR_REPO") + "/tools/stack.sh' up '" + stack() + "' >/dev/null 2>&1";
  if (std::system(up.c_str()) != 0) std::fprintf(stderr, "catalogue_fallback: stack.sh up failed\n");
}

double loaded_at() { return metric(scrape(), "mr_catalogue_loaded_timestamp_seconds"); }

// A reload is in effect once the master has loaded a new catalogue.
void wait_for_load_after(double before) {
  for (int i = 0; i < 150; ++i) {
    if (loaded_at() > before) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  cr_assert_fail("no new catalogue load within 15 s");
}

// A request the edge lets through answers invalid_request from the ledger's
// validation (limit=0), which needs no database; an unknown key answers
// unauthorized.
std::string edge_answer(mr::MrClient& c) { return error_code(c.get("/api/v1/members/m1/points?limit=0")); }

std::size_t file_size(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
}

std::string read_from(const std::string& path, std::size_t offset) {
  const std::string all = mr::read_file(path);
  return offset < all.size() ? all.substr(offset) : std::string();
}

bool master_running() { return sh("kill -0 \"$(cat '" + stack() + "/nginx/logs/nginx.pid' 2>/dev/null)\" 2>/dev/null") == 0; }

// The stack's rendered nginx.conf with `from` replaced by `to` (each once),
// and every sandbox-only switch off (a production variant refuses them).
std::string variant(const std::string& name, std::initializer_list<std::pair<std::string, std::string>> edits) {
  std::string text = mr::read_file(stack() + "/nginx/nginx.conf");
  for (const auto& [from, to] : edits) {
    const auto at = text.find(from);
    cr_assert(at != std::string::npos, "\"%s\" not in nginx.conf", from.c_str());
    text.replace(at, from.size(), to);
  }
  for (const std::string on : {"mr_payout_simulator on;", "mr_test_helpers on;"}) {
    for (auto at = text.find(on); at != std::string::npos; at = text.find(on, at)) {
      text.replace(at, on.size(), on.substr(0, on.size() - 3) + "off;");
    }
  }
  const std::string path = stack() + "/nginx/" + name + ".conf";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

Test(catalogue_fallback, written_at_every_load_private_and_in_metrics, .fini = restore) {
  struct stat st{};
  cr_assert_eq(::stat(snapshot_path().c_str(), &st), 0, "no snapshot beside the master key");
  cr_expect_eq(st.st_mode & 07777, 0600u, "mode %o", st.st_mode & 07777);
  cr_expect_eq(st.st_uid, ::geteuid());
  const std::string text = mr::read_file(snapshot_path());
  cr_expect(text.find(env("MR_KEY_A_SECRET")) == std::string::npos, "a key secret in clear");
  cr_expect(text.find(env("MR_KEY_A_ID")) == std::string::npos, "a key id in clear");
  const std::string metrics = scrape();
  cr_expect_eq(metric(metrics, R"(mr_catalogue_source{source="database"})"), 1, "%s", metrics.c_str());
  cr_expect_eq(metric(metrics, R"(mr_catalogue_source{source="snapshot"})"), 0);
  cr_expect_eq(metric(metrics, "mr_catalogue_snapshot_age_seconds"), 0);
  // A reload rewrites it (renamed into place: a new inode).
  const double before = loaded_at();
  cr_assert_eq(sh(nginx("-s reload")), 0);
  wait_for_load_after(before);
  struct stat again{};
  cr_assert_eq(::stat(snapshot_path().c_str(), &again), 0);
  cr_expect_neq(again.st_ino, st.st_ino, "the reload did not write a new snapshot");
  cr_expect_eq(again.st_mode & 07777, 0600u);
}

Test(catalogue_fallback, signals_test_reload_and_start_without_the_database, .fini = restore) {
  auto a = client("A");
  mr::MrClient stranger(env("MR_BASE_URL"), "mrk_sbx_nobodyhasthiskey00000", "x");
  cr_assert_eq(edge_answer(a), std::string("invalid_request"));
  pg_stop();

  const Run reopen = run(nginx("-s reopen"));
  cr_expect_eq(reopen.rc, 0, "nginx -s reopen: %s", reopen.out.c_str());
  const Run test = run(nginx("-t"));
  cr_expect_eq(test.rc, 0, "nginx -t: %s", test.out.c_str());
  cr_expect(test.out.find("[warn]") != std::string::npos && test.out.find("serving the") != std::string::npos &&
                test.out.find("keys of the snapshot \"" + snapshot_path() + "\", read from the database") !=
                    std::string::npos,
            "nginx -t does not say it serves the snapshot: %s", test.out.c_str());

  const std::size_t log_mark = file_size(error_log());
  const double before = loaded_at();
  const Run reload = run(nginx("-s reload"));
  cr_expect_eq(reload.rc, 0, "nginx -s reload: %s", reload.out.c_str());
  wait_for_load_after(before);
  std::string metrics = scrape();
  cr_expect_eq(metric(metrics, R"(mr_catalogue_source{source="snapshot"})"), 1, "%s", metrics.c_str());
  cr_expect_eq(metric(metrics, R"(mr_catalogue_source{source="database"})"), 0);
  cr_expect_gt(metric(metrics, "mr_catalogue_snapshot_age_seconds"), 0);
  cr_expect_geq(metric(metrics, "mr_catalogue_keys"), 10);
  const std::string logged = read_from(error_log(), log_mark);
  cr_expect(logged.find("[warn]") != std::string::npos && logged.find("cannot load keys") != std::string::npos &&
                logged.find("ago (") != std::string::npos,
            "the reload's warning is not in the error log: %s", logged.c_str());
  auto a2 = client("A");
  cr_expect_eq(edge_answer(a2), std::string("invalid_request"), "the last keys stopped working");
  cr_expect_eq(edge_answer(stranger), std::string("unauthorized"));

  // A fresh start while the database is down.
  const Run quit = run(nginx("-s quit"));
  cr_expect_eq(quit.rc, 0, "nginx -s quit: %s", quit.out.c_str());
  for (int i = 0; i < 100 && master_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  cr_assert(!master_running(), "nginx did not quit");
  const std::size_t start_mark = file_size(error_log());
  const Run start = run(nginx(""));
  cr_assert_eq(start.rc, 0, "nginx did not start without the database: %s", start.out.c_str());
  std::string answer;
  for (int i = 0; i < 100; ++i) {
    auto fresh = client("A");
    answer = edge_answer(fresh);
    if (answer == "invalid_request") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  cr_expect_eq(answer, std::string("invalid_request"), "a fresh start does not serve the snapshot's keys");
  cr_expect_eq(edge_answer(stranger), std::string("unauthorized"));
  const std::string start_log = read_from(error_log(), start_mark);
  cr_expect(start_log.find("serving the") != std::string::npos, "the start's warning is not in the error log: %s",
            start_log.c_str());
  metrics = scrape();
  cr_expect_eq(metric(metrics, R"(mr_catalogue_source{source="snapshot"})"), 1, "%s", metrics.c_str());

  // The database back and a reload: the source is the database again.
  pg_start();
  const double from_snapshot = loaded_at();
  cr_assert_eq(sh(nginx("-s reload")), 0);
  wait_for_load_after(from_snapshot);
  metrics = scrape();
  cr_expect_eq(metric(metrics, R"(mr_catalogue_source{source="database"})"), 1, "%s", metrics.c_str());
  cr_expect_eq(metric(metrics, "mr_catalogue_snapshot_age_seconds"), 0);
}

Test(catalogue_fallback, a_key_issued_since_is_unknown_until_a_reload_reaches_the_database, .fini = restore) {
  const std::string out = run(mrctl_cmd() + " key issue --ref club-b --env sandbox").out;
  auto doc = parse_json(out);
  cr_assert(doc.IsObject() && doc.HasMember("keyId") && doc.HasMember("secret"), "%s", out.c_str());
  mr::MrClient issued(env("MR_BASE_URL"), doc["keyId"].GetString(), doc["secret"].GetString());
  cr_expect_eq(edge_answer(issued), std::string("unauthorized"), "known before any reload");

  pg_stop();
  const double before = loaded_at();
  cr_assert_eq(sh(nginx("-s reload")), 0);
  wait_for_load_after(before);
  mr::MrClient after_snapshot_reload(env("MR_BASE_URL"), doc["keyId"].GetString(), doc["secret"].GetString());
  cr_expect_eq(edge_answer(after_snapshot_reload), std::string("unauthorized"),
               "a key the snapshot does not hold was served");

  pg_start();
  const double from_snapshot = loaded_at();
  cr_assert_eq(sh(nginx("-s reload")), 0);
  wait_for_load_after(from_snapshot);
  std::string answer;
  for (int i = 0; i < 100; ++i) {  // old workers may still take a connection for a moment
    mr::MrClient fresh(env("MR_BASE_URL"), doc["keyId"].GetString(), doc["secret"].GetString());
    answer = edge_answer(fresh);
    if (answer == "invalid_request") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  cr_expect_eq(answer, std::string("invalid_request"), "the key is unknown after a reload that reached the database");
  sh(mrctl_cmd() + " key revoke --key-id " + std::string(doc["keyId"].GetString()) + " >/dev/null");
}

Test(catalogue_fallback, tampered_foreign_or_open_snapshots_are_refused, .fini = restore) {
  const std::string snap = snapshot_path();
  const std::string good = mr::read_file(snap);
  cr_assert(!good.empty());
  pg_stop();
  // The safe twin first: the snapshot as written passes.
  const Run safe = run(nginx("-t"));
  cr_expect_eq(safe.rc, 0, "%s", safe.out.c_str());

  // One bit changed.
  std::string bad = good;
  bad[bad.size() / 2] = static_cast<char>(bad[bad.size() / 2] ^ 0x01);
  std::ofstream(snap, std::ios::binary | std::ios::trunc) << bad;
  const Run tampered = run(nginx("-t"));
  cr_expect_neq(tampered.rc, 0, "a tampered snapshot was accepted: %s", tampered.out.c_str());
  cr_expect(tampered.out.find("no last-known-good snapshot to serve: " + snap +
                              ": does not open with this master key") != std::string::npos,
            "%s", tampered.out.c_str());
  // A reload with it is refused and the running configuration keeps serving.
  const std::size_t mark = file_size(error_log());
  cr_expect_eq(sh(nginx("-s reload")), 0);
  std::string logged;
  for (int i = 0; i < 100 && logged.find("does not open") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    logged = read_from(error_log(), mark);
  }
  cr_expect(logged.find("[emerg]") != std::string::npos && logged.find("does not open with this master key") !=
                                                               std::string::npos,
            "%s", logged.c_str());
  auto a = client("A");
  cr_expect_eq(edge_answer(a), std::string("invalid_request"), "the running configuration stopped serving");
  std::ofstream(snap, std::ios::binary | std::ios::trunc) << good;

  // Sealed under another master key.
  const std::string other_key = stack() + "/other-master.key";
  sh("rm -f '" + other_key + "'");
  cr_assert_eq(sh("'" + env("MR_MRCTL") + "' master-key create --out '" + other_key + "'"), 0);
  const std::string foreign_key = variant("foreign-key", {{"mr_master_key_file " + env("MR_MASTER_KEY_FILE") + ";",
                                                           "mr_master_key_file " + other_key + ";\n    "
                                                           "mr_catalogue_snapshot " + snap + ";"}});
  const Run foreign = run(nginx("-t", foreign_key));
  cr_expect_neq(foreign.rc, 0, "%s", foreign.out.c_str());
  cr_expect(foreign.out.find("does not open with this master key") != std::string::npos, "%s", foreign.out.c_str());

  // Of the other environment.
  const std::string production = variant("production", {{"mr_environment sandbox;",
                                                         "mr_environment production;\n    "
                                                         "mr_catalogue_snapshot " + snap + ";"}});
  const Run other_env = run(nginx("-t", production));
  cr_expect_neq(other_env.rc, 0, "%s", other_env.out.c_str());
  cr_expect(other_env.out.find("a snapshot of environment \"sandbox\", not \"production\"") != std::string::npos,
            "%s", other_env.out.c_str());

  // Readable by others.
  cr_assert_eq(::chmod(snap.c_str(), 0644), 0);
  const Run open_mode = run(nginx("-t"));
  cr_expect_neq(open_mode.rc, 0, "%s", open_mode.out.c_str());
  cr_expect(open_mode.out.find("mode 0644 lets group or others at a secret; chmod 600 it") != std::string::npos, "%s",
            open_mode.out.c_str());
  cr_assert_eq(::chmod(snap.c_str(), 0600), 0);
  cr_expect_eq(run(nginx("-t")).rc, 0, "the restored snapshot passes again");
}

Test(catalogue_fallback, neither_database_nor_snapshot_fails_the_start_in_the_error_log, .fini = restore) {
  pg_stop();
  const std::string configured = stack() + "/nginx/logs/configured-error.log";
  sh("rm -f '" + configured + "'");
  const std::string missing = stack() + "/no-such.snapshot";
  const std::string conf = variant("no-snapshot", {{"mr_environment sandbox;", "mr_environment sandbox;\n    "
                                                                               "mr_catalogue_snapshot " + missing + ";"},
                                                   {"error_log logs/error.log notice;",
                                                    "error_log " + configured + " notice;"},
                                                   {"pid logs/nginx.pid;", "pid logs/no-snapshot.pid;"}});
  const Run test = run(nginx("-t", conf));
  cr_expect_neq(test.rc, 0, "%s", test.out.c_str());
  cr_expect(test.out.find("no last-known-good snapshot to serve: " + missing + ": No such file or directory") !=
                std::string::npos,
            "%s", test.out.c_str());
  // A fresh start (the stack's nginx stopped first) fails, and the reason is
  // in the error log the configuration names, not only on the terminal.
  cr_assert_eq(sh(nginx("-s quit")), 0);
  for (int i = 0; i < 100 && master_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  sh("rm -f '" + configured + "'");
  const Run start = run(nginx("", conf));
  cr_expect_neq(start.rc, 0, "nginx started with no keys at all: %s", start.out.c_str());
  const std::string logged = mr::read_file(configured);
  cr_expect(logged.find("[emerg]") != std::string::npos &&
                logged.find("mr_catalogue_dsn: cannot load keys: ") != std::string::npos &&
                logged.find("no last-known-good snapshot to serve: " + missing) != std::string::npos,
            "the configured error log does not say why: \"%s\"", logged.c_str());
  // Its safe twin: the same configuration with the database up starts.
  pg_start();
  const Run up = run(nginx("-t", conf));
  cr_expect_eq(up.rc, 0, "%s", up.out.c_str());
  sh("rm -f '" + missing + "'");
}
