// The last-known-good catalogue snapshot: what opens, what is refused, and
// the private-file rule it shares with every other secret file.
#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "keys/catalogue_snapshot.hpp"
#include "keys/private_file.hpp"

namespace {

mr::MasterKey key_of(unsigned char fill) {
  mr::MasterKey k;
  k.bytes.fill(fill);
  return k;
}

mr::KeyCatalogue two_keys() {
  mr::KeyCatalogue c;
  std::string err;
  c.add(*mr::make_key_entry("mrk_sbx_a", "secret-a-0123456789012345678901234567890123", 1, "club-a", err));
  c.add(*mr::make_key_entry("mrk_sbx_b", "secret-b", 9007199254740993, std::string(300, 'r'), err));
  return c;
}

std::string temp_dir() {
  char dir[] = "/tmp/mr-snapXXXXXX";
  cr_assert(mkdtemp(dir) != nullptr);
  return dir;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace

Test(catalogue_snapshot, round_trip_keeps_every_key_and_its_hmac) {
  const auto master = key_of(7);
  const std::string bytes = mr::seal_catalogue(two_keys(), master, "sandbox", 1795463497129);
  cr_assert(!bytes.empty());
  cr_expect(bytes.find("secret-a") == std::string::npos, "secrets in clear");
  cr_expect(bytes.find("club-a") == std::string::npos, "partner refs in clear");
  std::string err;
  auto snap = mr::open_catalogue(bytes, master, "sandbox", err);
  cr_assert(snap.has_value(), "%s", err.c_str());
  cr_expect_eq(snap->read_unix_ms, 1795463497129);
  cr_assert_eq(snap->catalogue.size(), 2u);
  const mr::KeyEntry* b = snap->catalogue.find("mrk_sbx_b");
  cr_assert(b != nullptr);
  cr_expect_eq(b->club_id, 9007199254740993);
  cr_expect_eq(b->club_id_text, std::string("9007199254740993"));
  cr_expect_eq(b->partner_ref, std::string(300, 'r'));
  cr_expect_eq(b->secret, std::string("secret-b"));
  // The HMAC is keyed from the secret as a database load would key it.
  const auto fresh = mr::HmacKey("secret-b").digest("canonical");
  cr_assert(b->hmac && fresh);
  cr_expect(*b->hmac->digest("canonical") == *fresh);
  // An empty catalogue is a snapshot too (a new deployment with no keys yet).
  auto empty = mr::open_catalogue(mr::seal_catalogue(mr::KeyCatalogue{}, master, "production", 5), master,
                                  "production", err);
  cr_assert(empty.has_value(), "%s", err.c_str());
  cr_expect_eq(empty->catalogue.size(), 0u);
}

Test(catalogue_snapshot, pods_and_each_keys_pod_survive) {
  const auto master = key_of(7);
  mr::KeyCatalogue c;
  std::string err;
  c.set_pods({{"b", "hostaddr=10.0.0.2 port=5432 dbname=mr"}, {"c", "host=/run/pg-c dbname=mr"}});
  c.add(*mr::make_key_entry("mrk_sbx_home", "secret-h", 1, "club-h", err));
  c.add(*mr::make_key_entry("mrk_sbx_c", "secret-c", 2, "club-c", err, 2));
  auto snap = mr::open_catalogue(mr::seal_catalogue(c, master, "sandbox", 9), master, "sandbox", err);
  cr_assert(snap.has_value(), "%s", err.c_str());
  cr_expect(snap->catalogue.pods() == c.pods());
  cr_expect_eq(snap->catalogue.find("mrk_sbx_home")->pod, 0u);
  cr_expect_eq(snap->catalogue.find("mrk_sbx_c")->pod, 2u);
  cr_expect(snap->catalogue.pod_name(0) == "home");
  cr_expect(snap->catalogue.pod_name(2) == "c");
  cr_expect(snap->catalogue.pod_name(3).empty());
}

// A snapshot written before pods (format 1) still serves, every club home:
// an upgrade while the database is down must not lose the keys.
Test(catalogue_snapshot, format_1_opens_with_every_club_home) {
  const auto master = key_of(7);
  const auto u64 = [](std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  };
  const auto text = [](std::string& out, std::string_view t) {
    out.push_back(static_cast<char>(t.size() & 0xff));
    out.push_back(static_cast<char>(t.size() >> 8));
    out.append(t);
  };
  std::string plain;
  u64(plain, 77);
  u64(plain, 1);
  text(plain, "mrk_sbx_old");
  text(plain, "secret-old");
  u64(plain, 5);
  text(plain, "club-old");
  const std::string header = "MRCATSNAP1\nsandbox\n";
  std::string err;
  auto snap = mr::open_catalogue(header + mr::seal(master, plain, header), master, "sandbox", err);
  cr_assert(snap.has_value(), "%s", err.c_str());
  cr_expect_eq(snap->read_unix_ms, 77);
  cr_expect(snap->catalogue.pods().empty());
  const mr::KeyEntry* old = snap->catalogue.find("mrk_sbx_old");
  cr_assert(old != nullptr);
  cr_expect_eq(old->pod, 0u);
  cr_expect_eq(old->club_id, 5);
  // A key naming a pod the snapshot does not hold is refused, not misrouted.
  mr::KeyCatalogue bad;
  bad.add(*mr::make_key_entry("mrk_sbx_x", "secret-x", 1, "club-x", err, 1));
  cr_expect(!mr::open_catalogue(mr::seal_catalogue(bad, master, "sandbox", 1), master, "sandbox", err).has_value());
}

// HMAC keys with an empty secret as well; such an entry would verify a
// signature anyone can make, so no catalogue (loaded or restored) holds one.
Test(key_entry, an_empty_secret_is_refused) {
  std::string err;
  cr_expect(!mr::make_key_entry("mrk_sbx_e", "", 1, "club-e", err).has_value());
  cr_expect_eq(err, "key mrk_sbx_e has an empty secret", "%s", err.c_str());
  err.clear();
  cr_expect(mr::make_key_entry("mrk_sbx_e", "s", 1, "club-e", err).has_value(), "%s", err.c_str());
}

Test(catalogue_snapshot, foreign_or_tampered_is_refused) {
  const auto master = key_of(7);
  const std::string bytes = mr::seal_catalogue(two_keys(), master, "sandbox", 1);
  std::string err;
  cr_expect(!mr::open_catalogue(bytes, key_of(8), "sandbox", err).has_value(), "another master key");
  cr_expect(err.find("does not open with this master key") != std::string::npos, "%s", err.c_str());
  err.clear();
  cr_expect(!mr::open_catalogue(bytes, master, "production", err).has_value(), "the other environment");
  cr_expect(err.find("a snapshot of environment \"sandbox\", not \"production\"") != std::string::npos, "%s",
            err.c_str());
  // The header names the environment in clear; rewriting it does not help.
  std::string relabelled = bytes;
  relabelled.replace(relabelled.find("sandbox"), 7, "product");
  err.clear();
  cr_expect(!mr::open_catalogue(relabelled, master, "product", err).has_value());
  cr_expect(err.find("does not open") != std::string::npos, "%s", err.c_str());
  for (std::size_t i : {std::size_t{0}, std::size_t{12}, std::size_t{30}, bytes.size() / 2, bytes.size() - 1}) {
    std::string bad = bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    err.clear();
    cr_expect(!mr::open_catalogue(bad, master, "sandbox", err).has_value(), "flipped byte %zu", i);
    cr_expect(!err.empty());
  }
  cr_expect(!mr::open_catalogue(bytes.substr(0, bytes.size() - 1), master, "sandbox", err).has_value(), "cut");
  cr_expect(!mr::open_catalogue("", master, "sandbox", err).has_value());
  cr_expect(err.find("not a key catalogue snapshot") != std::string::npos, "%s", err.c_str());
}

Test(catalogue_snapshot, written_whole_private_and_replaced_atomically) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/mr-catalogue-sandbox.snapshot";
  const auto master = key_of(3);
  std::string err;
  cr_assert(mr::write_catalogue_snapshot(path, two_keys(), master, "sandbox", 42, err), "%s", err.c_str());
  struct stat st{};
  cr_assert_eq(stat(path.c_str(), &st), 0);
  cr_expect_eq(st.st_mode & 07777, 0600u, "mode %o", st.st_mode & 07777);
  auto snap = mr::read_catalogue_snapshot(path, master, "sandbox", err);
  cr_assert(snap.has_value(), "%s", err.c_str());
  cr_expect_eq(snap->read_unix_ms, 42);
  // A second write replaces it; no temporary file is left beside it.
  const ino_t first = st.st_ino;
  cr_assert(mr::write_catalogue_snapshot(path, mr::KeyCatalogue{}, master, "sandbox", 43, err), "%s", err.c_str());
  cr_assert_eq(stat(path.c_str(), &st), 0);
  cr_expect_neq(st.st_ino, first, "renamed into place, not rewritten in place");
  snap = mr::read_catalogue_snapshot(path, master, "sandbox", err);
  cr_assert(snap.has_value(), "%s", err.c_str());
  cr_expect_eq(snap->catalogue.size(), 0u);
  cr_expect_eq(std::system(("test $(ls -A '" + dir + "' | wc -l) -eq 1").c_str()), 0, "a temporary file was left");
  // Readable by others: refused like any secret file.
  chmod(path.c_str(), 0644);
  err.clear();
  cr_expect(!mr::read_catalogue_snapshot(path, master, "sandbox", err).has_value());
  cr_expect(err.find("chmod 600") != std::string::npos, "%s", err.c_str());
  chmod(path.c_str(), 0600);
  // A folder that does not exist: an error, nothing written.
  cr_expect(!mr::write_catalogue_snapshot(dir + "/none/x.snapshot", two_keys(), master, "sandbox", 1, err));
  cr_expect(err.find("/none/") != std::string::npos, "%s", err.c_str());
  // A tampered file on disk.
  std::string bytes = slurp(path);
  bytes[bytes.size() - 3] = static_cast<char>(bytes[bytes.size() - 3] ^ 0x40);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  err.clear();
  cr_expect(!mr::read_catalogue_snapshot(path, master, "sandbox", err).has_value());
  cr_expect(err.find(path + ": does not open") != std::string::npos, "%s", err.c_str());
  cr_expect_eq(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}

// One rule for every secret file: regular, no group or other bits, owned
// by this user or root; the safe twin of each refusal passes.
Test(private_file, the_rule_and_its_safe_twins) {
  const std::string dir = temp_dir();
  const std::string path = dir + "/secret";
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert(fd >= 0);
    cr_assert_eq(::write(fd, "hunter2hunter2hunter2\n", 22), 22);
    ::close(fd);
  }
  std::string err;
  auto content = mr::read_private_file(path, 1024, err);
  cr_assert(content.has_value(), "%s", err.c_str());
  cr_expect_eq(*content, std::string("hunter2hunter2hunter2\n"));
  for (mode_t mode : {0640, 0604, 0620, 0602, 0644, 0660, 0610}) {
    chmod(path.c_str(), mode);
    err.clear();
    cr_expect(!mr::read_private_file(path, 1024, err).has_value(), "mode %o accepted", mode);
    cr_expect(err.find("lets group or others at a secret; chmod 600 it") != std::string::npos, "%s", err.c_str());
  }
  chmod(path.c_str(), 0400);
  cr_expect(mr::read_private_file(path, 1024, err).has_value(), "0400: %s", err.c_str());
  chmod(path.c_str(), 0600);
  cr_expect(!mr::read_private_file(path, 4, err).has_value(), "longer than allowed");
  if (geteuid() == 0) {
    cr_assert_eq(chown(path.c_str(), 65534, 65534), 0);
    err.clear();
    cr_expect(!mr::read_private_file(path, 1024, err).has_value(), "a file of uid 65534 accepted");
    cr_expect(err.find("owned by uid 65534, neither this user") != std::string::npos, "%s", err.c_str());
    cr_assert_eq(chown(path.c_str(), 0, 0), 0);
    cr_expect(mr::read_private_file(path, 1024, err).has_value(), "root's: %s", err.c_str());
  }
  err.clear();
  cr_expect(!mr::read_private_file(dir, 1024, err).has_value(), "a directory accepted");
  cr_expect(err.find("not a regular file") != std::string::npos, "%s", err.c_str());
  cr_expect(!mr::read_private_file(dir + "/none", 1024, err).has_value());
  cr_expect(err.find("No such file") != std::string::npos, "%s", err.c_str());
  cr_expect_eq(std::system(("rm -rf '" + dir + "'").c_str()), 0);
}
