#include "lua-free-config/refusals.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

#include "lua-free-config/conf_values.hpp"

namespace mr::conf {
namespace {

bool refuse(ngx_conf_t* cf, const mr_conf_where_t& where, const char* line) {
  log_at(cf, where, NGX_LOG_EMERG, "%s", line);
  return false;
}

bool simulator_allowed(ngx_conf_t* cf, const mr_ledger_main_conf_t* ledger,
                       const mr_auth_main_conf_t* auth) {
  if (!ledger->simulator || view(auth->environment) == "sandbox") return true;
  return refuse(cf, ledger->simulator_where,
                "mr_payout_simulator on settles payouts without a bank and is for "
                "\"mr_environment sandbox\" only: set \"mr_payout_simulator off\" (payout results "
                "come through the ops listener's /payouts routes)");
}

// The test helpers let a partner settle its own payouts: never in production.
bool test_helpers_allowed(ngx_conf_t* cf, const mr_ledger_main_conf_t* ledger,
                          const mr_auth_main_conf_t* auth) {
  if (!ledger->test_helpers || view(auth->environment) == "sandbox") return true;
  return refuse(cf, ledger->test_helpers_where,
                "mr_test_helpers on lets partners settle their own payouts and is for "
                "\"mr_environment sandbox\" only: set \"mr_test_helpers off\"");
}

bool every_partner_location_authenticated(ngx_conf_t* cf, const mr_ledger_main_conf_t* ledger,
                                          ngx_uint_t auth_ctx_index) {
  const auto* locs = static_cast<const mr_ledger_location_t*>(ledger->partner_locations->elts);
  for (ngx_uint_t i = 0; i < ledger->partner_locations->nelts; i++) {
    const auto* alcf = static_cast<const mr_auth_loc_conf_t*>(locs[i].loc_conf[auth_ctx_index]);
    if (alcf->enabled) continue;
    log_at(cf, locs[i].where, NGX_LOG_EMERG,
           "mr_ledger in location \"%V\" has no \"mr_auth on\" in front of it: add "
           "\"mr_auth on;\" to that location or its server",
           &locs[i].name);
    return false;
  }
  return true;
}

bool is_loopback(const sockaddr* sa) {
  switch (sa->sa_family) {
    case AF_INET: {
      const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
      return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
    }
    case AF_INET6: {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
      return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) != 0;
    }
    case AF_UNIX:
      return true;  // reachable only through the file system
    default:
      return false;
  }
}

bool serves_ops(const mr_ledger_main_conf_t* ledger, const ngx_http_core_srv_conf_t* srv) {
  const auto* servers = static_cast<ngx_http_core_srv_conf_t* const*>(ledger->ops_servers->elts);
  for (ngx_uint_t i = 0; i < ledger->ops_servers->nelts; i++) {
    if (servers[i] == srv) return true;
  }
  return false;
}

// Without a token only /healthz answers, but the listener still reveals that
// the service runs and invites guessing: on a network address it needs one.
bool ops_listener_guarded(ngx_conf_t* cf, const mr_ledger_main_conf_t* ledger) {
  if (ledger->ops_token_file.len != 0 || ledger->ops_servers->nelts == 0) return true;
  const auto* cmcf = static_cast<const ngx_http_core_main_conf_t*>(
      ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module));
  if (cmcf->ports == nullptr) return true;
  const auto* ports = static_cast<const ngx_http_conf_port_t*>(cmcf->ports->elts);
  for (ngx_uint_t p = 0; p < cmcf->ports->nelts; p++) {
    const auto* addrs = static_cast<const ngx_http_conf_addr_t*>(ports[p].addrs.elts);
    for (ngx_uint_t a = 0; a < ports[p].addrs.nelts; a++) {
      if (is_loopback(addrs[a].opt.sockaddr)) continue;
      const auto* servers = static_cast<ngx_http_core_srv_conf_t* const*>(addrs[a].servers.elts);
      for (ngx_uint_t s = 0; s < addrs[a].servers.nelts; s++) {
        if (!serves_ops(ledger, servers[s])) continue;
        log_at(cf, ledger->ops_where, NGX_LOG_EMERG,
               "mr_ops is served on %V without mr_ops_token_file: set "
               "\"mr_ops_token_file <path>;\" or listen on 127.0.0.1 only",
               &addrs[a].opt.addr_text);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

bool ledger_refusals_pass(ngx_conf_t* cf, const mr_ledger_main_conf_t* ledger,
                          ngx_uint_t auth_ctx_index) {
  const auto* ctx = static_cast<const ngx_http_conf_ctx_t*>(cf->ctx);
  const auto* auth = static_cast<const mr_auth_main_conf_t*>(ctx->main_conf[auth_ctx_index]);
  return simulator_allowed(cf, ledger, auth) && test_helpers_allowed(cf, ledger, auth) &&
         every_partner_location_authenticated(cf, ledger, auth_ctx_index) &&
         ops_listener_guarded(cf, ledger);
}

}  // namespace mr::conf
