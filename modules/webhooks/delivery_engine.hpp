// A worker's webhook delivery (docs/events-design.md, Delivery): woken by
// the LISTEN connection or the poll, or claiming every 50 ms for 2 s after
// a claim that took deliveries (the writes then do not notify), it claims
// as many due deliveries as it has free attempt slots (mr_webhook_claim on the worker's ledger pool),
// signs each (Standard Webhooks), sends it through libcurl on nginx's event
// loop, and reports the outcome, which schedules the next attempt: the
// attempts that ended in one pass of the loop (and while a report was on
// its way) go in one mr_webhook_report_batch, one transaction, one report
// in flight at a time. Nothing waits: every step is a callback.
//
// Reload: an exiting worker claims nothing more; each attempt in flight has
// a non-cancelable timer (its timeout), and each report is a pool job with
// one, so the old worker finishes them and then exits. A worker that dies
// mid-attempt leaves the delivery to be claimed again when its lease ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "keys/secret_box.hpp"
#include "ngx-boundary/nginx.hpp"
#include "modules/ledger/pg_pool.hpp"
#include "modules/webhooks/curl_driver.hpp"
#include "modules/webhooks/notify_listener.hpp"
#include "modules/webhooks/schedule.hpp"

namespace mr::ngx::webhooks {

struct EngineSettings {
  std::string environment;  // mr_environment: the events' "environment"
  std::size_t pod = 0;      // whose pool (modules/ledger/pod_pools.hpp) claims and reports
  std::string dsn;          // that pod's conninfo, for the LISTEN connection
  ngx_msec_t connect_timeout = 3000;
  std::vector<std::int64_t> schedule_ms;
  ngx_msec_t timeout = 15000;
  ngx_msec_t poll = 5000;
  std::size_t concurrency = 16;
  bool insecure_targets = false;
  std::optional<mr::MasterKey> sealing_key;  // opens the endpoints' secrets
};

class Engine {
 public:
  Engine(EngineSettings settings, ngx_log_t* log);  // throws when libcurl cannot start
  // Drops what is in flight without reporting it (the worker is exiting;
  // the leases bring those deliveries back).
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void start();

 private:
  struct Attempt;
  struct Result {
    mr::webhooks::Outcome outcome = mr::webhooks::Outcome::failed;
    std::optional<long> status;  // an HTTP answer
    std::string error;           // none for an HTTP answer
    // For the operator alone (webhook_attempts.detail; mrctl webhook
    // failures): the addresses refused, libcurl's own message. Never in
    // `error`, which the partner reads.
    std::string detail;
    std::optional<std::int64_t> retry_after_s;
    std::int64_t duration_ms = 0;
  };

  static void on_poll(ngx_event_t* ev) noexcept;
  static void on_soon(ngx_event_t* ev) noexcept;
  static void on_attempt_timeout(ngx_event_t* ev) noexcept;
  static void on_flush(ngx_event_t* ev) noexcept;

  void wake();
  void maybe_claim();
  void on_claimed(mr::pg::Outcome&& outcome, std::int64_t limit);
  void begin(const PGresult* rows, int row);
  // send's steps: the signature header (empty when no secret opens), a
  // handle (a kept one first), the request's headers, libcurl's options.
  void send(Attempt* attempt, const PGresult* rows, int row);
  std::string sign(const Attempt& attempt, const PGresult* rows, int row, std::string_view event_id,
                   std::int64_t timestamp) const;
  void take_easy(Attempt& attempt);
  static void add_headers(Attempt& attempt, std::string_view event_id, std::int64_t timestamp,
                          std::string_view signature);
  void set_transfer_options(Attempt& attempt) const;
  void on_done(Attempt* attempt, CURLcode code);
  void finish(Attempt* attempt, Result result);
  struct Report {
    std::int64_t delivery_id = 0;
    int attempt = 0;
    Result result;
  };
  void flush_reports();
  void on_batch_reported(mr::pg::Outcome&& outcome, std::vector<Report>&& sent);
  void report(std::int64_t delivery_id, int attempt, const Result& result);
  void on_reported(mr::pg::Outcome&& outcome, std::int64_t delivery_id, const Result& result, int attempt);
  void act_on(std::string_view next, std::int64_t delivery_id, const Result& result, int attempt);
  void wake_in(std::int64_t ms);
  void stay_awake();
  // Attempts on the wire, and ended ones whose report waits beyond one
  // claim's worth: a claim need not wait for the last batch's commit, but
  // reports slow to commit hold the claims back.
  std::size_t in_flight() const {
    return attempts_.size() + (reports_ > settings_.concurrency ? reports_ - settings_.concurrency : 0);
  }

  EngineSettings settings_;
  std::string schedule_param_;  // the schedule as an int[] literal
  ngx_log_t* log_;
  CurlDriver curl_;
  NotifyListener listener_;
  std::unordered_map<const Attempt*, std::unique_ptr<Attempt>> attempts_;
  // Easy handles of ended attempts, reset and used again (at most
  // concurrency): a new handle allocates libcurl's transfer buffers, and
  // their malloc and free (with the consolidation a free of 64 KiB sets
  // off) were about a fifth of a worker's CPU while delivering.
  std::vector<Easy> idle_easies_;
  std::size_t reports_ = 0;     // attempts ended whose report is not yet answered
  std::vector<Report> unsent_;  // ended attempts waiting for the next batch
  bool batch_out_ = false;      // a report batch is on its way
  bool claiming_ = false;       // a claim is on its way
  bool wanted_ = false;         // deliveries may be due: claim when there is room
  bool claims_failing_ = false; // the last claim failed (logged once until one works)
  // Until then this worker claims every kAwakePollMs: the promise its
  // claims wrote in webhook_pollers (mr_webhook_claim_awake), for which writes
  // that queue a delivery do not notify.
  ngx_msec_t awake_until_ = 0;
  std::set<mr::pg::Job*> jobs_; // pool jobs not yet answered (detached if the engine goes first)
  ngx_event_t poll_timer_{};
  ngx_event_t soon_timer_{};    // a retry due before the next poll
  ngx_event_t awake_timer_{};   // the next claim while awake
  ngx_event_t flush_{};         // posted: report what ended in this pass
};

}  // namespace mr::ngx::webhooks
