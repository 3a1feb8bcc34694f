// What the integration fixture wrote: addresses and seeded keys.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <rapidjson/document.h>

#include "client/mr_client.hpp"

namespace mr::test {

using mr::HttpResponse;
using mr::MrClient;
using mr::parse_json;
using mr::read_env_file;

inline const std::map<std::string, std::string>& stack_env() {
  static const std::map<std::string, std::string> env = [] {
    const char* path = std::getenv("MR_TEST_ENV");
    if (path == nullptr) throw std::runtime_error("MR_TEST_ENV is not set (run through ctest)");
    return read_env_file(path);
  }();
  return env;
}

inline std::string env(const std::string& name) {
  auto it = stack_env().find(name);
  if (it == stack_env().end()) throw std::runtime_error("missing in test.env: " + name);
  return it->second;
}

// "redis-cli ... " for the stack's Redis, with its password (the fixture's
// Redis requires one) in REDISCLI_AUTH; `runner` goes before redis-cli
// ("timeout 1 ", say).
inline std::string redis_cli(const std::string& runner = "") {
  const std::string password_file = env("MR_REDIS_PASSWORD_FILE");
  const std::string cli = runner + "redis-cli -h 127.0.0.1 -p " + env("MR_REDIS_PORT") + " ";
  return password_file.empty() ? cli : "REDISCLI_AUTH=\"$(cat '" + password_file + "')\" " + cli;
}

// A client signing with seeded key <which> (A, B, PRD, REVOKE).
inline MrClient client(const std::string& which = "A") {
  return MrClient(env("MR_BASE_URL"), env("MR_KEY_" + which + "_ID"),
                  env("MR_KEY_" + which + "_SECRET"));
}

inline std::string error_code(const HttpResponse& r) {
  rapidjson::Document d = parse_json(r.body);
  if (!d.IsObject() || !d.HasMember("error") || !d["error"].IsObject() ||
      !d["error"].HasMember("code") || !d["error"]["code"].IsString()) {
    return "<no error code in: " + r.body + ">";
  }
  return d["error"]["code"].GetString();
}

inline std::string header(const HttpResponse& r, const std::string& lower_name) {
  auto it = r.headers.find(lower_name);
  return it == r.headers.end() ? std::string() : it->second;
}

// The shell words that start the stock nginx for a test's own `nginx -t`:
// a sanitizer build's modules need the ASan runtime preloaded into nginx,
// and into nothing else (not the shell that runs it). MR_NGINX_PRELOAD is
// set by CMake, empty in a normal build.
inline std::string nginx_command() {
  const char* preload = std::getenv("MR_NGINX_PRELOAD");
  return (preload != nullptr && *preload != 0 ? "LD_PRELOAD='" + std::string(preload) + "' " : "") + "nginx";
}

// A shell command's exit code (-1 when a signal ended it) and all it
// printed, standard error with standard output.
struct Ran {
  int exit_code = -1;
  std::string output;
};

inline Ran run_merged(const std::string& cmd) {
  Ran r;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  cr_assert(p != nullptr);
  std::array<char, 512> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) r.output += buf.data();
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// `nginx -t` of configuration `conf` under prefix `prefix`, its error log
// at `error_log`; `before` runs first in the same shell (a umask, say).
inline Ran nginx_check(const std::string& prefix, const std::string& conf, const std::string& error_log,
                       const std::string& before = "") {
  return run_merged(before + nginx_command() + " -t -p " + prefix + " -c " + conf + " -e " + error_log);
}

// Asks `done` every `every` until it holds (true) or `timeout` has passed
// (false; `done` is asked once more at the deadline). Tests wait for what
// they need with it, never for a guessed time.
template <class Done>
bool eventually(Done&& done, std::chrono::milliseconds timeout,
                std::chrono::milliseconds every = std::chrono::milliseconds(50)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

// The fixture's limited server logs every line at once (mr_json, no
// buffer): its line whose requestId is `id`, or "". nginx writes the line
// in its log phase, after the answer is sent, so a client can read the
// answer first: this looks again for up to two seconds.
inline std::string limited_log_line(const std::string& id) {
  std::string found;
  eventually(
      [&] {
        std::ifstream in(env("MR_STACK_DIR") + "/nginx/logs/limited-access.log");
        for (std::string line; std::getline(in, line);) {
          if (line.find("\"requestId\":\"" + id + "\"") != std::string::npos) found = line;
        }
        return !found.empty();
      },
      std::chrono::seconds(2));
  return found;
}

// The stack's nginx master (0 when its pid file cannot be read).
inline pid_t nginx_master() {
  std::ifstream in(env("MR_STACK_DIR") + "/nginx/logs/nginx.pid");
  long pid = 0;
  in >> pid;
  return static_cast<pid_t>(pid);
}

// The live processes whose parent is `parent` (an nginx master's workers;
// one exited and not yet reaped by its master is gone).
inline std::set<pid_t> children_of(pid_t parent) {
  std::set<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses.
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    if (rest >> state >> ppid && ppid == parent && state != "Z") out.insert(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

// Reloads the stack's nginx (MR_RELOAD, run after `env_prefix` such as
// "MR_PAYOUT_SIMULATOR=on ") and waits until the new workers serve alone:
// every worker of before has exited (old workers finish their requests
// first) and new ones run. "" when so, else what went wrong. Never asserts:
// callers may have threads running.
inline std::string reload(const std::string& env_prefix = "") {
  const pid_t master = nginx_master();
  if (master <= 0) return "no nginx master pid";
  const std::set<pid_t> old_workers = children_of(master);
  const int rc = std::system((env_prefix + env("MR_RELOAD")).c_str());
  if (rc != 0) return "MR_RELOAD exited with " + std::to_string(rc);
  const bool replaced = eventually(
      [&] {
        const std::set<pid_t> now = children_of(master);
        for (pid_t w : now) {
          if (old_workers.count(w) != 0) return false;
        }
        return !now.empty();
      },
      std::chrono::seconds(30));
  if (nginx_master() != master) return "the nginx master changed across the reload";
  return replaced ? "" : "the workers of before the reload still run (or none run) 30 s after it";
}

// Unique per test process and call, for ids that must not collide. Tests
// call it from many threads: a plain int counter gave two threads the same
// id now and then (two requests with one idempotency key and different
// bodies: a spurious duplicate_idempotency_conflict).
inline std::string unique(const std::string& prefix) {
  static std::atomic<int> counter{0};
  return prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::time(nullptr)) +
         "-" + std::to_string(++counter);
}

}  // namespace mr::test

// Asserts status, JSON content type, the failure envelope with `code`, and
// that error.requestId equals X-Request-Id.
#define EXPECT_ERROR(resp, want_status, want_code)                                               \
  do {                                                                                           \
    const auto& r_ = (resp);                                                                     \
    cr_expect_eq(r_.status, (want_status), "status %ld, want %d; body %s", r_.status,            \
                 (want_status), r_.body.c_str());                                                \
    cr_expect_eq(mr::test::error_code(r_), std::string(want_code), "code in %s, want %s",        \
                 r_.body.c_str(), want_code);                                                    \
    cr_expect(mr::test::header(r_, "content-type").starts_with("application/json"),              \
              "content-type %s", mr::test::header(r_, "content-type").c_str());                  \
    rapidjson::Document d_ = mr::parse_json(r_.body);                                      \
    const std::string rid_ = mr::test::header(r_, "x-request-id");                               \
    cr_expect(!rid_.empty(), "X-Request-Id missing");                                            \
    cr_expect(d_.IsObject() && d_.HasMember("ok") && d_["ok"].IsFalse(), "ok:false missing");    \
    cr_expect(d_.IsObject() && d_.HasMember("error") && d_["error"].HasMember("requestId") &&    \
                  rid_ == d_["error"]["requestId"].GetString(),                                  \
              "error.requestId != X-Request-Id (%s) in %s", rid_.c_str(), r_.body.c_str());      \
  } while (0)
