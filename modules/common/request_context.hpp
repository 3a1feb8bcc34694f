// What the edge learned about a request, shared by the phases of all three
// modules as one typed struct instead of nginx variables formatted and
// parsed back. The auth module owns it (its module ctx slot); the other
// modules find that slot by the auth module's name when a worker starts.
// The variables $mr_club_id, $mr_key_id... stay for logs and limit_req only.
#pragma once

#include <cstdint>
#include <string>
#include <optional>
#include <string_view>

#include "ledger/errors.hpp"
#include "lua-free-config/auth_conf.hpp"
#include "lua-free-config/nginx.hpp"

namespace mr {
struct KeyEntry;
}

namespace mr::ngx {

struct RequestContext {
  // The three modules are separate .so files built from one tree; a module
  // from another build would read a different layout: refused, not misread.
  static constexpr std::uint32_t kLayout = 5;
  std::uint32_t layout = kLayout;
  ngx_int_t status = NGX_DONE;        // the auth rewrite handler's answer when re-entered
  const KeyEntry* key = nullptr;      // set once the signature verified
  // The edge's refusal, decided in the rewrite phase and answered in the
  // access phase, so limit_req (preaccess) in between sees who failed.
  std::optional<Error> refusal;
  std::string_view method, path;      // as signed (the path without the query)
  std::string_view body;              // the whole body, in memory
  std::string_view idempotency_key;   // X-MR-Idempotency-Key as sent (empty if none)

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
// The authenticated request's context; nullptr when auth did not pass it
// (or refused it for another reason, such as clubId in the query).
const RequestContext* authenticated(ngx_http_request_t* r);

}  // namespace mr::ngx
