#include "keys/catalogue_snapshot.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include <openssl/crypto.h>

#include "keys/private_file.hpp"

namespace mr {
namespace {

// Format 2 holds the pods; format 1, which has none, still opens (a node
// upgraded over an old snapshot keeps serving), every club in the home pod.
constexpr std::string_view kMagic = "MRCATSNAP2\n";
constexpr std::string_view kMagicV1 = "MRCATSNAP1\n";
constexpr std::size_t kMaxFile = std::size_t{64} << 20;

// The associated data: the format and the environment, as the header says them.
std::string header(std::string_view environment, std::string_view magic = kMagic) {
  std::string h(magic);
  h.append(environment).append("\n");
  return h;
}

// A string whose bytes are wiped when it goes (the plaintext holds secrets).
struct Wiped {
  std::string s;
  ~Wiped() { OPENSSL_cleanse(s.data(), s.size()); }
};

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

bool put_text(std::string& out, std::string_view text) {
  if (text.size() > std::numeric_limits<std::uint16_t>::max()) return false;
  out.push_back(static_cast<char>(text.size() & 0xff));
  out.push_back(static_cast<char>(text.size() >> 8));
  out.append(text);
  return true;
}

// Reads the plaintext front to back; any short read poisons it.
struct Reader {
  std::string_view rest;
  bool ok = true;
  std::uint64_t u64() {
    if (rest.size() < 8) return ok = false, 0;
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(rest[i])) << (8 * i);
    rest.remove_prefix(8);
    return v;
  }
  std::string text() {
    if (rest.size() < 2) return ok = false, std::string();
    const std::size_t n = static_cast<unsigned char>(rest[0]) | (static_cast<std::size_t>(static_cast<unsigned char>(rest[1])) << 8);
    rest.remove_prefix(2);
    if (rest.size() < n) return ok = false, std::string();
    std::string out(rest.substr(0, n));
    rest.remove_prefix(n);
    return out;
  }
};

}  // namespace

std::string seal_catalogue(const KeyCatalogue& catalogue, const MasterKey& master, std::string_view environment,
                           std::int64_t read_unix_ms) {
  Wiped plain;
  plain.s.reserve(16 + catalogue.size() * 256);
  put_u64(plain.s, static_cast<std::uint64_t>(read_unix_ms));
  bool fits = true;
  put_u64(plain.s, catalogue.pods().size());
  for (const PodAddress& pod : catalogue.pods()) fits = fits && put_text(plain.s, pod.name) && put_text(plain.s, pod.conninfo);
  put_u64(plain.s, catalogue.size());
  catalogue.for_each([&](const KeyEntry& e) {
    fits = fits && put_text(plain.s, e.key_id) && put_text(plain.s, e.secret);
    put_u64(plain.s, static_cast<std::uint64_t>(e.club_id));
    fits = fits && put_text(plain.s, e.partner_ref);
    put_u64(plain.s, e.pod);
  });
  if (!fits) return {};
  const std::string aad = header(environment);
  const std::string sealed = seal(master, plain.s, aad);
  if (sealed.empty()) return {};
  return aad + sealed;
}

std::optional<CatalogueSnapshot> open_catalogue(std::string_view bytes, const MasterKey& master,
                                                std::string_view environment, std::string& err) {
  const bool v1 = bytes.starts_with(kMagicV1);
  if (!v1 && !bytes.starts_with(kMagic)) {
    err = "not a key catalogue snapshot";
    return std::nullopt;
  }
  const std::string_view magic = v1 ? kMagicV1 : kMagic;
  const std::size_t eol = bytes.find('\n', magic.size());
  if (eol == std::string_view::npos) {
    err = "not a key catalogue snapshot";
    return std::nullopt;
  }
  const std::string_view theirs = bytes.substr(magic.size(), eol - magic.size());
  if (theirs != environment) {
    err = "a snapshot of environment \"" + std::string(theirs.substr(0, 32)) + "\", not \"" +
          std::string(environment) + "\"";
    return std::nullopt;
  }
  auto plain = open(master, bytes.substr(eol + 1), header(environment, magic));
  if (!plain) {
    err = "does not open with this master key: changed since it was written, or sealed under another master key";
    return std::nullopt;
  }
  Wiped wiped{std::move(*plain)};
  Reader in{wiped.s};
  CatalogueSnapshot out;
  out.read_unix_ms = static_cast<std::int64_t>(in.u64());
  std::vector<PodAddress> pods;
  const std::uint64_t pod_count = v1 ? 0 : in.u64();
  for (std::uint64_t i = 0; in.ok && i < pod_count; ++i) {
    PodAddress pod;
    pod.name = in.text();
    pod.conninfo = in.text();
    pods.push_back(std::move(pod));
  }
  const std::uint64_t count = in.u64();
  for (std::uint64_t i = 0; in.ok && i < count; ++i) {
    std::string key_id = in.text();
    Wiped secret{in.text()};
    const auto club_id = static_cast<std::int64_t>(in.u64());
    std::string partner_ref = in.text();
    const std::uint64_t pod = v1 ? 0 : in.u64();
    if (!in.ok || pod > pods.size()) {
      in.ok = false;
      break;
    }
    auto entry = make_key_entry(std::move(key_id), std::move(secret.s), club_id, std::move(partner_ref), err,
                                static_cast<std::uint32_t>(pod));
    if (!entry) return std::nullopt;
    out.catalogue.add(std::move(*entry));
  }
  if (!in.ok || !in.rest.empty()) {
    err = "its sealed content is not a key list";  // authenticated, so written by another build
    return std::nullopt;
  }
  out.catalogue.set_pods(std::move(pods));
  return out;
}

bool write_catalogue_snapshot(std::string_view path, const KeyCatalogue& catalogue, const MasterKey& master,
                              std::string_view environment, std::int64_t read_unix_ms, std::string& err) {
  const std::string bytes = seal_catalogue(catalogue, master, environment, read_unix_ms);
  if (bytes.empty()) {
    err = "cannot seal the catalogue";
    return false;
  }
  const std::string target(path);
  std::string temp = target + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temp.data());  // mode 0600
  if (fd < 0) {
    err = temp + ": " + std::strerror(errno);
    return false;
  }
  bool ok = ::fchmod(fd, 0600) == 0;
  for (std::size_t done = 0; ok && done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  const int saved = errno;
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(temp.c_str(), target.c_str()) == 0) {
    // The rename itself reaches the disk with the folder.
    const std::string dir = target.find('/') == std::string::npos ? "." : target.substr(0, target.rfind('/') + 1);
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
      ::fsync(dfd);
      ::close(dfd);
    }
    return true;
  }
  err = target + ": " + std::strerror(ok ? errno : saved);
  ::unlink(temp.c_str());
  return false;
}

std::optional<CatalogueSnapshot> read_catalogue_snapshot(std::string_view path, const MasterKey& master,
                                                         std::string_view environment, std::string& err) {
  auto bytes = read_private_file(path, kMaxFile, err);
  if (!bytes) return std::nullopt;
  auto snapshot = open_catalogue(*bytes, master, environment, err);
  if (!snapshot) err = std::string(path) + ": " + err;
  return snapshot;
}

}  // namespace mr
