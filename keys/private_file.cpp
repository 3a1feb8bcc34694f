#include "keys/private_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <openssl/crypto.h>

namespace mr {

std::optional<std::string> private_file_problem(int fd, std::string_view path) {
  const std::string p(path);
  struct stat st{};
  if (::fstat(fd, &st) != 0) return p + ": " + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return p + ": not a regular file";
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return p + ": mode " + mode + " lets group or others at a secret; chmod 600 it";
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return p + ": owned by uid " + std::to_string(st.st_uid) + ", neither this user (uid " +
           std::to_string(::geteuid()) + ") nor root; chown it";
  }
  return std::nullopt;
}

int open_private_file(std::string_view path, std::string& err) {
  const std::string p(path);
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    err = p + ": " + std::strerror(errno);
    return -1;
  }
  if (auto problem = private_file_problem(fd, path)) {
    ::close(fd);
    err = std::move(*problem);
    return -1;
  }
  return fd;
}

std::optional<std::string> read_private_file(std::string_view path, std::size_t max_bytes, std::string& err) {
  const int fd = open_private_file(path, err);
  if (fd < 0) return std::nullopt;
  std::string out;
  struct stat st{};
  // Reserved once: growing would leave copies of the secret in freed memory.
  if (::fstat(fd, &st) == 0 && st.st_size >= 0) {
    out.reserve(std::min(max_bytes, static_cast<std::size_t>(st.st_size)) + 1);
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = std::string(path) + ": " + std::strerror(errno);
      break;
    }
    if (n == 0) {
      OPENSSL_cleanse(buf, sizeof buf);
      ::close(fd);
      return out;
    }
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      err = std::string(path) + ": longer than " + std::to_string(max_bytes) + " bytes";
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  OPENSSL_cleanse(buf, sizeof buf);
  OPENSSL_cleanse(out.data(), out.size());
  ::close(fd);
  return std::nullopt;
}

}  // namespace mr
