// The idempotency edge module. An access handler that runs after auth
// claims the club's idempotency key in Redis with SET NX GET (one round
// trip): a new key goes on to the content handler, an existing one is
// replayed, refused as a conflict or answered idempotency_in_progress.
// Header and body filters keep the final answer for replay, in Redis and
// in the worker's replay cache, which answers later retries of the key
// without a round trip (modules/idempotency/replay_cache.hpp). It knows
// nothing of the ledger: in front of proxy_pass it works the same. With
// Redis down or slow, requests go on to the database path, which is exact
// on its own; Redis only makes retries cheap.
#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "signing/digest.hpp"
#include "signing/hmac_key.hpp"
#include "keys/key_catalogue.hpp"
#include "lua-free-config/conf_values.hpp"
#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/http_module.hpp"
#include "lua-free-config/idempotency_conf.hpp"
#include "modules/common/answers.hpp"
#include "modules/common/node_metrics.hpp"
#include "modules/common/phases.hpp"
#include "modules/idempotency/redis_client.hpp"
#include "modules/common/request_context.hpp"
#include "modules/common/request_id.hpp"
#include "modules/common/request_outcome.hpp"
#include "modules/common/request_reading.hpp"
#include "modules/common/variables.hpp"
#include "modules/common/wall_clock.hpp"
#include "modules/idempotency/idempotency_core.hpp"
#include "modules/idempotency/replay_cache.hpp"

extern "C" ngx_module_t ngx_http_mr_idempotency_module;

namespace {

namespace idem = mr::idempotency;

std::unique_ptr<mr::redis::Client> g_redis;  // one per worker process
std::unique_ptr<mr::HmacKey> g_record_mac;   // seals and verifies Redis records
std::unique_ptr<idem::ReplayCache> g_cache;  // null: mr_idempotency_replay_cache off
ngx_http_output_header_filter_pt next_header_filter;
ngx_http_output_body_filter_pt next_body_filter;

struct Ctx {
  ngx_http_request_t* r = nullptr;
  ngx_int_t status = NGX_DONE;   // what the access handler returns when re-entered
  bool in_handler = false;       // the Redis answer came before the handler returned
  bool holding_ref = false;      // r->main->count taken while waiting for Redis
  bool owner = false;            // this request holds the pending record
  bool settled = false;          // the final answer was stored (or released)
  bool claim_unknown = false;    // the claim got no answer: Redis may hold it
  bool confirming = false;        // a pending record was seen: one GET asks again
  bool held = false;              // its answer waits in g_held for the Redis write
  bool capture_ok = true;
  int response_status = 0;
  std::string key, fingerprint, response_body;
  std::string pending;  // the sealed pending record this request claims with
  std::string_view outcome = "none";
  mr::redis::Call* call = nullptr;
};

const mr_idempotency_main_conf_t* main_conf(ngx_http_request_t* r) {
  return static_cast<mr_idempotency_main_conf_t*>(
      ngx_http_get_module_main_conf(r, ngx_http_mr_idempotency_module));
}

Ctx* get_ctx(ngx_http_request_t* r) {
  return static_cast<Ctx*>(ngx_http_get_module_ctx(r, ngx_http_mr_idempotency_module));
}

std::string ms(ngx_msec_t v) { return std::to_string(v); }

// Claims whose answer never came (a timeout drops the connection): Redis
// may have run them all the same, and such a claim, owned by no request,
// would answer idempotency_in_progress to every retry of its key until
// mr_idempotency_lock_ttl (seen in chaos_test). The request releases it when
// it ends; if Redis cannot be reached then, the worker keeps it and releases
// it before its next claim. Only while the key still holds exactly that
// pending record (sealed from the key and fingerprint alone): a stored
// answer or a newer claim stays.
constexpr std::string_view kReleaseIfPending =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";
constexpr std::size_t kUnknownClaimsMax = 4096;  // beyond: left to the lock TTL
std::vector<std::pair<std::string, std::string>> g_unknown_claims;  // key, sealed pending record

void remember_unknown_claim(std::string key, std::string pending) {
  if (g_unknown_claims.size() < kUnknownClaimsMax) g_unknown_claims.emplace_back(std::move(key), std::move(pending));
}

// One that gets no answer either is kept for the next try.
void release_unknown_claim(std::string key, std::string pending) {
  if (!g_redis || !g_redis->may_send()) {
    remember_unknown_claim(std::move(key), std::move(pending));
    return;
  }
  g_redis->command(
      {"EVAL", kReleaseIfPending, "1", key, pending},
      [key, pending](const redisReply* reply) {
        if (reply == nullptr) remember_unknown_claim(key, pending);
      });
}

// Sent before the next claim on the same connection, so Redis runs them
// first.
void release_unknown_claims() {
  if (g_unknown_claims.empty() || !g_redis || !g_redis->may_send()) return;
  auto claims = std::move(g_unknown_claims);
  g_unknown_claims.clear();
  for (auto& [key, pending] : claims) release_unknown_claim(std::move(key), std::move(pending));
}

// Answers whose Redis write (the stored record, or the key's release) is
// queued: the client's retry must find that write in Redis, so the answer
// goes out after it. Held with nginx's own means (the connection's write
// event delayed, as limit_rate does: the write filter keeps the answer and
// the request waits in ngx_http_writer), all released at the end of this
// pass of the event loop, after one write to Redis for all of them: under
// load the settles of one ledger batch finish together, and each took a
// write(2) to Redis of its own (with the wake-up of the Redis server it
// costs) before its answer.
std::vector<Ctx*> g_held, g_releasing;
ngx_event_t g_release;  // posted while g_held is not empty

void release_held(ngx_event_t*) noexcept {
  if (g_redis) mr::ngx::guarded(ngx_cycle->log, [] { g_redis->flush(); });
  std::swap(g_held, g_releasing);
  for (Ctx* ctx : g_releasing) {
    ctx->held = false;
    ngx_connection_t* c = ctx->r->connection;
    c->write->delayed = 0;
    ngx_post_event(c->write, &ngx_posted_events);
  }
  g_releasing.clear();
}

// False: not held (HTTP/2, a connection already delayed by limit_rate, out
// of memory): the command is written now, as before the answer.
bool hold(Ctx* ctx) {
  ngx_http_request_t* r = ctx->r;
  ngx_connection_t* c = r->connection;
#if (NGX_HTTP_V2)
  if (r->stream != nullptr) return false;
#endif
  if (c->write->delayed) return false;
  g_held.push_back(ctx);
  ctx->held = true;
  c->write->delayed = 1;
  if (!g_release.posted) {
    ngx_post_event(&g_release, &ngx_posted_events);
  }
  return true;
}

// A request freed while held (its connection failed): out of the list, and
// its connection no longer delayed.
void unhold(Ctx* ctx) {
  if (!ctx->held) return;
  ctx->held = false;
  std::erase(g_held, ctx);
  ctx->r->connection->write->delayed = 0;
}

// Stores the final answer, or releases the key when the answer is not one
// to replay (the client may fix the request and retry with the same key).
// The command is queued; the answer is held until it is written (hold), or
// it is written now.
void settle(Ctx* ctx, const mr_idempotency_main_conf_t* mcf) {
  if (!ctx->owner || ctx->settled || !g_redis) return;
  ctx->settled = true;
  const auto ignore = [](const redisReply*) {};
  std::optional<std::string> sealed;
  const std::int64_t expires_ms = mr::ngx::wall_clock_ms() + static_cast<std::int64_t>(mcf->ttl);
  // Ours when an mr module answered; an upstream's (proxy_pass) is read
  // from the body it sent.
  std::optional<mr::ErrorCode> error = mr::ngx::error_code(ctx->r);
  if (!error && ctx->capture_ok && ctx->response_status >= 400) error = idem::envelope_code(ctx->response_body);
  if (ctx->capture_ok && idem::storable(ctx->response_status, error)) {
    sealed = idem::seal_record(
        *g_record_mac, ctx->key,
        idem::done_record(ctx->fingerprint, ctx->response_status, ctx->response_body, expires_ms, error));
  }
  constexpr auto batched = mr::redis::Client::Flush::batched;
  mr::redis::Call* call = nullptr;
  if (sealed) {
    call = g_redis->command({"SET", ctx->key, *sealed, "PX", ms(mcf->ttl)}, ignore, batched);
    // Kept only once stored: a record Redis never got is not replayed here
    // either, and the database decides a retry as it would without a cache.
    if (g_cache) {
      g_cache->put(ctx->key,
                   idem::Record{true, ctx->fingerprint, ctx->response_status, std::move(ctx->response_body), expires_ms,
                                error},
                   mr::ngx::wall_clock_ms());
    }
  } else {
    call = g_redis->command({"DEL", ctx->key}, ignore, batched);
  }
  if (call != nullptr && !mr::ngx::guarded(ctx->r->connection->log, false, [ctx] { return hold(ctx); })) {
    g_redis->flush();
  }
}

ngx_int_t replay(ngx_http_request_t* r, const idem::Record& record) {
  if (!mr::ngx::add_header_out(r, "X-MR-Idempotent-Replay", "true")) return NGX_ERROR;
  return mr::ngx::send_json(r, static_cast<ngx_uint_t>(record.status), record.body, record.error);
}

void count(mr::metrics::Idempotency outcome) {
  if (mr::metrics::Block* block = mr::ngx::node_metrics()) mr::metrics::count(*block, outcome);
}

// Answers a request whose key holds `record` (from Redis or the cache):
// ngx_http_finalize_request's rc.
ngx_int_t answer(Ctx* ctx, const idem::Record& record) {
  using Outcome = mr::metrics::Idempotency;
  switch (idem::decide(record, ctx->fingerprint)) {
    case idem::Decision::replay:
      ctx->outcome = "replayed";
      count(Outcome::replayed);
      return replay(ctx->r, record);
    case idem::Decision::conflict:
      ctx->outcome = "conflict";
      count(Outcome::conflict);
      return mr::ngx::send_error(ctx->r, mr::ErrorCode::duplicate_idempotency_conflict);
    case idem::Decision::in_progress:
      ctx->outcome = "in_progress";
      count(Outcome::in_progress);
      return mr::ngx::send_error(ctx->r, mr::ErrorCode::idempotency_in_progress);
  }
  return NGX_ERROR;
}

void on_claim_reply(Ctx* ctx, const redisReply* reply);

// A pending record with this request's fingerprint may belong to a request
// that has already been answered: its stored answer was written to Redis
// before that answer went out, but on another worker's connection, and
// Redis may read this claim first when both arrive in one pass of its event
// loop. So before answering idempotency_in_progress, ask once more: Redis
// reads every ready connection in each pass, so this GET, sent after the
// claim's reply, comes after every command written before the claim was.
// True: the GET is on its way and its reply continues the request.
bool confirm_pending(Ctx* ctx) {
  if (ctx->confirming || ctx->in_handler || !g_redis) return false;
  ctx->confirming = true;
  // command() returns null exactly when it already ran the callback (with
  // no reply, inside this call, while ctx->call is still null): then
  // nothing is sent and the caller answers from the pending record.
  ctx->call = g_redis->command({"GET", ctx->key}, [ctx](const redisReply* reply) {
    if (ctx->call != nullptr) on_claim_reply(ctx, reply);
  });
  return ctx->call != nullptr;
}

// The claim of a signed POST, one round trip as the plain SET NX GET was:
// a POST's signature serves one idempotency key while its timestamp is in
// the window (contract section 2), so the signature's record (KEYS[2],
// holding the idempotency key, ARGV[3], for ARGV[4] ms) is set, or found,
// first. Found holding another key: 0, and nothing is claimed. Else the
// claim's own reply (nil, or the record the key holds). The database holds
// the same rule in the write's transaction; this only answers it early.
constexpr std::string_view kClaimSigned =
    "local used = redis.call('SET', KEYS[2], ARGV[3], 'NX', 'GET', 'PX', ARGV[4]) "
    "if used and used ~= ARGV[3] then return 0 end "
    "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'GET', 'PX', ARGV[2])";
// Beyond the moment the timestamp leaves this node's window: another
// node's clock may run behind.
constexpr std::int64_t kSignatureMarginMs = 30'000;

constexpr std::string_view kSignatureReused =
    "This signature was already used with another X-MR-Idempotency-Key; sign the request again.";

// mr:sig:<key id>:<the MAC in hex>.
std::string signature_key(std::string_view key_id, const mr::HmacDigest& mac) {
  std::string key = "mr:sig:";
  key.append(key_id).push_back(':');
  return key + mr::to_hex(mac.data(), mac.size());
}

// Decides from Redis's answer: ngx_http_finalize_request's rc, NGX_AGAIN
// while a confirming GET is on its way, or NGX_DECLINED to let the request
// go on.
ngx_int_t decide(Ctx* ctx, const redisReply* reply) {
  using Outcome = mr::metrics::Idempotency;
  ngx_http_request_t* r = ctx->r;
  if (ctx->confirming && (reply == nullptr || reply->type == REDIS_REPLY_ERROR)) {
    // The claim saw a pending record and Redis cannot say more: as before.
    ctx->outcome = "in_progress";
    count(Outcome::in_progress);
    return mr::ngx::send_error(r, mr::ErrorCode::idempotency_in_progress);
  }
  if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) {
    ctx->outcome = "bypass";
    count(Outcome::bypassed);
    ngx_log_error(NGX_LOG_WARN, r->connection->log, 0,
                  "mr_idempotency: Redis unavailable (%s); going on to the database path",
                  reply ? reply->str : "no reply");
    ctx->claim_unknown = reply == nullptr && !ctx->pending.empty();
    return NGX_DECLINED;
  }
  if (reply->type == REDIS_REPLY_INTEGER && !ctx->confirming) {
    // The signature serves another idempotency key: nothing was claimed.
    ctx->outcome = "signature_reused";
    return mr::ngx::send_error(r, mr::ErrorCode::invalid_signature, kSignatureReused);
  }
  if (reply->type == REDIS_REPLY_NIL && ctx->confirming) {
    // Released or expired since the claim: not ours; the database decides.
    ctx->outcome = "bypass";
    count(Outcome::bypassed);
    return NGX_DECLINED;
  }
  if (reply->type == REDIS_REPLY_NIL) {
    ctx->outcome = "claimed";
    count(Outcome::claimed);
    ctx->owner = true;
    return NGX_DECLINED;
  }
  // A record that does not verify is not ours (written by whoever reached
  // Redis, or copied from another key): as if absent, the database decides.
  auto opened = reply->type == REDIS_REPLY_STRING
                    ? idem::open_record(*g_record_mac, ctx->key, {reply->str, static_cast<size_t>(reply->len)})
                    : std::nullopt;
  auto record = opened ? idem::parse_record(*opened) : std::nullopt;
  if (!record) {
    ctx->outcome = "bypass";
    count(Outcome::bypassed);
    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "mr_idempotency: record at %s fails verification; going on to the database path",
                  ctx->key.c_str());
    return NGX_DECLINED;
  }
  if (g_cache && record->done) g_cache->put(ctx->key, *record, mr::ngx::wall_clock_ms());
  if (idem::decide(*record, ctx->fingerprint) == idem::Decision::in_progress && confirm_pending(ctx)) {
    return NGX_AGAIN;
  }
  return answer(ctx, *record);
}

void on_claim_reply(Ctx* ctx, const redisReply* reply) {
  ctx->call = nullptr;
  ngx_http_request_t* r = ctx->r;
  const ngx_int_t rc = mr::ngx::guarded(r->connection->log, NGX_DECLINED, [&] { return decide(ctx, reply); });
  if (rc == NGX_AGAIN) return;  // still waiting, holding the request (never in_handler)
  ctx->status = rc == NGX_DECLINED ? NGX_DECLINED : NGX_DONE;
  if (ctx->in_handler) {
    if (rc != NGX_DECLINED) ctx->status = rc;  // the handler returns it
    return;
  }
  if (ctx->holding_ref) {
    ctx->holding_ref = false;
    r->main->count--;
  }
  ngx_connection_t* c = r->connection;
  if (rc == NGX_DECLINED) {
    r->write_event_handler = ngx_http_core_run_phases;
    ngx_http_core_run_phases(r);
  } else {
    ngx_http_finalize_request(r, rc);
  }
  ngx_http_run_posted_requests(c);
}

ngx_int_t claim(ngx_http_request_t* r) {
  if (r != r->main || r->method != NGX_HTTP_POST) return NGX_DECLINED;
  auto* lcf = static_cast<mr_idempotency_loc_conf_t*>(
      ngx_http_get_module_loc_conf(r, ngx_http_mr_idempotency_module));
  if (!lcf->enabled) return NGX_DECLINED;
  if (Ctx* ctx = get_ctx(r); ctx != nullptr) return ctx->status;

  // Without an authenticated club there is nothing to scope the key by:
  // mr_auth runs first (and refuses a POST without the header).
  const mr::ngx::RequestContext* request = mr::ngx::authenticated(r);
  if (request == nullptr || request->idempotency_key.empty() || !g_redis) return NGX_DECLINED;

  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(r->pool, sizeof(Ctx));
  if (cln == nullptr) return NGX_HTTP_INTERNAL_SERVER_ERROR;
  auto* ctx = new (cln->data) Ctx{};
  cln->handler = mr::ngx::c_entry(+[](void* data) noexcept {
    auto* ctx = static_cast<Ctx*>(data);
    if (ctx->call != nullptr) mr::redis::Client::detach(ctx->call);
    unhold(ctx);
    // Out of memory: the claim is left to mr_idempotency_lock_ttl.
    mr::ngx::guarded(ngx_cycle->log, [ctx] {
      // Ended without a final answer (client gone, worker error): release.
      if (ctx->owner && !ctx->settled && g_redis) {
        ctx->settled = true;
        g_redis->command({"DEL", ctx->key}, [](const redisReply*) {});
      }
      if (ctx->claim_unknown) release_unknown_claim(std::move(ctx->key), std::move(ctx->pending));
    });
    ctx->~Ctx();
  });
  ctx->r = r;
  ngx_http_set_ctx(r, ctx, ngx_http_mr_idempotency_module);
  ctx->key = idem::redis_key(request->key->club_id, request->idempotency_key);
  ctx->fingerprint = request->fingerprint();

  if (g_cache) {
    if (const idem::Record* kept = g_cache->find(ctx->key, mr::ngx::wall_clock_ms())) {
      if (mr::metrics::Block* block = mr::ngx::node_metrics()) mr::metrics::count_cache_hit(*block);
      ctx->status = NGX_DONE;
      ngx_http_finalize_request(r, answer(ctx, *kept));
      return NGX_DONE;
    }
  }

  const mr_idempotency_main_conf_t* mcf = main_conf(r);
  auto pending = idem::seal_record(*g_record_mac, ctx->key, idem::pending_record(ctx->fingerprint));
  if (!pending) return NGX_DECLINED;  // OpenSSL failed: the database path alone
  ctx->pending = std::move(*pending);
  release_unknown_claims();
  std::vector<std::string_view> argv;
  std::string sig_key, sig_ttl;
  const std::string lock_ttl = ms(mcf->lock_ttl);
  if (request->signature) {
    using namespace std::chrono;
    const auto left = duration_cast<milliseconds>(request->signature_stale_at - mr::ngx::wall_clock()).count();
    sig_key = signature_key(request->key->key_id, *request->signature);
    sig_ttl = std::to_string(std::max<std::int64_t>(left, 0) + kSignatureMarginMs);
    argv = {"EVAL", kClaimSigned, "2", ctx->key, sig_key, ctx->pending, lock_ttl, request->idempotency_key, sig_ttl};
  }
  if (argv.empty()) argv = {"SET", ctx->key, ctx->pending, "NX", "GET", "PX", lock_ttl};
  ctx->in_handler = true;
  ctx->call = g_redis->command(
      argv, [ctx](const redisReply* reply) { on_claim_reply(ctx, reply); }, mr::redis::Client::Flush::batched);
  ctx->in_handler = false;
  if (ctx->status != NGX_DONE || ctx->call == nullptr) return ctx->status;  // answered at once
  r->main->count++;
  ctx->holding_ref = true;
  return NGX_DONE;
}

// Everything that can throw (strings, the fingerprint's SHA-256, the Redis
// command) comes before the claim is handed to Redis: on an exception no
// claim is in flight, and the request is answered 500 rather than let the
// exception unwind through nginx.
ngx_int_t access_handler(ngx_http_request_t* r) noexcept {
  return mr::ngx::guarded(r->connection->log, NGX_HTTP_INTERNAL_SERVER_ERROR, [r] { return claim(r); });
}

// An answer sent with Cache-Control: no-store (one that carries a secret)
// is not kept at the edge, in Redis or the worker's cache, whoever sent it:
// the key is released, and a retry goes to the backend, which keeps its own
// record (the ledger's, with the secret sealed).
bool says_no_store(ngx_http_request_t* r) {
  constexpr std::string_view name = "cache-control", token = "no-store";
  for (ngx_list_part_t* part = &r->headers_out.headers.part; part != nullptr; part = part->next) {
    const auto* h = static_cast<const ngx_table_elt_t*>(part->elts);
    for (ngx_uint_t i = 0; i < part->nelts; ++i) {
      if (h[i].hash == 0 || h[i].key.len != name.size() ||
          ngx_strncasecmp(h[i].key.data, reinterpret_cast<u_char*>(const_cast<char*>(name.data())), name.size()) != 0) {
        continue;
      }
      if (ngx_strlcasestrn(h[i].value.data, h[i].value.data + h[i].value.len,
                           reinterpret_cast<u_char*>(const_cast<char*>(token.data())), token.size() - 1) != nullptr) {
        return true;
      }
    }
  }
  return false;
}

ngx_int_t header_filter(ngx_http_request_t* r) noexcept {
  if (Ctx* ctx = get_ctx(r); ctx != nullptr && ctx->owner && r == r->main) {
    ctx->response_status = static_cast<int>(r->headers_out.status);
    if (says_no_store(r)) ctx->capture_ok = false;
  }
  return next_header_filter(r);
}

ngx_int_t body_filter(ngx_http_request_t* r, ngx_chain_t* in) noexcept {
  Ctx* ctx = get_ctx(r);
  if (ctx != nullptr && ctx->owner && !ctx->settled && r == r->main) {
    bool last = false;
    for (ngx_chain_t* cl = in; cl != nullptr; cl = cl->next) {
      ngx_buf_t* b = cl->buf;
      if (ngx_buf_in_memory(b)) {
        // Out of memory: not kept, the key is released.
        ctx->capture_ok = mr::ngx::guarded(r->connection->log, false, [&] {
          if (ctx->capture_ok) ctx->response_body.append(reinterpret_cast<const char*>(b->pos), b->last - b->pos);
          return ctx->capture_ok;
        });
      } else if (ngx_buf_size(b) > 0) {
        ctx->capture_ok = false;  // a file-backed upstream body: not kept
      }
      if (ctx->response_body.size() > 256 * 1024) ctx->capture_ok = false;
      if (b->last_buf) last = true;
    }
    if (last) {
      mr::ngx::guarded(r->connection->log, [&] { settle(ctx, main_conf(r)); });
    }
  }
  return next_body_filter(r, in);
}

ngx_int_t get_outcome(ngx_http_request_t* r, ngx_http_variable_value_t* v, uintptr_t) noexcept {
  Ctx* ctx = get_ctx(r);
  const std::string_view s = ctx ? ctx->outcome : std::string_view("none");
  mr::ngx::set_variable(v, reinterpret_cast<u_char*>(const_cast<char*>(s.data())), s.size(), false);
  return NGX_OK;
}

ngx_int_t preconfiguration(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, NGX_ERROR, [&]() -> ngx_int_t {
    ngx_str_t name = ngx_string("mr_idempotency");
    ngx_http_variable_t* v = ngx_http_add_variable(cf, &name, NGX_HTTP_VAR_NOCACHEABLE);
    if (v == nullptr) return NGX_ERROR;
    v->get_handler = get_outcome;
    return NGX_OK;
  });
}

ngx_int_t postconfiguration(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, NGX_ERROR, [&]() -> ngx_int_t {
    auto* cmcf = static_cast<ngx_http_core_main_conf_t*>(
        ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module));
    // After auth and every other access check, whatever the load_module order.
    if (!mr::ngx::add_phase_handler_last(cmcf, NGX_HTTP_ACCESS_PHASE, access_handler)) return NGX_ERROR;

    next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = header_filter;
    next_body_filter = ngx_http_top_body_filter;
    ngx_http_top_body_filter = body_filter;

    auto* mcf = static_cast<mr_idempotency_main_conf_t*>(
        ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_idempotency_module));
    if (mcf->used && mr::ngx::auth_module(cf, "mr_idempotency") == nullptr) return NGX_ERROR;
    return mr::ngx::init_request_id(cf);
  });
}

char* merge_loc_conf(ngx_conf_t* cf, void* parent, void* child) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = static_cast<mr_idempotency_main_conf_t*>(
        ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_idempotency_module));
    return mr::conf::idempotency_merge_loc(cf, mcf, static_cast<mr_idempotency_loc_conf_t*>(parent),
                                           static_cast<mr_idempotency_loc_conf_t*>(child));
  });
}

ngx_int_t init_process(ngx_cycle_t* cycle) noexcept {
  auto* mcf = static_cast<mr_idempotency_main_conf_t*>(
      ngx_http_cycle_get_module_main_conf(cycle, ngx_http_mr_idempotency_module));
  if (mcf == nullptr || !mcf->used) return NGX_OK;
  mr::ngx::bind_request_context(cycle);
  return mr::ngx::guarded(cycle->log, NGX_ERROR, [&]() -> ngx_int_t {
      // Records are sealed with a key derived from the master key; without it
      // (no catalogue loaded) Redis is not used at all.
      const mr_auth_main_conf_t* auth = mr::ngx::auth_main_conf(cycle);
      if (auth == nullptr || !auth->idempotency_record_key_set) {
        ngx_log_error(NGX_LOG_ERR, cycle->log, 0, "mr_idempotency: no record key (mr_auth loads none); Redis unused");
        return NGX_OK;
      }
      g_record_mac = std::make_unique<mr::HmacKey>(std::string_view(
          reinterpret_cast<const char*>(auth->idempotency_record_key), sizeof(auth->idempotency_record_key)));
      if (!g_record_mac->valid()) return NGX_ERROR;
      mr::redis::Settings s;
      s.username = mr::conf::view(mcf->redis_username);
      s.password = mr::conf::view(mcf->redis_password);
      s.host.assign(reinterpret_cast<const char*>(mcf->redis_host.data), mcf->redis_host.len);
      s.port = static_cast<int>(mcf->redis_port);
      if (mcf->redis_sentinels != nullptr) {
        // Checked at configuration time (mr_redis_sentinel).
        const auto* sentinels = static_cast<const ngx_str_t*>(mcf->redis_sentinels->elts);
        for (ngx_uint_t i = 0; i < mcf->redis_sentinels->nelts; ++i) {
          if (auto at = mr::redis::parse_ipv4_port(mr::conf::view(sentinels[i]))) s.sentinels.push_back(*at);
        }
        s.sentinel_master = mr::conf::view(mcf->redis_sentinel_master);
      }
      s.connect_timeout = mcf->connect_timeout;
      s.command_timeout = mcf->command_timeout;
      g_redis = std::make_unique<mr::redis::Client>(std::move(s), cycle->log);
      g_release.handler = mr::ngx::c_entry(release_held);
      g_release.log = cycle->log;
      if (mcf->replay_cache > 0) g_cache = std::make_unique<idem::ReplayCache>(mcf->replay_cache);
    return NGX_OK;
  });
}

void exit_process(ngx_cycle_t* cycle) noexcept {
  if (g_release.posted) {
    ngx_delete_posted_event(&g_release);
  }
  mr::ngx::guarded(cycle->log, [] {
    g_redis.reset();
    g_record_mac.reset();
    g_cache.reset();
  });
}

ngx_http_module_t module_ctx = {
    mr::ngx::c_entry(preconfiguration),                   // preconfiguration
    mr::ngx::c_entry(postconfiguration),                  // postconfiguration
    mr::ngx::c_entry(mr::conf::idempotency_create_main),  // create main configuration
    mr::ngx::c_entry(mr::conf::idempotency_init_main),    // init main configuration
    nullptr,                                              // create server configuration
    nullptr,                                              // merge server configuration
    mr::ngx::c_entry(mr::conf::idempotency_create_loc),   // create location configuration
    mr::ngx::c_entry(merge_loc_conf),                     // merge location configuration
};

}  // namespace

extern "C" {
constinit ngx_module_t ngx_http_mr_idempotency_module = mr::ngx::http_module(&module_ctx, mr::conf::idempotency_commands, init_process, exit_process);
}
