#include "modules/webhooks/delivery_engine.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/crypto.h>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <charconv>
#include <map>

#include "keys/webhook_secret.hpp"
#include "ledger/address_policy.hpp"
#include "ledger/statements.hpp"
#include "ngx-boundary/guarded.hpp"
#include "modules/common/node_metrics.hpp"
#include "modules/ledger/pod_pools.hpp"
#include "modules/webhooks/attempt_error.hpp"
#include "modules/webhooks/standard_webhooks.hpp"

namespace mr::ngx::webhooks {
namespace {

namespace wh = mr::webhooks;

static_assert(wh::kOutcomes == mr::metrics::kWebhookOutcomes, "metrics count every outcome, in its order");

// The backstop past libcurl's own timeout: the attempt ends even if libcurl
// never says so, and until then the timer holds an exiting worker.
constexpr ngx_msec_t kBackstopMs = 2000;
// A retry's timer fires this much after the database's due time.
constexpr std::int64_t kDueMarginMs = 50;
constexpr std::size_t kMaxErrorText = 300;
// After a claim that took deliveries, claim every kAwakePollMs for
// kAwakeMs: mr_webhook_claim_awake promises as much in
// webhook_pollers (2 s from the database's clock at the claim, which is
// earlier than this worker's when the answer comes), and a write that
// queues a delivery while that promise runs does not notify. Keep the
// two in step.
constexpr ngx_msec_t kAwakeMs = 2000;
constexpr ngx_msec_t kAwakePollMs = 50;

// The claim's columns (ledger/statements.hpp, webhook_claim).
enum Column { kDeliveryId, kAttempt, kEndpointId, kUrl, kSecret, kPreviousSecret, kEventId, kBody };

std::string_view value(const PGresult* r, int row, int col) {
  return {PQgetvalue(r, row, col), static_cast<std::size_t>(PQgetlength(r, row, col))};
}

template <typename T>
std::optional<T> number(std::string_view text) {
  T v{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// An id that can go in a header as it is.
bool header_safe(std::string_view s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::string address_text(const curl_sockaddr& a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (a.family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&a.addr)->sin_addr, buf, sizeof(buf));
  } else if (a.family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&a.addr)->sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

void count(const wh::Outcome outcome, std::int64_t duration_ms) {
  if (mr::metrics::Block* block = mr::ngx::node_metrics()) {
    mr::metrics::count_webhook_attempt(*block, static_cast<std::size_t>(outcome),
                                       static_cast<std::uint64_t>(std::max<std::int64_t>(duration_ms, 0)));
  }
}

}  // namespace

// One attempt in flight: what libcurl reads (the body, the headers) lives
// here until it is done.
struct Engine::Attempt {
  Engine* engine = nullptr;
  std::int64_t delivery_id = 0;
  int number = 0;
  std::string url, body;
  Easy easy;
  Slist headers;
  char errbuf[CURL_ERROR_SIZE] = {};
  std::string refused;  // the address the policy refused, and why
  std::chrono::steady_clock::time_point started;
  ngx_event_t timer{};  // non-cancelable: the timeout holds an exiting worker
};

Engine::Engine(EngineSettings settings, ngx_log_t* log)
    : settings_(std::move(settings)),
      schedule_param_(wh::sql_int_array(settings_.schedule_ms)),
      log_(log),
      // As many kept as may be in flight: a steady stream to one receiver
      // opens no new connection.
      curl_(log, static_cast<long>(std::max<std::size_t>(settings_.concurrency, 1))),
      listener_(settings_.dsn, settings_.connect_timeout, log, [this] { wake(); }) {
  for (ngx_event_t* ev : {&poll_timer_, &soon_timer_, &awake_timer_}) {
    ev->data = this;
    ev->log = log;
    ev->cancelable = 1;  // the engine's own timers never hold an exiting worker
  }
  poll_timer_.handler = mr::ngx::c_entry(on_poll);
  soon_timer_.handler = mr::ngx::c_entry(on_soon);
  awake_timer_.handler = mr::ngx::c_entry(on_soon);  // a claim now, as for a retry
  flush_.data = this;
  flush_.log = log;
  flush_.handler = mr::ngx::c_entry(on_flush);
}

Engine::~Engine() {
  if (poll_timer_.timer_set) ngx_del_timer(&poll_timer_);
  if (soon_timer_.timer_set) ngx_del_timer(&soon_timer_);
  if (awake_timer_.timer_set) ngx_del_timer(&awake_timer_);
  if (flush_.posted) {  // a multi-statement macro: the braces are needed
    ngx_delete_posted_event(&flush_);
  }
  for (auto& [key, attempt] : attempts_) {
    if (attempt->timer.timer_set) ngx_del_timer(&attempt->timer);
    if (attempt->easy) curl_.cancel(attempt->easy.get());
  }
  attempts_.clear();
  // The pool outlives the engine (the webhooks module exits first); if it
  // went already, it took its jobs with it.
  if (mr::ngx::ledger::pod_pool(settings_.pod) != nullptr) {
    for (mr::pg::Job* job : jobs_) mr::pg::Pool::detach(job);
  }
  jobs_.clear();
}

void Engine::start() {
  listener_.start();
  wanted_ = true;
  // Awake from the start: a worker that this one replaces (a reload, a
  // crash) may have left a promise running that it no longer keeps.
  awake_until_ = ngx_current_msec + kAwakeMs;
  // The first claim once every module's worker start ran (the pool is made
  // by the ledger module's, after this one's).
  ngx_add_timer(&poll_timer_, 0);
}

void Engine::on_poll(ngx_event_t* ev) noexcept {
  auto* self = static_cast<Engine*>(ev->data);
  mr::ngx::guarded(self->log_, [self] { self->wake(); });
  if (!ngx_exiting) ngx_add_timer(ev, self->settings_.poll);
}

void Engine::on_soon(ngx_event_t* ev) noexcept {
  auto* self = static_cast<Engine*>(ev->data);
  mr::ngx::guarded(self->log_, [self] { self->wake(); });
}

void Engine::wake() {
  wanted_ = true;
  maybe_claim();
}

void Engine::wake_in(std::int64_t ms) {
  if (ngx_exiting || ms >= static_cast<std::int64_t>(settings_.poll)) return;  // the poll comes first
  const ngx_msec_t at = ngx_current_msec + static_cast<ngx_msec_t>(ms + kDueMarginMs);
  if (soon_timer_.timer_set && static_cast<ngx_msec_int_t>(soon_timer_.timer.key - at) <= 0) return;
  if (soon_timer_.timer_set) ngx_del_timer(&soon_timer_);
  ngx_add_timer(&soon_timer_, static_cast<ngx_msec_t>(ms + kDueMarginMs));
}

// The next claim in kAwakePollMs while the promise runs. A claim that
// cannot start then (every slot busy) starts when a slot frees, and arms
// this again when it is answered.
void Engine::stay_awake() {
  if (ngx_exiting || claiming_ || awake_timer_.timer_set) return;
  if (static_cast<ngx_msec_int_t>(awake_until_ - ngx_current_msec) <= 0) return;
  ngx_add_timer(&awake_timer_, kAwakePollMs);
}

void Engine::maybe_claim() {
  mr::pg::Pool* pool = mr::ngx::ledger::pod_pool(settings_.pod);
  if (!wanted_ || claiming_ || ngx_exiting || pool == nullptr) return;
  const std::int64_t limit = wh::claim_limit(static_cast<std::int64_t>(settings_.concurrency),
                                             static_cast<std::int64_t>(in_flight()));
  if (limit == 0) return;  // a slot that frees claims again
  auto job = std::make_unique<mr::pg::Job>();
  job->sql = mr::ledger::sql::webhook_claim;
  job->params = {settings_.environment, std::to_string(limit),
                 std::to_string(wh::lease_ms(static_cast<std::int64_t>(settings_.timeout)))};
  mr::pg::Job* handle = job.get();
  job->done = [this, handle, limit](mr::pg::Outcome&& outcome) {
    jobs_.erase(handle);
    on_claimed(std::move(outcome), limit);
  };
  jobs_.insert(handle);  // first: its callback may run inside submit
  wanted_ = false;
  claiming_ = true;
  pool->submit(std::move(job));
}

void Engine::on_claimed(mr::pg::Outcome&& outcome, std::int64_t limit) {
  claiming_ = false;
  if (outcome.kind != mr::pg::Outcome::Kind::ok) {
    // The next poll, notification or awake claim tries again; while they
    // fail (the database restarting), the first failure says it.
    if (!claims_failing_) {
      ngx_log_error(NGX_LOG_WARN, log_, 0, "mr_webhook: cannot claim deliveries: %s", outcome.message.c_str());
    }
    claims_failing_ = true;
    stay_awake();
    return;
  }
  if (claims_failing_) ngx_log_error(NGX_LOG_NOTICE, log_, 0, "mr_webhook: claiming deliveries again");
  claims_failing_ = false;
  const PGresult* r = outcome.result.get();
  const int rows = PQntuples(r);
  if (rows > 0) awake_until_ = ngx_current_msec + kAwakeMs;
  for (int row = 0; row < rows; ++row) {
    // Not started (out of memory): its lease brings the delivery back.
    mr::ngx::guarded(log_, [&] { begin(r, row); });
  }
  if (rows >= limit) wanted_ = true;  // a full claim may have left more due behind it
  maybe_claim();
  stay_awake();
}

void Engine::begin(const PGresult* r, int row) {
  const auto delivery_id = number<std::int64_t>(value(r, row, kDeliveryId));
  const auto attempt_no = number<int>(value(r, row, kAttempt));
  if (!delivery_id || !attempt_no) {
    ngx_log_error(NGX_LOG_ERR, log_, 0, "mr_webhook: a claimed delivery without its id or attempt");
    return;
  }
  auto a = std::make_unique<Attempt>();
  a->engine = this;
  a->delivery_id = *delivery_id;
  a->number = *attempt_no;
  a->url.assign(value(r, row, kUrl));
  a->body.assign(value(r, row, kBody));
  a->started = std::chrono::steady_clock::now();
  Attempt* attempt = a.get();
  attempts_.emplace(attempt, std::move(a));
  if (!mr::ngx::guarded(log_, false, [&] {
        send(attempt, r, row);
        return true;
      })) {
    // Not sent: its lease brings the delivery back.
    if (attempt->timer.timer_set) ngx_del_timer(&attempt->timer);
    if (attempt->easy) curl_.cancel(attempt->easy.get());
    attempts_.erase(attempt);
  }
}

std::string Engine::sign(const Attempt& attempt, const PGresult* r, int row, std::string_view event_id,
                         std::int64_t timestamp) const {
  const std::string endpoint_id(value(r, row, kEndpointId));
  // The signing keys: the current secret first, the previous one during a rotation.
  std::vector<std::string> keys;
  for (const int col : {kSecret, kPreviousSecret}) {
    if (PQgetisnull(r, row, col) != 0 || !settings_.sealing_key) continue;
    auto secret = mr::open_webhook_secret(*settings_.sealing_key, endpoint_id, value(r, row, col));
    if (!secret) continue;
    if (auto key = mr::webhook_signing_key(*secret)) keys.push_back(std::move(*key));
    OPENSSL_cleanse(secret->data(), secret->size());
  }
  std::string signature =
      keys.empty() ? std::string() : wh::signature_header(keys, event_id, timestamp, attempt.body);
  for (auto& key : keys) OPENSSL_cleanse(key.data(), key.size());
  return signature;
}

void Engine::take_easy(Attempt& attempt) {
  if (idle_easies_.empty()) {
    attempt.easy.reset(curl_easy_init());
  } else {
    attempt.easy = std::move(idle_easies_.back());  // reset when it was kept
    idle_easies_.pop_back();
  }
  if (!attempt.easy) throw std::bad_alloc();
}

void Engine::add_headers(Attempt& attempt, std::string_view event_id, std::int64_t timestamp,
                         std::string_view signature) {
  for (const std::string& line :
       {std::string("Content-Type: application/json"), std::string("User-Agent: member-rewards-webhooks/1"),
        "webhook-id: " + std::string(event_id), "webhook-timestamp: " + std::to_string(timestamp),
        "webhook-signature: " + std::string(signature), std::string("Expect:")}) {
    curl_slist* more = curl_slist_append(attempt.headers.get(), line.c_str());
    if (more == nullptr) throw std::bad_alloc();
    if (!attempt.headers) attempt.headers.reset(more);
  }
}

void Engine::set_transfer_options(Attempt& attempt) const {
  CURL* easy = attempt.easy.get();
  const bool insecure = settings_.insecure_targets;
  curl_easy_setopt(easy, CURLOPT_URL, attempt.url.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, insecure ? "http,https" : "https");
  curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, insecure ? "http,https" : "https");
  curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");  // never a proxy from the environment
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  // An attempt ended while its name still resolves (a timeout, a worker
  // exiting) must not wait for the resolver thread: that would block the
  // worker for as long as the DNS server is slow. The thread is left to end
  // by itself.
  curl_easy_setopt(easy, CURLOPT_QUICK_EXIT, 1L);
  curl_easy_setopt(easy, CURLOPT_POST, 1L);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, attempt.body.data());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(attempt.body.size()));
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, attempt.headers.get());
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(settings_.timeout));
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, attempt.errbuf);
  // The answer's body is not needed: read and dropped.
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION,
                   mr::ngx::c_entry(+[](char*, size_t size, size_t n, void*) noexcept -> size_t { return size * n; }));
}

void Engine::send(Attempt* attempt, const PGresult* r, int row) {
  // A fresh attempt holds no handle, header list or timer: a second send of
  // one would put two transfers behind one report, and the delivery's
  // attempt would be counted and reported twice.
  if (attempt->easy || attempt->headers || attempt->timer.timer_set) {
    ngx_log_error(NGX_LOG_ALERT, log_, 0, "mr_webhook: delivery %L attempt %d sent twice, the second dropped",
                  attempt->delivery_id, attempt->number);
    return;
  }
  const std::string event_id(value(r, row, kEventId));
  const std::int64_t timestamp = static_cast<std::int64_t>(ngx_time());
  std::string signature = sign(*attempt, r, row, event_id, timestamp);
  if (signature.empty() || !header_safe(event_id)) {
    Result result;
    result.outcome = wh::Outcome::failed;
    result.error = signature.empty() ? "cannot open the endpoint's signing secret (another master key?)"
                                     : "the event id cannot be sent in a header";
    OPENSSL_cleanse(signature.data(), signature.size());
    ngx_log_error(NGX_LOG_ERR, log_, 0, "mr_webhook: delivery %L: %s", attempt->delivery_id, result.error.c_str());
    finish(attempt, std::move(result));
    return;
  }
  take_easy(*attempt);
  add_headers(*attempt, event_id, timestamp, signature);
  OPENSSL_cleanse(signature.data(), signature.size());
  set_transfer_options(*attempt);
  const bool insecure = settings_.insecure_targets;
  attempt->timer.handler = mr::ngx::c_entry(on_attempt_timeout);
  attempt->timer.data = attempt;
  attempt->timer.log = log_;
  ngx_add_timer(&attempt->timer, settings_.timeout + kBackstopMs);
  const auto allow = [attempt, insecure](const curl_sockaddr& address) {
    const mr::ledger::AddressClass cls =
        mr::ledger::classify(&address.addr, static_cast<socklen_t>(address.addrlen));
    if (insecure || mr::ledger::is_public(cls)) return true;
    // Every address of the name is tried: the message names each refused.
    if (!attempt->refused.empty()) attempt->refused += ", ";
    attempt->refused += address_text(address) + " is " + std::string(mr::ledger::class_name(cls));
    return false;
  };
  const auto done = [this, attempt](CURLcode code) { on_done(attempt, code); };
  if (!curl_.start(attempt->easy.get(), allow, done)) {
    Result result;
    result.error = "libcurl refused the transfer";
    finish(attempt, std::move(result));
  }
}

void Engine::on_attempt_timeout(ngx_event_t* ev) noexcept {
  auto* attempt = static_cast<Attempt*>(ev->data);
  Engine* self = attempt->engine;
  mr::ngx::guarded(self->log_, [self, attempt] {
    self->curl_.cancel(attempt->easy.get());
    Result result;
    result.outcome = wh::Outcome::timeout;
    result.error = "timed out after " + std::to_string(self->settings_.timeout) + " ms";
    self->finish(attempt, std::move(result));
  });
}

void Engine::on_done(Attempt* attempt, CURLcode code) {
  Result result;
  CURL* easy = attempt->easy.get();
  if (code == CURLE_OK) {
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    result.status = status;
    result.outcome = wh::outcome_of_status(status);
    if (result.outcome != wh::Outcome::delivered) {
      result.error = wh::attempt_error_for_status(status);
      curl_off_t retry_after = -1;
      if (curl_easy_getinfo(easy, CURLINFO_RETRY_AFTER, &retry_after) == CURLE_OK) {
        result.retry_after_s = wh::retry_after_to_report(static_cast<std::int64_t>(retry_after));
      }
    }
  } else {
    // No answer in time or none at all: a failed attempt whatever status
    // line may have come before (a 200 whose body never ended is no 2xx).
    // The partner sees the rule (attempt_error.hpp); the operator's log
    // has the detail, addresses included.
    switch (code) {
      case CURLE_OPERATION_TIMEDOUT:
        result.outcome = wh::Outcome::timeout;
        result.error = "timed out after " + std::to_string(settings_.timeout) + " ms";
        break;
      case CURLE_UNSUPPORTED_PROTOCOL:
        result.outcome = wh::Outcome::refused;
        result.error = settings_.insecure_targets ? "refused: only http:// and https:// URLs"
                                                  : "refused: only https:// URLs are allowed";
        break;
      default:
        if (!attempt->refused.empty() && code == CURLE_COULDNT_CONNECT) {
          result.outcome = wh::Outcome::refused;
          result.error = wh::kNotPublic;
          result.detail = attempt->refused;
          ngx_log_error(NGX_LOG_WARN, log_, 0, "mr_webhook: delivery %L attempt %d refused: %s",
                        attempt->delivery_id, attempt->number, attempt->refused.c_str());
        } else {
          result.outcome = code == CURLE_URL_MALFORMAT ? wh::Outcome::refused : wh::Outcome::failed;
          result.error = wh::attempt_error_for(code);
          result.detail = attempt->errbuf[0] != '\0' ? attempt->errbuf : curl_easy_strerror(code);
          ngx_log_error(NGX_LOG_INFO, log_, 0, "mr_webhook: delivery %L attempt %d: %s", attempt->delivery_id,
                        attempt->number, result.detail.c_str());
        }
        break;
    }
  }
  finish(attempt, std::move(result));
}

void Engine::finish(Attempt* attempt, Result result) {
  if (attempt->timer.timer_set) ngx_del_timer(&attempt->timer);
  result.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                             attempt->started)
                           .count();
  if (result.error.size() > kMaxErrorText) result.error.resize(kMaxErrorText);
  if (result.detail.size() > kMaxErrorText) result.detail.resize(kMaxErrorText);
  count(result.outcome, result.duration_ms);
  const std::int64_t delivery_id = attempt->delivery_id;
  const int number = attempt->number;
  // libcurl is done with the handle (out of the multi handle: completed,
  // cancelled or never added): kept for the next attempt, or freed.
  // Reset at once: none of its options may point into the attempt's
  // memory once it is freed.
  if (attempt->easy && idle_easies_.size() < settings_.concurrency) {
    curl_easy_reset(attempt->easy.get());
    mr::ngx::guarded(log_, [&] { idle_easies_.push_back(std::move(attempt->easy)); });
  }
  attempts_.erase(attempt);
  const bool kept = mr::ngx::guarded(log_, false, [&] {
    unsent_.push_back(Report{delivery_id, number, std::move(result)});
    reports_++;
    return true;
  });
  // Not kept: its lease brings the delivery back, sent again, at least once.
  if (!kept) return;
  // The other attempts that end in this pass of the loop join the batch.
  // Posted events run before the loop looks at an exiting worker's timers,
  // so the report's own (non-cancelable) timer is set before it does.
  if (!batch_out_ && !flush_.posted) {  // a macro with an if of its own
    ngx_post_event(&flush_, &ngx_posted_events);
  }
}

void Engine::on_flush(ngx_event_t* ev) noexcept {
  auto* self = static_cast<Engine*>(ev->data);
  mr::ngx::guarded(self->log_, [self] { self->flush_reports(); });
}

void Engine::flush_reports() {
  if (batch_out_ || unsent_.empty()) return;
  mr::pg::Pool* pool = mr::ngx::ledger::pod_pool(settings_.pod);
  if (pool == nullptr) return;  // cannot happen while the ledger serves
  rapidjson::StringBuffer json;
  rapidjson::Writer<rapidjson::StringBuffer> w(json);
  w.StartArray();
  for (const Report& r : unsent_) {
    w.StartObject();
    w.Key("d");
    w.Int64(r.delivery_id);
    w.Key("a");
    w.Int(r.attempt);
    if (r.result.status) {
      w.Key("s");
      w.Int64(*r.result.status);
    }
    if (!r.result.error.empty()) {
      w.Key("e");
      w.String(r.result.error.data(), static_cast<rapidjson::SizeType>(r.result.error.size()));
    }
    if (!r.result.detail.empty()) {
      w.Key("o");
      w.String(r.result.detail.data(), static_cast<rapidjson::SizeType>(r.result.detail.size()));
    }
    w.Key("ms");
    w.Int64(std::min<std::int64_t>(r.result.duration_ms, 2'000'000'000));
    if (r.result.retry_after_s) {
      w.Key("ra");
      w.Int64(*r.result.retry_after_s);
    }
    w.EndObject();
  }
  w.EndArray();
  auto job = std::make_unique<mr::pg::Job>();
  job->sql = mr::ledger::sql::webhook_report_batch;
  job->params = {std::string(json.GetString(), json.GetSize()), schedule_param_};
  mr::pg::Job* handle = job.get();
  auto sent = std::make_shared<std::vector<Report>>(std::move(unsent_));
  unsent_.clear();
  job->done = [this, handle, sent](mr::pg::Outcome&& outcome) {
    jobs_.erase(handle);
    on_batch_reported(std::move(outcome), std::move(*sent));
  };
  jobs_.insert(handle);  // first: its callback may run inside submit
  batch_out_ = true;
  pool->submit(std::move(job));
}

void Engine::on_batch_reported(mr::pg::Outcome&& outcome, std::vector<Report>&& sent) {
  batch_out_ = false;
  reports_ -= sent.size();
  if (outcome.kind != mr::pg::Outcome::Kind::ok) {
    // Rolled back as a whole, or its outcome unknown: each again on its
    // own, so one that cannot be recorded does not hold up the others. A
    // batch that did commit records each attempt twice at worst; the second
    // outcome is "stale" (the delivery moved on) and decides nothing.
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr_webhook: cannot report %uz attempts together: %s", sent.size(),
                  outcome.message.c_str());
    for (const Report& r : sent) {
      mr::ngx::guarded(log_, [&] { report(r.delivery_id, r.attempt, r.result); });
    }
  } else {
    const PGresult* res = outcome.result.get();
    std::map<std::pair<std::int64_t, int>, std::string_view> next;
    for (int row = 0; row < PQntuples(res); ++row) {
      const auto id = number<std::int64_t>(value(res, row, 0));
      const auto attempt = number<int>(value(res, row, 1));
      if (id && attempt) next.emplace(std::pair{*id, *attempt}, value(res, row, 2));
    }
    for (const Report& r : sent) {
      const auto it = next.find({r.delivery_id, r.attempt});
      act_on(it == next.end() ? std::string_view() : it->second, r.delivery_id, r.result, r.attempt);
    }
  }
  flush_reports();  // what ended meanwhile
  maybe_claim();
}

void Engine::report(std::int64_t delivery_id, int attempt, const Result& result) {
  auto job = std::make_unique<mr::pg::Job>();
  job->sql = mr::ledger::sql::webhook_report;
  std::optional<std::string> status, error, retry_after;
  if (result.status) status = std::to_string(*result.status);
  if (!result.error.empty()) error = result.error;
  if (result.retry_after_s) retry_after = std::to_string(*result.retry_after_s);
  job->params = {std::to_string(delivery_id),
                 std::to_string(attempt),
                 std::move(status),
                 std::move(error),
                 std::to_string(std::min<std::int64_t>(result.duration_ms, 2'000'000'000)),
                 std::move(retry_after),
                 schedule_param_};
  mr::pg::Job* handle = job.get();
  job->done = [this, handle, delivery_id, attempt, result](mr::pg::Outcome&& outcome) {
    jobs_.erase(handle);
    reports_--;
    on_reported(std::move(outcome), delivery_id, result, attempt);
  };
  mr::pg::Pool* pool = mr::ngx::ledger::pod_pool(settings_.pod);
  if (pool == nullptr) return;  // cannot happen while the ledger serves
  jobs_.insert(handle);  // first: its callback may run inside submit
  reports_++;
  pool->submit(std::move(job));
}

void Engine::on_reported(mr::pg::Outcome&& outcome, std::int64_t delivery_id, const Result& result, int attempt) {
  if (outcome.kind != mr::pg::Outcome::Kind::ok || PQntuples(outcome.result.get()) != 1) {
    // The delivery comes back when its lease ends: sent again, at least once.
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr_webhook: cannot report delivery %L attempt %d: %s", delivery_id,
                  attempt, outcome.message.c_str());
  } else {
    act_on(value(outcome.result.get(), 0, 0), delivery_id, result, attempt);
  }
  maybe_claim();
}

// What a recorded outcome asks of this worker: a timer for a retry due
// before the next poll, a line in the log when an endpoint was disabled.
void Engine::act_on(std::string_view next, std::int64_t delivery_id, const Result& result, int attempt) {
  if (next.empty()) {
    // The delivery comes back when its lease ends: sent again, at least once.
    ngx_log_error(NGX_LOG_WARN, log_, 0, "mr_webhook: delivery %L attempt %d: no outcome recorded", delivery_id,
                  attempt);
  } else if (next == "retry") {
    if (const auto wait = wh::next_wait_ms(settings_.schedule_ms, attempt, result.retry_after_s)) wake_in(*wait);
  } else if (next == "gone" || next == "failing") {
    ngx_log_error(NGX_LOG_NOTICE, log_, 0, "mr_webhook: delivery %L: endpoint disabled (%*s)", delivery_id,
                  next.size(), next.data());
  } else if (next == "exhausted") {
    ngx_log_error(NGX_LOG_NOTICE, log_, 0, "mr_webhook: delivery %L: no attempt left after %d", delivery_id,
                  attempt);
  }
}

}  // namespace mr::ngx::webhooks
