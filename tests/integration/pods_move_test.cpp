// Moving a club between pods under load (mrctl club move,
// mr_club_export, mr_club_import). Settles retried with their idempotency keys, as a
// partner retries a 503, run on the club while it moves home -> b, nginx
// reloads, b -> home, reload again; balance reads run all along; an events
// consumer pages on from a cursor it got before the first move. Every
// award is in the books exactly once, replays answer the acknowledged
// body, the consumer sees every event once with gapless memberSequence,
// deliveries go on from the club's new pod, both pods' audits are clean,
// and a finished move leaves none of the club's rows where it was.
#include <criterion/criterion.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/ledger_helpers.hpp"
#include "tests/integration/own_node.hpp"
#include "tests/integration/pod_stack.hpp"
#include "tests/integration/retried_load.hpp"
#include "tests/integration/row_gate.hpp"
#include "tests/integration/webhook_receiver.hpp"

namespace {

using namespace mr::test;
using namespace std::chrono_literals;

// An events consumer: pages from its cursor until a page comes back empty,
// keeping every entry it was shown.
struct Consumer {
  std::string cursor;
  std::vector<std::string> ids;
  std::map<std::string, std::vector<std::int64_t>> sequences;  // member -> memberSequence as shown
  std::set<std::string> settled_txs;
  void page_to_end(mr::MrClient& c) {
    for (;;) {
      const auto r = c.get("/api/v1/events?limit=25" + (cursor.empty() ? "" : "&after=" + cursor));
      cr_assert_eq(r.status, 200, "events: %s", r.body.c_str());
      const auto data = data_of(r);
      // Before any event shows, the first page has no cursor to hand out.
      if (data["nextAfter"].IsString()) cursor = data["nextAfter"].GetString();
      const auto& entries = data["entries"];
      if (entries.Empty()) return;
      for (const auto& e : entries.GetArray()) {
        ids.push_back(s(e, "id"));
        const auto& d = e["data"];
        sequences[s(d, "externalMemberId")].push_back(i64(d, "memberSequence"));
        if (s(e, "type") == "transaction.settled") settled_txs.insert(s(d, "externalTransactionId"));
      }
    }
  }
};

// mrctl against the catalogue `dsn`, expected to fail: what it said.
std::string mrctl_refused(const std::string& dsn, const std::string& args) {
  const Run r = run("'" + env("MR_MRCTL") + "' --dsn '" + dsn + "' --master-key '" + env("MR_MASTER_KEY_FILE") +
                    "' " + args);
  cr_expect_neq(r.rc, 0, "mrctl %s succeeded: %s", args.c_str(), r.out.c_str());
  return r.out;
}

// The club's rows in one database, by table (the clubs row aside).
std::string books_in(const std::string& dsn, const std::string& club_id) {
  return psql_value(dsn,
                    "SELECT (SELECT count(*) FROM members WHERE club_id = " + club_id + ") || ' ' || "
                    "(SELECT count(*) FROM ledger_entries WHERE club_id = " + club_id + ") || ' ' || "
                    "(SELECT count(*) FROM idempotency_records WHERE club_id = " + club_id + ") || ' ' || "
                    "(SELECT count(*) FROM events WHERE club_id = " + club_id + ") || ' ' || "
                    "(SELECT count(*) FROM webhook_endpoints WHERE club_id = " + club_id + ") || ' ' || "
                    "(SELECT count(*) FROM event_cursor_aliases WHERE club_id = " + club_id + ") || ' ' || "
                    "(SELECT coalesce(sum(points), 0) FROM club_pool_stripes WHERE club_id = " + club_id + ")");
}

// The command for write_sql of a settle `tx` of member m1.
std::string settle_of_m1(const std::string& tx) {
  return "'eventId', 'e1', 'occurredAt', '2026-11-20T10:00:00Z', 'externalMemberId', 'm1', "
         "'externalTransactionId', '" + tx + "', 'merchantId', 'x', 'merchantName', 'X', 'amountMinor', 5000, "
         "'currency', 'GBP', 'settledAt', '2026-11-20T10:00:01Z'";
}

}  // namespace

Test(pods_move, a_club_moved_under_load_loses_and_doubles_nothing, .timeout = 240) {
  const TwoPods pods("pods_move");
  const auto& [home, b] = pods;
  const Club club = make_club(home.dsn(), "move-club", "");
  const std::string id = club_id_of(home.dsn(), "move-club");

  Node node(home_node_conf(home.dsn(), true));
  node.start();
  mr::MrClient c(node.base_url(), club.key_id, club.secret);
  WebhookReceiver hooks;
  add_endpoint(c, club.ref, hooks.url("/move"));

  std::vector<std::string> members;
  for (int i = 0; i < 4; ++i) members.push_back(onboard_member(c, club.ref));
  const std::string prefix = unique("mv");
  // Where each award was before each finish-move: what a lost one's report
  // says (seen under heavy load: an award acknowledged, absent from the
  // books at the end, both audits clean; the cause is the next test's).
  std::vector<std::pair<std::string, std::string>> seen;  // "pod when" -> award transactions there
  const auto note_awards = [&](const std::string& when) {
    for (const auto& [pod, dsn] : {std::pair{std::string("home"), home.dsn()}, std::pair{std::string("b"), b.conninfo}}) {
      seen.emplace_back(pod + " " + when,
                        " " + psql_value(dsn, "SELECT coalesce(string_agg(external_tx_id, ' '), '') FROM ledger_entries "
                                              "WHERE entry_type = 'earn_award' AND external_tx_id LIKE '" + prefix +
                                              "-%'") + " ");
    }
  };
  auto awards = plan_awards(members, 50, prefix, club.ref);
  // The consumer's cursor from before the move: it has seen the members.
  // (An event shows once every transaction older than it has ended: other
  // tests' transactions on the same server may hold it back a little.)
  Consumer consumer;
  cr_assert(eventually([&] {
    consumer.page_to_end(c);
    return consumer.ids.size() >= 4;
  }, 30s));
  cr_assert_eq(consumer.ids.size(), 4u);

  // The load: every award retried until acknowledged, with its own key.
  // The second half waits for the first move to have returned, so that
  // writes certainly meet the moved club before the reload (left free,
  // the writers could finish all 200 while a slow mrctl, a sanitized one,
  // is starting, and none would be refused).
  std::atomic<std::size_t> next{0};
  std::atomic<int> acked{0};
  std::atomic<bool> moved{false}, retried_any{false};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      mr::MrClient w(node.base_url(), club.key_id, club.secret);
      for (std::size_t i; (i = next++) < awards.size();) {
        while (i >= awards.size() / 2 && !moved) std::this_thread::sleep_for(5ms);
        apply_with_retries(awards[i], [&](int attempt) -> mr::MrClient& {
          if (attempt > 0 && moved) retried_any = true;  // refused after the move, not before
          return w;
        });
        if (awards[i].acked) acked++;
      }
    });
  }
  // Reads all along: a balance is answered whatever the moves are at
  // (a connection closed by a reload is asked again).
  std::atomic<bool> stop_reads{false};
  std::atomic<int> reads_ok{0}, reads_failed{0};
  std::string read_failure;
  std::thread reader([&] {
    mr::MrClient r(node.base_url(), club.key_id, club.secret);
    while (!stop_reads) {
      const auto got = r.get("/api/v1/members/" + members[0] + "/balance");
      if (got.status == 200) {
        reads_ok++;
      } else if (got.status != 0) {
        reads_failed++;
        read_failure = std::to_string(got.status) + " " + got.body;
      }
    }
  });
  const auto wait_acked = [&](int n) {
    cr_assert(eventually([&] { return acked >= n; }, 60s), "only %d acknowledged", acked.load());
  };
  // A reload, done once the workers from before it have exited: until
  // then they route the club to the pod it left (the operator's "every
  // node has reloaded" before club finish-move).
  const auto reload = [&] {
    const auto old_workers = children_of(node.master_pid());
    cr_assert_eq(run(node.nginx("-s reload")).rc, 0, "%s", node.log().c_str());
    cr_assert(eventually(
                  [&] {
                    const auto now = children_of(node.master_pid());
                    return std::none_of(old_workers.begin(), old_workers.end(),
                                        [&](pid_t p) { return now.contains(p); });
                  },
                  30s),
              "the workers from before the reload are still there");
  };

  wait_acked(30);
  const std::string first_acked_key = [&] {
    for (const auto& a : awards) {
      if (a.acked) return a.key;
    }
    return std::string();
  }();
  const int reads_before = reads_ok;
  const std::string out = mrctl(home.dsn(), "club move --ref move-club --to b");
  moved = true;
  cr_expect(out.find("\"to\":\"b\"") != std::string::npos, "%s", out.c_str());
  cr_expect_eq(psql_value(home.dsn(), "SELECT pod FROM clubs WHERE club_id = " + id), std::string("b"));
  // Until the reload the workers route the club to the pod it left, which
  // refuses its writes: some award is answered 503 and tried again.
  cr_expect(eventually([&] { return retried_any.load(); }, 30s), "no write was refused while the club moved");
  reload();
  wait_acked(100);
  // The consumer goes on in pod b from its cursor of the home pod.
  consumer.page_to_end(c);
  note_awards("before the first finish-move");
  mrctl(home.dsn(), "club finish-move --ref move-club");
  cr_expect_eq(books_in(home.dsn(), id), std::string("0 0 0 0 0 0 0"), "home kept rows of the moved club");

  const std::string back = mrctl(home.dsn(), "club move --ref move-club --to home");
  cr_expect(back.find("\"to\":\"home\"") != std::string::npos, "%s", back.c_str());
  reload();
  for (auto& t : writers) t.join();
  note_awards("before the second finish-move");
  mrctl(home.dsn(), "club finish-move --ref move-club");
  cr_expect_eq(psql_value(b.conninfo, "SELECT count(*) FROM clubs WHERE club_id = " + id), std::string("0"));
  cr_expect_eq(books_in(b.conninfo, id), std::string("0 0 0 0 0 0 0"), "pod b kept rows of the moved club");
  stop_reads = true;
  reader.join();
  cr_expect_eq(reads_failed.load(), 0, "%d reads failed, last: %s", reads_failed.load(), read_failure.c_str());
  cr_expect_gt(reads_ok.load(), reads_before, "no read answered while the club moved");

  // The writes did pause: some award was answered 503 (or refused by a
  // worker not yet reloaded) and retried.
  const auto retried = std::count_if(awards.begin(), awards.end(), [](const Award& a) { return a.attempts > 1; });
  std::fprintf(stderr, "pods_move: %ld of %zu awards retried; moves: %s%s", static_cast<long>(retried),
               awards.size(), out.c_str(), back.c_str());
  cr_expect_gt(retried, 0, "no write was refused while the club moved");

  // Every award once, every acknowledged one there; audits of every pod.
  note_awards("at the end");
  const std::string& home_at_end = seen[seen.size() - 2].second;
  for (const auto& a : awards) {
    if (home_at_end.find(" " + a.tx + " ") != std::string::npos) continue;
    std::string where;
    for (const auto& [when, txs] : seen) {
      if (txs.find(" " + a.tx + " ") != std::string::npos) where += "; in " + when;
    }
    std::fprintf(stderr, "pods_move: award %s missing at the end: acked %d after %d attempts, replayed %d, "
                         "answer %s%s\n",
                 a.tx.c_str(), a.acked, a.attempts, a.replayed, a.final_body.c_str(), where.c_str());
  }
  expect_each_applied_once(c, awards, prefix, home.dsn());
  // A key acknowledged before the moves, its Redis record gone (and the
  // workers that cached it replaced by the reloads): replayed with the same
  // body by the database's record, which moved there and back.
  for (const auto& a : awards) {
    if (a.key != first_acked_key) continue;
    cr_assert_eq(sh(redis_cli() + "DEL 'mr:idem:" + id + ":" + a.key + "' >/dev/null"), 0);
    const auto from_db = c.post("/api/v1/transactions/settled", a.body, a.key);
    cr_expect_eq(from_db.status, 200, "%s", from_db.body.c_str());
    cr_expect_eq(header(from_db, "x-mr-idempotent-replay"), std::string("true"));
    cr_expect_eq(from_db.body, a.final_body);
  }

  // The consumer, from its cursor of pod b, now in home: every event once,
  // each member's sequence gapless, every award's event among them.
  cr_expect(eventually([&] {
    consumer.page_to_end(c);
    return consumer.ids.size() >= 4 + awards.size();
  }, 30s));
  cr_expect_eq(std::set<std::string>(consumer.ids.begin(), consumer.ids.end()).size(), consumer.ids.size(),
               "an event was shown twice");
  // No order between events is promised (memberSequence orders a
  // member's): each member's values are exactly 1..n.
  for (auto [member, seq] : consumer.sequences) {
    std::sort(seq.begin(), seq.end());
    for (std::size_t i = 0; i < seq.size(); ++i) {
      cr_expect_eq(seq[i], static_cast<std::int64_t>(i + 1), "member %s: sequence %lld at %zu", member.c_str(),
                   static_cast<long long>(seq[i]), i);
    }
  }
  cr_expect_eq(consumer.ids.size(), 4 + awards.size());
  int missing = 0;
  for (const auto& a : awards) missing += consumer.settled_txs.count(a.tx) == 0 ? 1 : 0;
  cr_expect_eq(missing, 0, "%d awards' events not shown", missing);

  // Deliveries went on from each pod the club was in: every award's event
  // reached the endpoint.
  const auto all_delivered = [&](const std::vector<ReceivedHook>& got) {
    std::set<std::string> seen;
    for (const auto& h : got) {
      for (const auto& a : awards) {
        if (h.body.find("\"" + a.tx + "\"") != std::string::npos) seen.insert(a.tx);
      }
    }
    return seen.size() == awards.size();
  };
  cr_expect(hooks.wait_for(all_delivered, 30s), "deliveries: %zu\n%s", hooks.count(), node.log().c_str());
}

// A settle that passed the pause's check before the mark and wrote after
// it (held here on its key's lock across the mark, then with its
// transaction left open): the move waits for it, so the copy has its
// award. The transactions to wait for cannot come from a snapshot's
// running list, which holds only xids below the snapshot's xmax (the
// newest ended xid + 1): this settle, newer than anything ended, would be
// in no list, the copy would go without its award and finish-move would
// remove it from the pod it was answered in (under load the test above
// would meet that only rarely).
Test(pods_move, a_write_that_passed_the_check_before_the_mark_is_in_the_copy, .timeout = 120) {
  const TwoPods pods("pods_late");
  const auto& [home, b] = pods;
  const std::string id = club_with_member(pods, "late-club").id;
  const auto connect = [&] {
    Pg c(PQconnectdb(home.dsn().c_str()));
    cr_assert(PQstatus(c.get()) == CONNECTION_OK, "%s", PQerrorMessage(c.get()));
    return c;
  };
  // The settle's key locked by another session (as a retry of it holds it).
  const Pg key_holder = connect(), writer = connect();
  const std::string key_lock = "hashtextextended('" + id + ":k-late', 0)";
  one(key_holder.get(), "SELECT pg_advisory_lock(" + key_lock + ")");
  one(writer.get(), "BEGIN");
  const std::string settle = write_sql(id, "late-club", "settle", "k-late", settle_of_m1("t-late"));
  cr_assert_eq(PQsendQuery(writer.get(), settle.c_str()), 1, "%s", PQerrorMessage(writer.get()));
  const std::string writer_pid = std::to_string(PQbackendPID(writer.get()));
  // Past the check (the club not moving), waiting for its key.
  cr_assert(eventually([&] {
    return psql_value(home.dsn(), "SELECT wait_event_type FROM pg_stat_activity WHERE pid = " + writer_pid) == "Lock";
  }, 30s));

  std::atomic<bool> mover_done{false};
  Run moved;
  std::thread mover([&] {
    moved = run("'" + env("MR_MRCTL") + "' --dsn '" + home.dsn() + "' --master-key '" + env("MR_MASTER_KEY_FILE") +
                "' club move --ref late-club --to b --wait-seconds 60");
    mover_done = true;
  });
  cr_assert(eventually([&] {
    return psql_value(home.dsn(), "SELECT moving FROM clubs WHERE club_id = " + id) == "t";
  }, 30s), "no mark");
  // The mark is committed: the settle takes its key and writes, its xid
  // newer than the mark's, and its transaction stays open.
  one(key_holder.get(), "SELECT pg_advisory_unlock(" + key_lock + ")");
  std::string outcome;
  while (PGresult* r = PQgetResult(writer.get())) {
    outcome = PQresultStatus(r) == PGRES_TUPLES_OK ? PQgetvalue(r, 0, 0) : PQresultErrorMessage(r);
    PQclear(r);
  }
  cr_assert_eq(outcome, std::string("ok"));
  // The mover waits for it among the xids every session holds (or has
  // gone on without it: the fault), then the settle commits.
  cr_assert(eventually([&] {
    return mover_done || psql_value(home.dsn(), "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                                "current_database() AND pid <> pg_backend_pid() "
                                                "AND query LIKE '%backend_xid = ANY%'") != "0";
  }, 60s), "the mover neither finished nor waited for the settle");
  const bool finished_early = mover_done;
  one(writer.get(), "COMMIT");
  mover.join();
  cr_assert_eq(moved.rc, 0, "%s", moved.out.c_str());
  cr_expect(!finished_early, "the move finished while the settle it had to wait for was still open");
  const std::string summary = "SELECT mr_club_summary(" + id + ")";
  cr_expect_eq(psql_value(b.conninfo, summary), psql_value(home.dsn(), summary), "the copy lacks the settle");
  cr_expect_eq(psql_value(b.conninfo, "SELECT count(*) FROM ledger_entries WHERE club_id = " + id +
                                      " AND external_tx_id = 't-late'"),
               std::string("1"));
  mrctl(home.dsn(), "club finish-move --ref late-club");
  cr_expect_eq(psql_value(b.conninfo, "SELECT mr_write('settle', " + id + ", 'late-club', 'k-late', 'f', 'r', "
                                      "'{}') ->> 'replayed'"),
               std::string("true"));
  mrctl(home.dsn(), "audit");
}

// What club move refuses changes nothing: an unknown pod, the club's own
// pod, books that do not pass the audit (the copy rolled back, the mark
// cleared, writes resume where the club is), a target still holding the
// club's books (a move not finished).
Test(pods_move, a_refused_move_changes_nothing, .timeout = 120) {
  const TwoPods pods("pods_refuse");
  const auto& [home, b] = pods;
  const std::string id = club_with_member(pods, "refuse-club").id;
  const auto where = [&] {
    return psql_value(home.dsn(), "SELECT coalesce(pod, 'home') || ' ' || moving FROM clubs WHERE club_id = " + id);
  };

  std::string out = mrctl_refused(home.dsn(), "club move --ref refuse-club --to nowhere");
  cr_expect(out.find("no pod nowhere") != std::string::npos, "%s", out.c_str());
  out = mrctl_refused(home.dsn(), "club move --ref refuse-club --to home");
  cr_expect(out.find("already in pod home") != std::string::npos, "%s", out.c_str());
  cr_expect_eq(where(), std::string("home false"));
  // The mark an interrupted move left: lifted by a move to where it is.
  psql_value(home.dsn(), "UPDATE clubs SET moving = true WHERE club_id = " + id);
  out = mrctl(home.dsn(), "club move --ref refuse-club --to home");
  cr_expect(out.find("\"markLifted\":true") != std::string::npos, "%s", out.c_str());
  cr_expect_eq(where(), std::string("home false"));

  // A balance its entries do not explain: the source's audit stops the move.
  psql_value(home.dsn(), "UPDATE members SET available = available + 1 WHERE club_id = " + id);
  out = mrctl_refused(home.dsn(), "club move --ref refuse-club --to b");
  cr_expect(out.find("audit") != std::string::npos && out.find("writes resumed") != std::string::npos, "%s",
            out.c_str());
  cr_expect_eq(where(), std::string("home false"));
  cr_expect_eq(psql_value(b.conninfo, "SELECT count(*) FROM clubs"), std::string("0"));
  psql_value(home.dsn(), "UPDATE members SET available = available - 1 WHERE club_id = " + id);

  // Moved but not finished: home still holds the books, so no move back yet.
  mrctl(home.dsn(), "club move --ref refuse-club --to b");
  cr_expect_eq(where(), std::string("b true"));
  out = mrctl_refused(home.dsn(), "club move --ref refuse-club --to home");
  cr_expect(out.find("already holds books") != std::string::npos, "%s", out.c_str());
  cr_expect_eq(psql_value(b.conninfo, "SELECT moving FROM clubs WHERE club_id = " + id), std::string("f"));
  mrctl(home.dsn(), "club finish-move --ref refuse-club");
  mrctl(home.dsn(), "club move --ref refuse-club --to home");
  cr_expect_eq(where(), std::string("home false"));
  cr_expect_eq(psql_value(home.dsn(), "SELECT count(*) FROM members WHERE club_id = " + id), std::string("1"));
  mrctl(home.dsn(), "audit");
}

namespace {

// A response's data, serialized again: what the partner reads, without the
// envelope's per-request fields.
std::string data_text(const mr::HttpResponse& r) {
  cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  const auto d = data_of(r);
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  d.Accept(w);
  return buf.GetString();
}

// A redemption accepted (202): its redemption and payout ids.
std::pair<std::string, std::string> redeem(mr::MrClient& c, const std::string& ref, const std::string& member,
                                           const std::string& request_id, std::int64_t points) {
  const auto r = c.post("/api/v1/redemptions", redeem_body(ref, member, request_id, points), unique("idem"));
  cr_assert_eq(r.status, 202, "%s", r.body.c_str());
  const auto d = data_of(r);
  return {s(d, "redemptionId"), s(d["payout"], "payoutId")};
}

}  // namespace

// Every kind of row a club's books hold moves whole: reversals (whole and
// partial), wallets, a member without one, a closed member, a manual
// adjustment, redemptions whose payouts are pending, succeeded and failed,
// with redemptions attempted (and retried on 503) while the club moves.
// Afterwards what the partner reads of the members not written meanwhile is
// the same, the pending payout completes in the new pod and its event is
// delivered, a requestId used before the move is still a duplicate, and
// the audit of both pods is clean.
Test(pods_move, every_kind_of_row_moves_whole, .timeout = 180) {
  const TwoPods pods("pods_books");
  const auto& [home, b] = pods;
  const Club club =
      make_club(home.dsn(), "books-club", "--redemption-rate-minor 1 --payout-currency GBP --min-redemption 10");
  mrctl(home.dsn(), "capacity topup --ref books-club --minor 100000000");
  const std::string id = club_id_of(home.dsn(), "books-club");

  Node node(home_node_conf(home.dsn(), true));
  node.start();
  mr::MrClient c(node.base_url(), club.key_id, club.secret);
  WebhookReceiver hooks;
  add_endpoint(c, club.ref, hooks.url("/books"));

  const auto settle = [&](const std::string& member, const std::string& tx, std::int64_t minor) {
    const auto r = c.post("/api/v1/transactions/settled", settle_body(club.ref, member, tx, minor), unique("idem"));
    cr_assert_eq(r.status, 200, "%s", r.body.c_str());
  };
  // Members: each one kind of history.
  const std::string reversed = onboard_member(c, club.ref), pending = onboard_member(c, club.ref),
                    done = onboard_member(c, club.ref), failed = onboard_member(c, club.ref),
                    adjusted = onboard_member(c, club.ref), closed = onboard_member(c, club.ref),
                    live = onboard_member(c, club.ref);
  const std::string walletless = unique("mem");
  cr_assert_eq(c.post("/api/v1/members", member_body(club.ref, walletless, false), unique("k")).status, 201);
  for (const auto& m : {reversed, pending, done, failed, adjusted, closed, live, walletless}) {
    settle(m, unique("tx"), 100000);
  }
  const std::string tx_whole = unique("tx"), tx_part = unique("tx");
  settle(reversed, tx_whole, 5000);
  settle(reversed, tx_part, 7000);
  cr_assert_eq(c.post("/api/v1/transactions/reversed", reverse_body(club.ref, reversed, tx_whole, 0), unique("k"))
                   .status, 200);
  cr_assert_eq(c.post("/api/v1/transactions/reversed", reverse_body(club.ref, reversed, tx_part, 3000), unique("k"))
                   .status, 200);
  const auto [pending_rd, pending_po] = redeem(c, club.ref, pending, unique("rq"), 300);
  const std::string done_rq = unique("rq");
  const auto [done_rd, done_po] = redeem(c, club.ref, done, done_rq, 200);
  const auto [failed_rd, failed_po] = redeem(c, club.ref, failed, unique("rq"), 100);
  cr_assert_eq(node.ops_post("/payouts/" + done_po + "/succeed").status, 200);
  cr_assert_eq(node.ops_post("/payouts/" + failed_po + "/fail", R"({"reason":"bank said no"})").status, 200);
  mrctl(home.dsn(), "member adjust --ref books-club --member " + adjusted + " --points 7 --reason goodwill");
  mrctl(home.dsn(), "member adjust --ref books-club --member " + adjusted + " --points -3 --reason correction");
  const auto closing =
      c.post("/api/v1/members/" + closed + "/close", Json().str("partnerRef", club.ref).done(), unique("k"));
  cr_assert_eq(closing.status, 200, "%s", closing.body.c_str());
  cr_assert_eq(psql_value(home.dsn(), "SELECT count(*) FROM wallets JOIN members USING (member_id) WHERE club_id = " + id),
               std::string("7"));

  // What the partner reads of every member not written while the club moves.
  const auto reads = [&] {
    std::map<std::string, std::string> out;
    for (const auto& m : {reversed, pending, done, failed, adjusted, closed, walletless}) {
      const std::string base = "/api/v1/members/" + m;
      out[m + " balance"] = data_text(c.get(base + "/balance"));
      out[m + " points"] = data_text(c.get(base + "/points?limit=100"));
      out[m + " transactions"] = data_text(c.get(base + "/transactions?limit=100"));
      out[m + " redemptions"] = data_text(c.get("/api/v1/redemptions?limit=100&externalMemberId=" + m));
    }
    for (const auto& rd : {pending_rd, done_rd, failed_rd}) out[rd] = data_text(c.get("/api/v1/redemptions/" + rd));
    return out;
  };
  const auto before = reads();
  const std::string all_before = data_text(c.get("/api/v1/redemptions?limit=100"));

  // Redemptions of `live` all along the move, each retried on 503 with its
  // key, paced and at most kRedemptions: unpaced, a slow move let 100 of 10
  // points drain live's 1,000 (a 422) and push older ones off the list's
  // first page of 100.
  constexpr int kRedemptions = 60;
  std::atomic<bool> stop{false};
  std::atomic<int> redeemed{0}, refused{0};
  std::string unexpected;
  std::thread redeemer([&] {
    mr::MrClient w(node.base_url(), club.key_id, club.secret);
    while (!stop && redeemed < kRedemptions) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const std::string body = redeem_body(club.ref, live, unique("rq"), 10), key = unique("idem");
      for (;;) {
        const auto r = w.post("/api/v1/redemptions", body, key);
        if (r.status == 202) {
          redeemed++;
          break;
        }
        if (!transient(r)) {
          unexpected = std::to_string(r.status) + " " + r.body;
          return;
        }
        refused++;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  });
  cr_assert(eventually([&] { return redeemed >= 3; }, 30s));
  const std::string out = mrctl(home.dsn(), "club move --ref books-club --to b");
  const auto old_workers = children_of(node.master_pid());
  cr_assert_eq(run(node.nginx("-s reload")).rc, 0, "%s", node.log().c_str());
  cr_assert(eventually([&] {
    const auto now = children_of(node.master_pid());
    return std::none_of(old_workers.begin(), old_workers.end(), [&](pid_t p) { return now.contains(p); });
  }, 30s));
  const int after_reload = redeemed;
  cr_assert(eventually([&] { return redeemed >= after_reload + 3 || !unexpected.empty(); }, 30s),
            "%d redemptions, %d after the reload (at most %d)", redeemed.load(), after_reload, kRedemptions);
  stop = true;
  redeemer.join();
  cr_expect(unexpected.empty(), "a redemption while moving: %s", unexpected.c_str());
  std::fprintf(stderr, "pods_move books: %d redemptions, %d refused and retried; %s", redeemed.load(), refused.load(),
               out.c_str());
  mrctl(home.dsn(), "club finish-move --ref books-club");
  cr_expect_eq(books_in(home.dsn(), id), std::string("0 0 0 0 0 0 0"), "home kept rows of the moved club");

  // The same reads, byte for byte, from pod b.
  const auto after = reads();
  for (const auto& [what, text] : before) {
    cr_expect_eq(after.at(what), text, "%s changed:\n%s\n%s", what.c_str(), text.c_str(), after.at(what).c_str());
  }
  // The whole list: what it was, with the live member's redemptions ahead.
  const std::string all_after = data_text(c.get("/api/v1/redemptions?limit=100"));
  const auto list_ids = [](const std::string& text) {
    std::vector<std::string> ids;
    const auto d = parse_json(text);  // the document outlives the loop (a temporary's member would not)
    for (const auto& e : d["entries"].GetArray()) ids.push_back(e["redemptionId"].GetString());
    return ids;
  };
  const auto ids_before = list_ids(all_before), ids_after = list_ids(all_after);
  cr_expect_eq(ids_after.size(), ids_before.size() + static_cast<std::size_t>(redeemed.load()), "%s", all_after.c_str());
  const std::set<std::string> after_set(ids_after.begin(), ids_after.end());
  for (const auto& rd : ids_before) cr_expect(after_set.contains(rd), "%s is gone from the list", rd.c_str());
  // Every redemption of the live member there once: its balance says so.
  const auto live_balance = data_of(c.get("/api/v1/members/" + live + "/balance"));
  cr_expect_eq(i64(live_balance, "pointsBalance"), 1000 - 10 * redeemed.load(), "redeemed %d",
               redeemed.load());

  // A requestId of before the move is still a duplicate, naming its redemption.
  const auto dup = c.post("/api/v1/redemptions", redeem_body(club.ref, done, done_rq, 5), unique("idem"));
  cr_expect_eq(dup.status, 409, "%s", dup.body.c_str());
  cr_expect(dup.body.find("duplicate_request_id") != std::string::npos && dup.body.find(done_rd) != std::string::npos,
            "%s", dup.body.c_str());

  // The pending payout completes in pod b, and its event goes out from there.
  const auto succeeded = node.ops_post("/payouts/" + pending_po + "/succeed");
  cr_expect_eq(succeeded.status, 200, "%s", succeeded.body.c_str());
  cr_expect_eq(psql_value(b.conninfo, "SELECT status FROM redemptions WHERE redemption_id = '" + pending_rd + "'"),
               std::string("completed"));
  cr_expect(hooks.wait_for([&](const std::vector<ReceivedHook>& got) {
    return std::any_of(got.begin(), got.end(), [&](const ReceivedHook& h) {
      return h.body.find("redemption.completed") != std::string::npos && h.body.find(pending_rd) != std::string::npos;
    });
  }, 30s), "the completed payout's event was not delivered\n%s", node.log().c_str());
  mrctl(home.dsn(), "audit");
}

// A move stopped between the copy's commit and the directory's flip (the
// state reproduced: a move, then the directory row set back): the club is
// paused with its books on both pods. The same move again flips the
// directory once the target's copy matches the still paused source, and
// says so; with the source's books differing it refuses and changes nothing.
Test(pods_move, a_move_stopped_before_the_flip_resumes, .timeout = 120) {
  const TwoPods pods("pods_resume");
  const auto& [home, b] = pods;
  const std::string id = club_with_member(pods, "resume-club").id;
  cr_assert_eq(psql_value(home.dsn(), write_sql(id, "resume-club", "settle", "k2", settle_of_m1("t1"))),
               std::string("ok"));
  const auto where = [&] {
    return psql_value(home.dsn(), "SELECT coalesce(pod, 'home') || ' ' || moving FROM clubs WHERE club_id = " + id);
  };

  mrctl(home.dsn(), "club move --ref resume-club --to b");
  // The crash: the copy committed in b, the directory never flipped.
  psql_value(home.dsn(), "UPDATE clubs SET pod = NULL WHERE club_id = " + id);
  cr_assert_eq(where(), std::string("home true"));
  const std::string in_b = books_in(b.conninfo, id), summary = "SELECT mr_club_summary(" + id + ")";
  cr_assert_eq(psql_value(b.conninfo, summary), psql_value(home.dsn(), summary));

  // The source's books differ from the copy (a row the copy lacks): refused.
  psql_value(home.dsn(), "INSERT INTO idempotency_records (club_id, idem_key, fingerprint, result) "
                         "VALUES (" + id + ", 'stray', 'f', '{}')");
  std::string out = mrctl_refused(home.dsn(), "club move --ref resume-club --to b");
  cr_expect(out.find("already holds books") != std::string::npos, "%s", out.c_str());
  cr_expect_eq(where(), std::string("home true"));
  psql_value(home.dsn(), "DELETE FROM idempotency_records WHERE club_id = " + id + " AND idem_key = 'stray'");

  // The same move again: only the flip, said so.
  out = mrctl(home.dsn(), "club move --ref resume-club --to b");
  cr_expect(out.find("\"resumed\":") != std::string::npos && out.find("\"to\":\"b\"") != std::string::npos, "%s",
            out.c_str());
  cr_expect_eq(where(), std::string("b true"));
  cr_expect_eq(books_in(b.conninfo, id), in_b, "the resumed move copied again");
  mrctl(home.dsn(), "club finish-move --ref resume-club");
  cr_expect_eq(books_in(home.dsn(), id), std::string("0 0 0 0 0 0 0"));
  cr_expect_eq(psql_value(b.conninfo, "SELECT mr_write('settle', " + id + ", 'resume-club', 'k2', 'f', 'r', "
                                      "'{}') ->> 'replayed'"),
               std::string("true"), "the settle's record did not move");
  mrctl(home.dsn(), "audit");
}

// The contract's pause (mr_club_export, mr_club_import): while its club is marked moving,
// every write of the club's books raises MR503 (mr_refuse_moving) and the
// partner gets 503 service_unavailable with Retry-After, which clients
// retry; its reads are answered as ever. Once the mark is lifted the same
// writes, retried with their keys, go through.
Test(pods_move, a_moving_clubs_writes_answer_503_and_its_reads_200, .timeout = 120) {
  const TwoPods pods("pods_paused");
  const auto& home = pods.home;
  const auto [club, id] =
      club_with_member(pods, "paused-club", "--redemption-rate-minor 1 --payout-currency GBP --min-redemption 10");
  mrctl(home.dsn(), "capacity topup --ref paused-club --minor 1000000");

  Node node(home_node_conf(home.dsn()));
  node.start();
  mr::MrClient c(node.base_url(), club.key_id, club.secret);
  const std::string member = onboard_member(c, club.ref);  // with the wallet a payout needs (m1 has none)
  const auto earned = c.post("/api/v1/transactions/settled", settle_body(club.ref, member, unique("tx"), 5000),
                             unique("idem"));
  cr_assert_eq(earned.status, 200, "%s", earned.body.c_str());

  psql_value(home.dsn(), "UPDATE clubs SET moving = true WHERE club_id = " + id);
  struct Write {
    std::string path, body, key;
  };
  const std::vector<Write> writes = {
      {"/api/v1/transactions/settled", settle_body(club.ref, member, unique("tx"), 3000), unique("idem")},
      {"/api/v1/redemptions", redeem_body(club.ref, member, unique("rq"), 20), unique("idem")},
  };
  for (const Write& w : writes) {
    const auto r = c.post(w.path, w.body, w.key);
    EXPECT_ERROR(r, 503, "service_unavailable");
    const std::string retry_after = header(r, "retry-after");
    cr_expect(!retry_after.empty() && retry_after.find_first_not_of("0123456789") == std::string::npos &&
                  std::stol(retry_after) > 0,
              "%s: Retry-After '%s'", w.path.c_str(), retry_after.c_str());
  }
  const auto paused = c.get("/api/v1/members/" + member + "/balance");
  cr_expect_eq(paused.status, 200, "%s", paused.body.c_str());
  cr_expect_eq(i64(data_of(paused), "pointsBalance"), 50, "%s", paused.body.c_str());
  cr_expect_eq(psql_value(home.dsn(), "SELECT count(*) FROM ledger_entries WHERE club_id = " + id), std::string("1"),
               "a refused write left an entry");

  psql_value(home.dsn(), "UPDATE clubs SET moving = false WHERE club_id = " + id);
  const auto settled = c.post(writes[0].path, writes[0].body, writes[0].key);
  cr_expect_eq(settled.status, 200, "%s", settled.body.c_str());
  const auto redeemed = c.post(writes[1].path, writes[1].body, writes[1].key);
  cr_expect_eq(redeemed.status, 202, "%s", redeemed.body.c_str());
  cr_expect_eq(i64(data_of(c.get("/api/v1/members/" + member + "/balance")), "pointsBalance"), 50 + 30 - 20);
  mrctl(home.dsn(), "audit");
}

// The pause holds for the operator's writes too: while the club is marked
// moving, mrctl's pool and capacity top-ups, a member adjustment and an
// endpoint's disable and replay are refused by mr_refuse_moving and change
// nothing; once the mark is lifted the same commands go through.
Test(pods_move, a_moving_clubs_operator_writes_are_refused, .timeout = 120) {
  const TwoPods pods("pods_paused_ops");
  const auto& home = pods.home;
  const auto [club, id] =
      club_with_member(pods, "paused-ops", "--redemption-rate-minor 1 --payout-currency GBP --min-redemption 10");
  psql_value(home.dsn(), "INSERT INTO webhook_endpoints (endpoint_id, club_id, url, event_types, secret_sealed, "
                         "status) VALUES ('we_paused_ops', " + id + ", 'https://a.example/h', '{}', 'sealed', "
                         "'enabled')");
  const std::string books = "SELECT c.funded_points || ' ' || c.cash_capacity_minor || ' ' || m.available || ' ' || "
                            "w.status FROM clubs c JOIN members m USING (club_id) JOIN webhook_endpoints w USING "
                            "(club_id) WHERE c.club_id = " + id;
  const std::string before = psql_value(home.dsn(), books);
  const std::vector<std::string> commands = {
      "pool topup --ref paused-ops --points 100",
      "capacity topup --ref paused-ops --minor 100",
      "member adjust --ref paused-ops --member m1 --points 5 --reason welcome",
      "webhook disable --endpoint-id we_paused_ops",
      "webhook replay --endpoint-id we_paused_ops --since 2026-01-01T00:00:00Z",
  };
  const std::string mrctl_line =
      "'" + env("MR_MRCTL") + "' --dsn '" + home.dsn() + "' --master-key '" + env("MR_MASTER_KEY_FILE") + "' ";

  psql_value(home.dsn(), "UPDATE clubs SET moving = true WHERE club_id = " + id);
  for (const auto& cmd : commands) {
    const Run r = run(mrctl_line + cmd);
    cr_expect_neq(r.rc, 0, "%s was not refused: %s", cmd.c_str(), r.out.c_str());
    cr_expect(r.out.find("is moving to another pod") != std::string::npos, "%s: %s", cmd.c_str(), r.out.c_str());
  }
  cr_expect_eq(psql_value(home.dsn(), books), before, "a refused command changed the books");

  psql_value(home.dsn(), "UPDATE clubs SET moving = false WHERE club_id = " + id);
  for (const auto& cmd : commands) mrctl(home.dsn(), cmd);
  cr_expect_neq(psql_value(home.dsn(), books), before);
  mrctl(home.dsn(), "audit");
}
