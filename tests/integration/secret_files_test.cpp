// Every secret file is held to the master key's rule (a regular file, no
// group or other bits, owned by nginx's master user or root): `nginx -t`
// refuses an ops token or a Redis password file that breaks it and accepts
// its safe twin. Log files nginx creates for a configuration with the
// modules are 0640 at most (request paths carry member ids). Each test runs
// the stock nginx over a configuration of its own that reads keys from the
// fixture's PostgreSQL.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

#include "stack_env.hpp"

using mr::test::env;

namespace {

using Outcome = mr::test::Ran;

struct Dir {
  std::string path;
  Dir() {
    char tmpl[] = "/tmp/mr-secrets-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~Dir() { (void)!std::system(("rm -rf '" + path + "'").c_str()); }
};

// A file holding `content` with `mode`, owned by root unless `uid` says.
std::string secret(const Dir& d, const std::string& name, const std::string& content, mode_t mode, uid_t uid = 0) {
  const std::string path = d.path + "/" + name;
  std::ofstream(path) << content;
  cr_assert_eq(::chmod(path.c_str(), mode), 0);
  cr_assert_eq(::chown(path.c_str(), uid, 0), 0);
  return path;
}

// `http_extra` goes into http {}; with `modules` the API is configured
// (mr_auth on), without it the modules are only loaded.
Outcome nginx_t(const Dir& d, const std::string& http_extra, bool modules = true) {
  const std::string conf = d.path + "/nginx.conf";
  std::string s = "include " + env("MR_STACK_DIR") + "/nginx/modules/load_modules.conf;\n";
  s += "pid " + d.path + "/nginx.pid;\nerror_log " + d.path + "/configured-error.log;\nevents {}\nhttp {\n";
  for (const char* t : {"client_body", "proxy", "fastcgi", "uwsgi", "scgi"}) {
    s += std::string("  ") + t + "_temp_path " + d.path + "/" + t + ";\n";
  }
  if (modules) {
    s += "  mr_environment sandbox;\n  mr_catalogue_dsn \"" + env("MR_DSN") + "\";\n";
    s += "  mr_master_key_file " + env("MR_MASTER_KEY_FILE") + ";\n";
    s += "  mr_catalogue_snapshot " + d.path + "/catalogue.snapshot;\n";
    s += "  mr_ledger_dsn \"" + env("MR_DSN") + "\";\n";
  }
  s += http_extra;
  // nginx -t does not bind: fixed ports are fine.
  s += "  server { listen 127.0.0.1:18090; access_log " + d.path + "/access.log;";
  if (modules) s += " location /api/ { mr_auth on; mr_ledger; } location /ops/ { mr_ops; }";
  s += " }\n}\n";
  std::ofstream(conf) << s;
  // A umask that lets nginx create 0644 files, as a shell's default does.
  return mr::test::nginx_check(d.path, conf, d.path + "/error.log", "umask 022; ");
}

const std::string kToken = "0123456789abcdef0123456789";

void expect_refused(const Outcome& o, const std::string& line) {
  cr_expect_neq(o.exit_code, 0, "nginx -t accepted it:\n%s", o.output.c_str());
  cr_expect(o.output.find(line) != std::string::npos, "expected \"%s\" in:\n%s", line.c_str(), o.output.c_str());
}

mode_t mode_of(const std::string& path) {
  struct stat st{};
  cr_assert_eq(::stat(path.c_str(), &st), 0, "%s", path.c_str());
  return st.st_mode & 07777;
}

}  // namespace

Test(secret_files, ops_token_held_to_the_master_keys_rule) {
  Dir d;
  for (mode_t mode : {0644, 0640, 0604, 0660}) {
    const std::string token = secret(d, "ops.token", kToken, mode);
    char shown[8];
    std::snprintf(shown, sizeof shown, "%04o", static_cast<unsigned>(mode));
    expect_refused(nginx_t(d, "  mr_ops_token_file " + token + ";\n"),
                   "mr_ops_token_file: " + token + ": mode " + shown + " lets group or others at a secret; chmod 600 it");
  }
  const std::string theirs = secret(d, "ops.token", kToken, 0600, 65534);
  expect_refused(nginx_t(d, "  mr_ops_token_file " + theirs + ";\n"),
                 "mr_ops_token_file: " + theirs + ": owned by uid 65534, neither this user (uid 0) nor root");
  // The safe twins: 0600 and 0400, owned by root.
  for (mode_t mode : {0600, 0400}) {
    const std::string token = secret(d, "ops.token", kToken, mode);
    const Outcome o = nginx_t(d, "  mr_ops_token_file " + token + ";\n");
    cr_expect_eq(o.exit_code, 0, "mode %o: %s", mode, o.output.c_str());
  }
}

Test(secret_files, redis_password_file_held_to_the_master_keys_rule) {
  Dir d;
  const std::string open = secret(d, "redis.password", "s3cret-password\n", 0644);
  expect_refused(nginx_t(d, "  mr_redis_password_file " + open + ";\n"),
                 "mr_redis_password_file: " + open + ": mode 0644 lets group or others at a secret; chmod 600 it");
  const std::string dir_instead = d.path + "/a-folder";
  cr_assert_eq(::mkdir(dir_instead.c_str(), 0700), 0);
  expect_refused(nginx_t(d, "  mr_redis_password_file " + dir_instead + ";\n"),
                 "mr_redis_password_file: " + dir_instead + ": not a regular file");
  const std::string safe = secret(d, "redis.password", "s3cret-password\n", 0600);
  const Outcome o = nginx_t(d, "  mr_redis_password_file " + safe + ";\n");
  cr_expect_eq(o.exit_code, 0, "%s", o.output.c_str());
}

Test(secret_files, logs_created_0640_where_the_modules_serve) {
  Dir with, without;
  const Outcome o = nginx_t(with, "");
  cr_assert_eq(o.exit_code, 0, "%s", o.output.c_str());
  cr_expect_eq(mode_of(with.path + "/access.log"), 0640u, "access log %o", mode_of(with.path + "/access.log"));
  // An error log the configuration names (not the one of -e, which nginx
  // opens before it reads the configuration).
  cr_expect_eq(mode_of(with.path + "/configured-error.log"), 0640u, "error log %o",
               mode_of(with.path + "/configured-error.log"));
  // The twin: the modules loaded but not configured leave nginx's umask as it was.
  const Outcome plain = nginx_t(without, "", false);
  cr_assert_eq(plain.exit_code, 0, "%s", plain.output.c_str());
  cr_expect_eq(mode_of(without.path + "/access.log"), 0644u, "%o", mode_of(without.path + "/access.log"));
  // The fixture's running nginx: its access log, written by its workers.
  const std::string stack_log = env("MR_STACK_DIR") + "/nginx/logs/access.log";
  cr_expect_eq(mode_of(stack_log) & 0027, 0u, "the stack's access log is %o", mode_of(stack_log));
}
