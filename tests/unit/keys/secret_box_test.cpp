// Secrets at rest and the key catalogue's lookups.
#include <criterion/criterion.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "keys/key_catalogue.hpp"
#include "keys/secret_box.hpp"
#include "tests/unit/keys/master_key_of.hpp"

using mr::test::key_of;

Test(secret_box, round_trip) {
  const auto k = key_of(1);
  const std::string sealed = mr::seal(k, "the secret", "mrk_sbx_1");
  cr_assert_eq(sealed.size(), 12u + 10u + 16u);
  cr_expect(sealed.find("the secret") == std::string::npos);
  auto opened = mr::open(k, sealed, "mrk_sbx_1");
  cr_assert(opened.has_value());
  cr_expect_eq(*opened, std::string("the secret"));
  cr_expect_neq(mr::seal(k, "the secret", "mrk_sbx_1"), sealed, "a fresh nonce each time");
}

Test(secret_box, empty_plaintext_still_authenticates) {
  const auto k = key_of(3);
  const std::string sealed = mr::seal(k, "", "mrk_prd_x");
  cr_assert_eq(sealed.size(), 28u);
  auto opened = mr::open(k, sealed, "mrk_prd_x");
  cr_assert(opened.has_value());
  cr_expect(opened->empty());
  cr_expect(!mr::open(k, sealed, "mrk_prd_y").has_value());
}

Test(secret_box, tampering_fails) {
  const auto k = key_of(1);
  std::string sealed = mr::seal(k, "the secret", "mrk_sbx_1");
  cr_expect(!mr::open(k, sealed, "mrk_sbx_2").has_value(), "other AAD");
  cr_expect(!mr::open(key_of(2), sealed, "mrk_sbx_1").has_value(), "other key");
  for (std::size_t i : {std::size_t{0}, std::size_t{15}, sealed.size() - 1}) {
    std::string bad = sealed;
    bad[i] = static_cast<char>(bad[i] ^ 1);
    cr_expect(!mr::open(k, bad, "mrk_sbx_1").has_value(), "flipped byte %zu", i);
  }
  cr_expect(!mr::open(k, sealed.substr(0, 20), "mrk_sbx_1").has_value());
}

Test(secret_box, master_key_files) {
  char dir[] = "/tmp/mr-mkXXXXXX";
  cr_assert(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/master.key";
  std::string err;
  cr_assert(mr::create_master_key_file(path, err), "%s", err.c_str());
  struct stat st{};
  cr_assert_eq(stat(path.c_str(), &st), 0);
  cr_expect_eq(st.st_mode & 0777, 0600u);
  cr_expect_eq(st.st_size, 32);
  cr_expect(mr::load_master_key(path, err).has_value());
  cr_expect(!mr::create_master_key_file(path, err), "never overwrites");
  const std::string short_path = std::string(dir) + "/short.key";
  for (const std::string& content : {std::string("too short"), std::string(), std::string(31, 'k'),
                                     std::string(33, 'k'), std::string(64, 'k')}) {
    std::ofstream(short_path, std::ios::trunc) << content;
    chmod(short_path.c_str(), 0600);
    err.clear();
    cr_expect(!mr::load_master_key(short_path, err).has_value(), "%zu bytes refused", content.size());
    cr_expect(err.find("exactly 32 bytes") != std::string::npos, "%s", err.c_str());
  }
  std::ofstream(short_path, std::ios::trunc) << std::string(32, 'k');
  auto exact = mr::load_master_key(short_path, err);
  cr_assert(exact.has_value(), "%s", err.c_str());
  cr_expect_eq(exact->bytes[31], 'k');
  err.clear();
  cr_expect(!mr::load_master_key(std::string(dir) + "/none", err).has_value());
  cr_expect(err.find("/none") != std::string::npos, "%s", err.c_str());
  unlink(path.c_str());
  unlink(short_path.c_str());
  rmdir(dir);
}

Test(secret_box, key_shapes) {
  const std::string sbx = mr::new_key_id("sandbox"), prd = mr::new_key_id("production");
  cr_expect(sbx.starts_with("mrk_sbx_"));
  cr_expect(prd.starts_with("mrk_prd_"));
  const char* b64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  cr_expect_eq(sbx.size(), 8u + 24u);
  cr_expect_eq(prd.size(), 8u + 24u);
  cr_expect(sbx.find_first_not_of(b64url, 8) == std::string::npos, "%s", sbx.c_str());
  cr_expect(prd.find_first_not_of(b64url, 8) == std::string::npos, "%s", prd.c_str());
  cr_expect_neq(mr::new_key_id("sandbox"), sbx);
  const std::string secret = mr::new_secret();
  cr_expect_eq(secret.size(), 43u);  // 32 bytes, base64url without padding
  cr_expect(secret.find_first_not_of(b64url) == std::string::npos, "%s", secret.c_str());
  cr_expect_neq(mr::new_secret(), secret);
}

Test(key_catalogue, lookups) {
  mr::KeyCatalogue c;
  c.add({"mrk_sbx_a", "s1", 1, "club-a", nullptr, "1"});
  c.add({"mrk_sbx_b", "s2", 2, "club-b", nullptr, "2"});
  cr_expect_eq(c.size(), 2u);
  const mr::KeyEntry* a = c.find("mrk_sbx_a");
  cr_assert(a != nullptr);
  cr_expect_eq(a->club_id, 1);
  cr_expect_eq(a->partner_ref, std::string("club-a"));
  cr_expect(c.find("mrk_sbx_c") == nullptr);
  cr_expect(c.find("") == nullptr);
}

// A master key file group or others can read (or write) is refused, and so
// is one owned by another user: the mode and owner were never checked.
Test(secret_box, master_key_file_mode_and_owner) {
  char dir[] = "/tmp/mr-mkXXXXXX";
  cr_assert(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/master.key";
  std::string err;
  cr_assert(mr::create_master_key_file(path, err), "%s", err.c_str());
  for (mode_t mode : {0640, 0604, 0620, 0602, 0644, 0660}) {
    chmod(path.c_str(), mode);
    err.clear();
    cr_expect(!mr::load_master_key(path, err).has_value(), "mode %o accepted", mode);
    cr_expect(err.find("chmod 600") != std::string::npos, "%s", err.c_str());
  }
  chmod(path.c_str(), 0400);
  cr_expect(mr::load_master_key(path, err).has_value(), "%s", err.c_str());
  chmod(path.c_str(), 0600);
  if (geteuid() == 0) {
    cr_assert_eq(chown(path.c_str(), 65534, 65534), 0);
    err.clear();
    cr_expect(!mr::load_master_key(path, err).has_value(), "a file of uid 65534 accepted");
    cr_expect(err.find("owned by uid 65534") != std::string::npos, "%s", err.c_str());
  }
  cr_expect(!mr::load_master_key(dir, err).has_value(), "a directory accepted");
  unlink(path.c_str());
  rmdir(dir);
}

Test(secret_box, derived_keys) {
  mr::MasterKey a, b;
  a.bytes.fill(1);
  b.bytes.fill(2);
  auto a1 = mr::derive_key(a, "one"), a1again = mr::derive_key(a, "one"), a2 = mr::derive_key(a, "two");
  auto b1 = mr::derive_key(b, "one");
  cr_assert(a1 && a1again && a2 && b1);
  cr_expect(*a1 == *a1again);
  cr_expect(*a1 != *a2);
  cr_expect(*a1 != *b1);
  cr_expect(std::vector<unsigned char>(a1->begin(), a1->end()) !=
            std::vector<unsigned char>(a.bytes.begin(), a.bytes.end()));
}
