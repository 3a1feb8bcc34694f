// The events API while the books change (contract section 10): writers on
// four threads settle, reverse and upsert while a reader pages
// GET /api/v1/events from its last nextAfter, small pages, all the time.
// The reader sees every event of the writers' members exactly once, and
// each member's memberSequence values are exactly 1..n (no order between
// events is promised: memberSequence is what orders a member's).
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"

using namespace mr::test;

namespace {

struct Seen {
  std::string id, type, member;
  std::int64_t sequence = 0;
};

// One page from `after` (empty: from the oldest kept); returns nextAfter.
std::string page(MrClient& c, const std::string& after, int limit, std::vector<Seen>& out) {
  const std::string path = "/api/v1/events?limit=" + std::to_string(limit) + (after.empty() ? "" : "&after=" + after);
  HttpResponse r = c.get(path);
  cr_assert_eq(r.status, 200, "%s: %s", path.c_str(), r.body.c_str());
  rapidjson::Document d = data_of(r);
  cr_assert(d.HasMember("entries") && d["entries"].IsArray(), "%s", r.body.c_str());
  for (const auto& e : d["entries"].GetArray()) {
    Seen s;
    s.id = e["id"].GetString();
    s.type = e["type"].GetString();
    s.member = e["data"]["externalMemberId"].GetString();
    s.sequence = e["data"]["memberSequence"].GetInt64();
    cr_expect(e.HasMember("createdAt") && e.HasMember("environment"), "%s", r.body.c_str());
    out.push_back(std::move(s));
  }
  if (!d.HasMember("nextAfter") || d["nextAfter"].IsNull()) return after;
  return d["nextAfter"].GetString();
}

}  // namespace

Test(events_paging, a_reader_paging_beside_writers_sees_each_event_once, .timeout = 180) {
  auto c = client("A");
  // Start from the end of what is already there.
  std::vector<Seen> ignored;
  std::string cursor;
  for (int i = 0; i < 10000; ++i) {
    const std::size_t before = ignored.size();
    cursor = page(c, cursor, 100, ignored);
    if (ignored.size() - before < 100) break;
  }

  const std::string prefix = unique("evp");
  std::vector<std::string> members;
  for (int i = 0; i < 8; ++i) members.push_back(onboard_member(c, "club-a"));
  std::atomic<bool> writing{true};
  std::atomic<int> writes{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      auto w = client("A");
      for (int i = 0; i < 60; ++i) {
        const std::string& m = members[static_cast<std::size_t>((t * 60 + i) % 8)];
        const std::string tx = prefix + "-" + std::to_string(t) + "-" + std::to_string(i);
        HttpResponse r = post(w, "/api/v1/transactions/settled", settle_body("club-a", m, tx, 1000));
        cr_expect_eq(r.status, 200, "%s", r.body.c_str());
        if (i % 4 == 3) {
          r = post(w, "/api/v1/transactions/reversed", reverse_body("club-a", m, tx, 500));
          cr_expect_eq(r.status, 200, "%s", r.body.c_str());
        }
        writes++;
      }
    });
  }
  std::vector<Seen> seen;
  std::thread reader([&] {
    while (writing) cursor = page(c, cursor, 7, seen);
  });
  for (auto& w : writers) w.join();
  writing = false;
  reader.join();

  // What the writers' members have in the database, then page on until the
  // reader has all of it (an event is listed shortly after its commit).
  std::set<std::string> mine(members.begin(), members.end());
  const int want = 8 /* member.created */ + 4 * 60 /* settled */ + 4 * 15 /* reversed */;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto count_mine = [&] {
    int n = 0;
    for (const auto& e : seen) n += mine.contains(e.member) ? 1 : 0;
    return n;
  };
  while (count_mine() < want && std::chrono::steady_clock::now() < deadline) {
    const std::size_t before = seen.size();
    cursor = page(c, cursor, 50, seen);
    if (seen.size() == before) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  std::set<std::string> ids;
  std::map<std::string, std::set<std::int64_t>> sequences;
  int twice = 0, gaps = 0;
  for (const auto& e : seen) {
    if (!ids.insert(e.id).second && ++twice <= 3) cr_expect(false, "event %s listed twice", e.id.c_str());
    if (mine.contains(e.member)) sequences[e.member].insert(e.sequence);
  }
  for (const auto& [member, seqs] : sequences) {
    const bool dense = !seqs.empty() && *seqs.begin() == 1 && *seqs.rbegin() == static_cast<std::int64_t>(seqs.size());
    if (!dense && ++gaps <= 3) {
      cr_expect(false, "member %s: %zu sequences from %lld to %lld", member.c_str(), seqs.size(),
                static_cast<long long>(*seqs.begin()), static_cast<long long>(*seqs.rbegin()));
    }
  }
  cr_expect_eq(twice, 0);
  cr_expect_eq(gaps, 0);
  cr_expect_eq(sequences.size(), members.size());
  cr_expect_eq(count_mine(), want, "the reader saw %d of the writers' %d events", count_mine(), want);
  cr_expect_eq(writes.load(), 240);
}
