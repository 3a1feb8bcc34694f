// What the edge learned about a request, shared by the phases of all three
// modules as one typed struct instead of nginx variables formatted and
// parsed back. The auth module owns it (its module ctx slot); the other
// modules find that slot by the auth module's name when a worker starts.
// The variables $mr_club_id, $mr_key_id... stay for logs and limit_req only.
// Any module may attach one to a request auth did not look at, to note how
// the request was answered (Outcome) for the log phase.
#pragma once

#include <cstdint>
#include <string>
#include <optional>
#include <string_view>

#include "ledger/errors.hpp"
#include "ledger/routes.hpp"
#include "ledger/timestamps.hpp"
#include "lua-free-config/auth_conf.hpp"
#include "ngx-boundary/nginx.hpp"
#include "signing/hmac_key.hpp"

namespace mr {
struct KeyEntry;
}

namespace mr::ngx {

// How the request was answered, for metrics and the access log: typed,
// never read back from a rendered body or a variable's text.
struct Outcome {
  std::optional<mr::ledger::Route> route;  // the ops listener's; else the partner route of the path
  std::optional<ErrorCode> error;      // the failure envelope's code (send_json)
};

struct RequestContext {
  // The three modules are separate .so files built from one tree; a module
  // from another build would read a different layout: refused, not misread.
  static constexpr std::uint32_t kLayout = 7;
  std::uint32_t layout = kLayout;
  ngx_int_t status = NGX_DONE;        // the auth rewrite handler's answer when re-entered
  const KeyEntry* key = nullptr;      // set once the signature verified
  // The edge's refusal, decided in the rewrite phase and answered in the
  // access phase, so limit_req (preaccess) in between sees who failed.
  std::optional<Error> refusal;
  std::string_view method, path;      // as signed (the path without the query)
  std::string_view body;              // the whole body, in memory
  std::string_view idempotency_key;   // X-MR-Idempotency-Key as sent (empty if none)
  // Set once the signature verified: the MAC's bytes and when its
  // timestamp leaves the window. A POST's signature serves one idempotency
  // key until then; the idempotency module and the ledger both hold it to
  // that (contract section 2).
  std::optional<HmacDigest> signature;
  Timestamp signature_stale_at{};
  Outcome outcome;

  // POST: SHA-256 of method, path and body (contract section 3); empty for
  // other methods. Computed on first use: mr_idempotency and the ledger need
  // it, mr_auth alone does not (a second hash of the body per request).
  std::string_view fingerprint() const;

 private:
  mutable std::string fingerprint_;
};

// A module's ctx that outlives an internal redirect (error_page clears every
// module's ctx slot): the one held by the cleanup with `handler` in the main
// request's pool, when the main request was redirected; nullptr otherwise.
// The caller looks in its ctx slot first.
void* redirected_ctx(ngx_http_request_t* r, ngx_pool_cleanup_pt handler);

inline constexpr std::string_view kAuthModuleName = "ngx_http_mr_auth_module";

// At postconfiguration: the loaded auth module, or nullptr with a one-line
// nginx -t error naming `directive`.
const ngx_module_t* auth_module(ngx_conf_t* cf, const char* directive);
bool auth_module_present(ngx_cycle_t* cycle);
// The auth module's http main conf in this cycle (nullptr if not loaded).
const mr_auth_main_conf_t* auth_main_conf(ngx_cycle_t* cycle);
// At a worker's start: remember where the auth module keeps its context
// (and the node's counters, which its zone holds).
void bind_request_context(ngx_cycle_t* cycle);
// A new context for the main request, in the auth module's slot and kept
// by a cleanup of the main request's pool (it outlives an error_page
// redirect); nullptr without the auth module or out of memory.
RequestContext* new_request_context(ngx_http_request_t* r);
// The request's context: the one in the slot, else the one an error_page
// redirect left in the pool; nullptr if none.
RequestContext* request_context(ngx_http_request_t* r);
// The same, made when there is none yet (to note an outcome).
RequestContext* outcome_context(ngx_http_request_t* r);
// The authenticated request's context; nullptr when auth did not pass it
// (or refused it for another reason, such as clubId in the query).
const RequestContext* authenticated(ngx_http_request_t* r);

}  // namespace mr::ngx
