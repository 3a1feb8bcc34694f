// PostgreSQL run by Patroni with etcd (Debian's packages; ha_fixture.sh
// with MR_HA=patroni): two nodes, the ledger's and the catalogue's DSN
// naming both with target_session_attrs=read-write. While four clients
// award points, the leader is lost the way a machine is lost: kill -9 of
// its Patroni and its postmaster. Its leader key in etcd expires (ttl 10 s)
// and Patroni promotes the other node. Every award, retried with its key,
// is in the ledger exactly once; every award acknowledged before the loss
// is there; nginx found the new leader through its DSN without a restart;
// answers from before replay; the audit is clean.
//
// Synchronous mode (Patroni's synchronous_mode: true) is what makes "every
// acknowledged award is there" hold: Patroni keeps the replica in
// synchronous_standby_names, so a commit returns (and nginx answers 200)
// only once the replica has it, and Patroni promotes only that synchronous
// standby. With asynchronous replication the last acknowledged awards
// before the loss could be missing on the promoted node, and their
// partners, holding a 200, would never retry them.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "tests/integration/retried_load.hpp"

using namespace mr::test;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Whether Patroni's REST API on `port` says its node leads (GET /primary:
// 200 on the leader, 503 elsewhere, nothing from a dead node).
bool leads(const std::string& api_port) {
  return capture("curl -s -m 2 -o /dev/null -w '%{http_code}' http://127.0.0.1:" + api_port + "/primary") == "200";
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

Test(patroni, lost_leader_keeps_every_acknowledged_award, .timeout = 240) {
  const auto started = Clock::now();
  const std::string dir = env("MR_STACK_DIR"), cluster = env("MR_PATRONI_DIR");
  const std::string api[3] = {"", env("MR_PATRONI_API1_PORT"), env("MR_PATRONI_API2_PORT")};
  const std::string pg[3] = {"", env("MR_PATRONI_PG1_PORT"), env("MR_PATRONI_PG2_PORT")};
  const int leader = leads(api[1]) ? 1 : leads(api[2]) ? 2 : 0;
  cr_assert_neq(leader, 0, "no Patroni node leads");
  const int other = 3 - leader;
  const std::string name = "pg" + std::to_string(leader);
  // The ledger is on the leader, and a commit waits for the other node.
  cr_assert_eq(psql("SELECT inet_server_port()"), pg[leader] + "\n");
  cr_assert_eq(psql("SELECT sync_state FROM pg_stat_replication"), std::string("sync\n"),
               "the replica is not a synchronous standby");
  cr_assert_eq(psql("SHOW synchronous_commit"), std::string("on\n"));

  auto c = client("A");
  const auto members = onboard_members(c, "pat", 4);
  const std::string prefix = unique("pat");
  auto awards = plan_awards(members, 40, prefix);
  const std::string pids_before = nginx_pids(dir);

  AwardsUnderFault load(awards);
  load.wait_for(40);
  const int acked_at_loss = load.acked();
  load.fault();
  // The machine is gone: Patroni first (or it would restart PostgreSQL and
  // keep the leader key), then the postmaster.
  const auto lost_at = Clock::now();
  const std::string patroni_pid = first_line(capture("cat '" + cluster + "/" + name + ".pid'"));
  const std::string postmaster = first_line(capture("cat '" + cluster + "/" + name + "/data/postmaster.pid'"));
  const int kill_rc = sh("kill -9 " + patroni_pid + " " + postmaster);
  // The other node takes over once the dead leader's key expires.
  bool promoted = false;
  for (const auto deadline = Clock::now() + std::chrono::seconds(45); !promoted && Clock::now() < deadline;) {
    promoted = leads(api[other]);
    if (!promoted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double promoted_after = seconds_since(lost_at);
  load.join();
  const double load_done_after = seconds_since(lost_at);

  cr_assert_eq(kill_rc, 0, "kill -9 %s %s", patroni_pid.c_str(), postmaster.c_str());
  cr_assert(promoted, "pg%d was not promoted within 45 s", other);
  cr_expect_geq(acked_at_loss, 40, "the loss came before any load");
  int before = 0, retried = 0;
  for (const auto& a : awards) {
    before += a.acked_before_event ? 1 : 0;
    retried += a.attempts > 1 ? 1 : 0;
  }
  cr_expect_gt(before, 0);
  cr_expect_lt(before, static_cast<int>(awards.size()), "the loss came after all the load");
  cr_expect_gt(retried, 0, "no award had to be retried: the loss did not happen under load");
  // The ledger is read from the promoted node now, and it takes writes.
  cr_expect_eq(psql("SELECT inet_server_port(), pg_is_in_recovery()"), pg[other] + " f\n");
  expect_each_applied_once(c, awards, prefix);

  expect_replayed_after_fault(c, awards);

  cr_expect_eq(nginx_pids(dir), pids_before, "nginx was restarted or a worker died");
  // A connect whose socket the pool did not watch would be an alert here.
  const std::string faults = error_log_faults(dir, 0);  // a stack of its own
  cr_expect(faults.empty(), "nginx error log:\n%s", faults.c_str());
  std::fprintf(stderr,
               "patroni: pg%d lost after %d acknowledged awards; pg%d promoted %.1f s later; load done %.1f s after "
               "the loss (%zu awards, %d retried); test %.1f s\n",
               leader, acked_at_loss, other, promoted_after, load_done_after, awards.size(), retried,
               seconds_since(started));
}
