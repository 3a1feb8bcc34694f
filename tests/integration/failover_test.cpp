// PostgreSQL failover under load, on a stack of its own (fixture.sh with
// MR_PG_STANDBY=1): a primary with a synchronous streaming standby, fsync
// and synchronous_commit on, the ledger's DSN naming both hosts (standby
// first) with target_session_attrs=read-write. While four clients award
// points, the primary's postmaster is killed (kill -9) and the standby
// promoted. Every award, retried with its key, ends in the ledger exactly
// once; every award acknowledged before the kill is there; nginx reconnects
// without a restart; answers kept in Redis from before still replay, and so
// does the promoted database once Redis is flushed; the audit is clean.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/retried_load.hpp"

using namespace mr::test;

Test(failover, promoted_standby_keeps_every_acknowledged_award, .timeout = 300) {
  const std::string dir = env("MR_STACK_DIR");
  // Durability is what is under test: commits wait for the standby's flush.
  cr_assert_eq(psql("SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'"),
               std::string("sync\n"), "the standby is not synchronous");
  cr_assert_eq(psql("SHOW synchronous_commit"), std::string("on\n"));
  cr_assert_eq(psql("SHOW fsync"), std::string("on\n"));

  auto c = client("A");
  const auto members = onboard_members(c, "fo", 4);
  const std::string prefix = unique("fo");
  auto awards = plan_awards(members, 40, prefix);
  const std::string pids_before = nginx_pids(dir);

  AwardsUnderFault load(awards);
  load.wait_for(40);
  const int acked_at_kill = load.acked();
  load.fault();
  const std::string postmaster = capture("head -1 '" + env("MR_PG_DATA") + "/postmaster.pid'");
  const int kill_rc = sh("kill -9 " + postmaster);
  // No host takes writes for a while: the old primary refuses connections,
  // the standby is read-only. Clients get 503 and retry.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const int promote_rc = sh(pg_ctl(env("MR_PG_STANDBY_DATA")) + "-w -t 60 promote >/dev/null");
  load.join();

  cr_assert_eq(kill_rc, 0, "kill -9 %s", postmaster.c_str());
  cr_assert_eq(promote_rc, 0);
  cr_expect_geq(acked_at_kill, 40, "the kill came before any load");
  int before = 0;
  for (const auto& a : awards) before += a.acked_before_event ? 1 : 0;
  cr_expect_gt(before, 0);
  cr_expect_lt(before, static_cast<int>(awards.size()), "the kill came after all the load");
  // Among them every award acknowledged before the kill: the ledger is read
  // from the promoted standby now.
  expect_each_applied_once(c, awards, prefix);

  expect_replayed_after_fault(c, awards);

  cr_expect_eq(nginx_pids(dir), pids_before, "nginx was restarted or a worker died");
  // Among the faults: a connect whose new socket (libpq moving from host to
  // host) the pool did not watch, an alert when its time is up. A server
  // slow to answer on a loaded machine is an error line, not a fault.
  const std::string faults = error_log_faults(dir, 0);  // a stack of its own
  cr_expect(faults.empty(), "nginx error log:\n%s", faults.c_str());
}
