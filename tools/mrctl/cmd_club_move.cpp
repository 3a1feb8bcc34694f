// mrctl club move|finish-move: a club's books from one pod to another under
// load (migration 020_club_move.sql, docs/architecture.md, Pods). The
// source refuses the club's writes (503, Retry-After) from the mark until
// the nodes route to the target; reads go on meanwhile.
#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "tools/mrctl/command.hpp"
#include "tools/mrctl/json_fields.hpp"
#include "tools/mrctl/pod_name.hpp"
#include "tools/mrctl/schema.hpp"

namespace mr::ctl {
namespace {

using Clock = std::chrono::steady_clock;

struct Club {
  std::string id, pod;
};

Club locate(Context& ctx, const std::string& ref) {
  auto r = ctx.exec("SELECT club_id, coalesce(pod, 'home') FROM clubs WHERE partner_ref = $1", {ref});
  if (PQntuples(r.get()) == 0) throw Failure{"no club " + ref};
  return {pg::value(r.get(), 0, 0), pg::value(r.get(), 0, 1)};
}

std::string pod_argument(Context& ctx) {
  const std::string to = ctx.required("to");
  if (to == kHomePod) return to;
  if (auto problem = pod_name_problem(to)) throw Failure{"--to: " + *problem, 2};
  return to;
}

void require_current(Context& ctx, const std::string& pod, PGconn* conn) {
  const SchemaCheck schema = read_schema(ctx, conn);
  if (!schema.current) throw Failure{"pod " + pod + "'s schema is not current (" + schema.problem + "): run mrctl migrate"};
}

// Polls `count_sql` (one count, $1) until it answers 0, or fails naming `what`.
void wait_for_zero(Context& ctx, PGconn* conn, std::string_view count_sql, const std::string& param,
                   Clock::time_point deadline, std::string_view what) {
  for (;;) {
    if (pg::value(ctx.exec(conn, count_sql, {param}).get(), 0, 0) == "0") return;
    if (Clock::now() > deadline) throw Failure{"gave up waiting for " + std::string(what)};
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// After the mark committed: no write that read the club's row before it
// can still commit. A writer that started before the mark holds a
// snapshot at or below the mark's xid until its statement ends; one that
// has ended its statement but not committed holds an xid, which its
// session shows. A snapshot's running list would not do: it names only
// xids below its xmax (the newest ended xid + 1), so a writer whose xid is
// newer than every ended one (its commit being flushed, or its transaction
// block still open) is in none, and the copy went without its write
// (pods_move_test). Prepared transactions, in no session, are waited for
// through the snapshot. Sessions of other roles show their xmin and xid
// only to a role in pg_read_all_stats (or a superuser), so that is required.
void wait_out_writers(Context& ctx, PGconn* source, const std::string& mark_xid, Clock::time_point deadline) {
  wait_for_zero(ctx, source,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL "
                "AND age(backend_xmin) >= age($1::xid)",
                mark_xid, deadline, "sessions whose snapshots began before the mark (long transactions?)");
  auto held = ctx.exec(source,
                       "SELECT pg_current_snapshot()::text, coalesce(array_agg(backend_xid)::text, '{}') "
                       "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
                       "AND backend_xid IS NOT NULL");
  wait_for_zero(ctx, source,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND backend_xid = ANY ($1::xid[])",
                pg::value(held.get(), 0, 1), deadline, "transactions running at the mark to end");
  wait_for_zero(ctx, source,
                "SELECT count(*) FROM pg_snapshot_xip($1::pg_snapshot) x "
                "WHERE pg_xact_status(x) = 'in progress'",
                pg::value(held.get(), 0, 0), deadline, "transactions running at the mark to end");
}

void require_stats_role(Context& ctx, const std::string& pod, PGconn* conn) {
  auto r = ctx.exec(conn,
                    "SELECT rolsuper OR pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER') FROM pg_roles "
                    "WHERE rolname = current_user");
  if (pg::value(r.get(), 0, 0) != "t") {
    throw Failure{"pod " + pod + ": the role mrctl connects as must be a member of pg_read_all_stats (or a "
                  "superuser) to see every session's snapshot while the club's writes pause"};
  }
}

struct Export {
  std::string books, summary;
};

// One REPEATABLE READ snapshot: the books, what the target must agree on,
// and the source's own audit of the club (which must be clean).
Export export_books(Context& ctx, PGconn* source, const std::string& pod, const std::string& club_id) {
  Export out;
  ctx.exec(source, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  try {
    auto r = ctx.exec(source,
                      "SELECT mr_club_export($1)::text, mr_club_summary($1)::text, "
                      "(SELECT string_agg(a, '; ') FROM mr_audit_club($1) a)",
                      {club_id});
    ctx.exec(source, "COMMIT");
    if (!PQgetisnull(r.get(), 0, 2)) throw Failure{"pod " + pod + "'s audit of the club: " + pg::value(r.get(), 0, 2)};
    out.books = pg::value(r.get(), 0, 0);
    out.summary = pg::value(r.get(), 0, 1);
  } catch (...) {
    PQclear(PQexec(source, "ROLLBACK"));
    throw;
  }
  return out;
}

// The copy in one transaction of the target, committed only when the
// target's audit of the club is clean and its summary is the source's.
std::string import_books(Context& ctx, PGconn* target, const std::string& pod, const std::string& club_id,
                         const Export& books) {
  std::string counts;
  ctx.in_transaction(target, [&] {
    counts = pg::value(ctx.exec(target, "SELECT mr_club_import($1::jsonb)::text", {books.books}).get(), 0, 0);
    auto r = ctx.exec(target,
                      "SELECT mr_club_summary($1) = $2::jsonb, mr_club_summary($1)::text, "
                      "(SELECT string_agg(a, '; ') FROM mr_audit_club($1) a)",
                      {club_id, books.summary});
    if (!PQgetisnull(r.get(), 0, 2)) throw Failure{"pod " + pod + "'s audit of the copy: " + pg::value(r.get(), 0, 2)};
    if (pg::value(r.get(), 0, 0) != "t") {
      throw Failure{"the copy in pod " + pod + " does not match the source: " + pg::value(r.get(), 0, 1) +
                    " against " + books.summary};
    }
  });
  return counts;
}

// The directory routes the club to `to` (its books are there, audited).
void flip(Context& ctx, const Club& club, const std::string& to) {
  try {
    ctx.exec("UPDATE clubs SET pod = $2 WHERE club_id = $1",
             {club.id, to == kHomePod ? std::nullopt : std::optional<std::string>(to)});
  } catch (const Failure& f) {
    throw Failure{"the books are copied to pod " + to + " but the directory did not change (" + f.message +
                  "): the club's writes stay refused; run the same club move again to flip it"};
  }
}

// What a move printed: `done` ("copied" or "resumed") with its JSON.
void report(const std::string& ref, const std::string& from, const std::string& to, const char* done,
            const std::string& json, Clock::duration paused) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  write_strings(w, {{"partnerRef", ref}, {"from", from}, {"to", to}});
  w.Key(done);
  w.RawValue(json.c_str(), json.size(), rapidjson::kObjectType);
  w.Key("copyMs");
  w.Int64(std::chrono::duration_cast<std::chrono::milliseconds>(paused).count());
  w.Key("next");
  const std::string next = "reload every node (nginx -s reload); writes resume there. Then mrctl club finish-move --ref " + ref;
  w.String(next.c_str());
  w.EndObject();
  std::cout << out.GetString() << "\n";
}

// A move stopped between the copy's commit and the directory's flip (mrctl
// or its host gone): the source still paused, the target holding books
// whose summary is the source's and whose audit is clean. Then only the
// flip is missing. Whether the target's books are that copy (the JSON of
// the source's summary, or null when they are not).
std::optional<std::string> copy_already_done(Context& ctx, PGconn* source, PGconn* target, const Club& club,
                                             const std::string& to) {
  auto src = ctx.exec(source, "SELECT mr_club_summary($1)::text FROM clubs WHERE club_id = $1 AND moving", {club.id});
  if (PQntuples(src.get()) != 1) return std::nullopt;
  const std::string summary = pg::value(src.get(), 0, 0);
  auto tgt = ctx.exec(target,
                      "SELECT mr_club_summary($1) = $2::jsonb, (SELECT string_agg(a, '; ') FROM mr_audit_club($1) a) "
                      "FROM clubs WHERE club_id = $1 AND NOT moving",
                      {club.id, summary});
  if (PQntuples(tgt.get()) != 1 || pg::value(tgt.get(), 0, 0) != "t") return std::nullopt;
  if (!PQgetisnull(tgt.get(), 0, 1)) {
    throw Failure{"pod " + to + " holds a copy of the club matching the source, but its audit fails: " +
                  pg::value(tgt.get(), 0, 1)};
  }
  return summary;
}

int club_move(Context& ctx) {
  const std::string ref = ctx.required("ref");
  check_ref(ref);
  const std::string to = pod_argument(ctx);
  const auto wait_s = ctx.has("wait-seconds") ? ctx.integer("wait-seconds", 1, 3600) : 60;
  const Club club = locate(ctx, ref);
  PGconn* source = ctx.pod_db(club.pod);
  if (club.pod == to) {
    // A move interrupted before its copy committed (mrctl killed) left the
    // mark: moving the club to where it is lifts it.
    auto lifted = ctx.exec(source, "UPDATE clubs SET moving = false WHERE club_id = $1 AND moving RETURNING 1", {club.id});
    if (PQntuples(lifted.get()) == 0) throw Failure{"club " + ref + " is already in pod " + to};
    std::cout << R"({"partnerRef":")" << ref << R"(","pod":")" << to << R"(","markLifted":true})" << "\n";
    return 0;
  }
  PGconn* target = ctx.pod_db(to);
  require_current(ctx, club.pod, source);
  require_current(ctx, to, target);
  require_stats_role(ctx, club.pod, source);
  if (pg::value(ctx.exec(target, "SELECT mr_club_has_books($1)", {club.id}).get(), 0, 0) == "t") {
    if (auto summary = copy_already_done(ctx, source, target, club, to)) {
      const auto started = Clock::now();
      flip(ctx, club, to);
      report(ref, club.pod, to, "resumed", *summary, Clock::now() - started);
      return 0;
    }
    throw Failure{"pod " + to + " already holds books of club " + ref +
                  " (an earlier move out of it not finished? mrctl club finish-move --ref " + ref + ")"};
  }

  const auto started = Clock::now();
  auto mark = ctx.exec(source,
                       "UPDATE clubs SET moving = true WHERE club_id = $1 "
                       "RETURNING (pg_current_xact_id()::text::numeric % 4294967296)::text",
                       {club.id});
  if (PQntuples(mark.get()) != 1) throw Failure{"club " + ref + " is not in pod " + club.pod + "'s database"};
  std::string counts;
  try {
    wait_out_writers(ctx, source, pg::value(mark.get(), 0, 0), started + std::chrono::seconds(wait_s));
    counts = import_books(ctx, target, to, club.id, export_books(ctx, source, club.pod, club.id));
  } catch (const Failure& f) {
    // Nothing was copied (the target's transaction rolled back): the club
    // writes where it is again.
    ctx.exec(source, "UPDATE clubs SET moving = false WHERE club_id = $1", {club.id});
    throw Failure{f.message + "; the club stays in pod " + club.pod + ", writes resumed"};
  }
  flip(ctx, club, to);
  report(ref, club.pod, to, "copied", counts, Clock::now() - started);
  return 0;
}

// Once every node routes to the club's pod: its rows out of every other
// pod still holding them marked moving.
int club_finish_move(Context& ctx) {
  const std::string ref = ctx.required("ref");
  check_ref(ref);
  const Club club = locate(ctx, ref);
  auto here = ctx.exec(ctx.pod_db(club.pod), "SELECT NOT moving FROM clubs WHERE club_id = $1", {club.id});
  if (PQntuples(here.get()) != 1 || pg::value(here.get(), 0, 0) != "t") {
    throw Failure{"club " + ref + " is not writable in pod " + club.pod + ", where the directory routes it"};
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  write_strings(w, {{"partnerRef", ref}, {"pod", club.pod}});
  w.Key("removedFrom");
  w.StartObject();
  for (const std::string& pod : ctx.pod_names()) {
    if (pod == club.pod) continue;
    PGconn* conn = ctx.pod_db(pod);
    const bool home = pod == kHomePod;
    auto left = ctx.exec(conn, "SELECT mr_club_has_books($1) FROM clubs WHERE club_id = $1 AND moving", {club.id});
    // The catalogue's row stays (marked): only books are removed there.
    if (PQntuples(left.get()) == 0 || (home && pg::value(left.get(), 0, 0) != "t")) continue;
    auto r = ctx.exec(conn, "SELECT mr_club_purge($1, $2)::text", {club.id, home ? "true" : "false"});
    const std::string removed = pg::value(r.get(), 0, 0);
    w.Key(pod.c_str());
    w.RawValue(removed.c_str(), removed.size(), rapidjson::kObjectType);
  }
  w.EndObject();
  w.EndObject();
  std::cout << out.GetString() << "\n";
  return 0;
}

Register r1("club move", "--ref REF --to POD [--wait-seconds N]",
            "move a club's books to pod POD (home: the catalogue's): writes pause (503) until nodes reload",
            club_move);
Register r2("club finish-move", "--ref REF",
            "after every node reloaded: remove a moved club's books from the pod it left", club_finish_move);

}  // namespace
}  // namespace mr::ctl
