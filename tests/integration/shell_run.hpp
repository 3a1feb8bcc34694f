// Shell commands a test runs and reads back: exit code, standard output and
// standard error (mrctl's JSON and its refusals).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include <criterion/criterion.h>

namespace mr::test {

// `s` as one word for /bin/sh.
inline std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct Run {
  int code = -1;  // the exit code; -1 when killed by a signal
  std::string out, err;
};

// Where a command's standard error goes: a file of its own (Run::err), or
// into standard output after what it wrote there (Run::out; err stays "").
enum class Stderr { own, into_out };

// A command started under /bin/sh; finish() waits for it and returns what
// it wrote. Several may run at once. One never finished is waited for when
// dropped.
class Started {
 public:
  explicit Started(const std::string& command, Stderr stderr_to = Stderr::own) {
    std::string redirect = " 2>&1";
    if (stderr_to == Stderr::own) {
      char path[] = "/tmp/mr_test_stderr_XXXXXX";
      const int fd = ::mkstemp(path);
      cr_assert(fd >= 0, "mkstemp failed");
      ::close(fd);
      err_path_ = path;
      redirect = " 2>" + shell_quote(err_path_);
    }
    // Braces: the redirection covers the whole command line.
    pipe_ = ::popen(("{ " + command + "; }" + redirect).c_str(), "r");
    cr_assert(pipe_ != nullptr, "cannot run %s", command.c_str());
  }
  Started(Started&& other) noexcept
      : pipe_(std::exchange(other.pipe_, nullptr)), err_path_(std::move(other.err_path_)) {}
  Started(const Started&) = delete;
  Started& operator=(const Started&) = delete;
  Started& operator=(Started&&) = delete;
  ~Started() {
    if (pipe_ != nullptr) finish();
  }

  Run finish() {
    Run r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, pipe_)) > 0) r.out.append(buf, n);
    const int status = ::pclose(std::exchange(pipe_, nullptr));
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (!err_path_.empty()) {
      std::ifstream in(err_path_);
      r.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      ::unlink(err_path_.c_str());
      err_path_.clear();
    }
    return r;
  }

 private:
  FILE* pipe_ = nullptr;
  std::string err_path_;
};

inline Run run(const std::string& command, Stderr stderr_to = Stderr::own) {
  return Started(command, stderr_to).finish();
}

}  // namespace mr::test
