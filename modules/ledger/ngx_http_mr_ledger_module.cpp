// The ledger module: one content handler that serves the partner API
// (mr_ledger) or the ops listener (mr_ops) by the location's role, the
// per-worker PostgreSQL pool both run on, and the sandbox payout simulator.
// Directives: lua-free-config/ledger_conf.
#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/http_module.hpp"
#include "lua-free-config/ledger_conf.hpp"
#include "lua-free-config/refusals.hpp"
#include "modules/common/phases.hpp"
#include "modules/common/request_context.hpp"
#include "modules/common/request_id.hpp"
#include "modules/ledger/ops_listener.hpp"
#include "modules/ledger/partner_handler.hpp"
#include "modules/ledger/payout_simulator.hpp"
#include "modules/ledger/pool_metrics.hpp"
#include "modules/ledger/settle_gate.hpp"
#include "modules/ledger/statement_run.hpp"

extern "C" ngx_module_t ngx_http_mr_ledger_module;

namespace {

namespace glue = mr::ngx::ledger;

mr_ledger_main_conf_t* main_conf(ngx_conf_t* cf) {
  return static_cast<mr_ledger_main_conf_t*>(ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_ledger_module));
}

ngx_int_t content_handler(ngx_http_request_t* r) noexcept {
  return mr::ngx::guarded(r->connection->log, NGX_HTTP_INTERNAL_SERVER_ERROR, [&]() -> ngx_int_t {
    if (r != r->main) return NGX_DECLINED;
    const auto* lcf = static_cast<const mr_ledger_loc_conf_t*>(
        ngx_http_get_module_loc_conf(r, ngx_http_mr_ledger_module));
    switch (lcf->role) {
      case mr_ledger_role::partner_api:
        return glue::partner_handler(r);
      case mr_ledger_role::ops:
        return glue::ops_handler(r);
      case mr_ledger_role::none:
        break;
    }
    return NGX_DECLINED;
  });
}

ngx_int_t postconfiguration(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, NGX_ERROR, [&]() -> ngx_int_t {
    auto* cmcf = static_cast<ngx_http_core_main_conf_t*>(
        ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module));
    if (!mr::ngx::add_phase_handler(cmcf, NGX_HTTP_CONTENT_PHASE, content_handler)) return NGX_ERROR;
    mr_ledger_main_conf_t* mcf = main_conf(cf);
    if (mcf->used && !glue::install_settle_gate(cmcf)) return NGX_ERROR;
    if (mcf->used || mcf->simulator || mcf->test_helpers) {
      const ngx_module_t* auth = mr::ngx::auth_module(cf, "mr_ledger");
      if (auth == nullptr || !mr::conf::ledger_refusals_pass(cf, mcf, auth->ctx_index)) return NGX_ERROR;
      const auto* ctx = static_cast<const ngx_http_conf_ctx_t*>(cf->ctx);
      mcf->environment = static_cast<const mr_auth_main_conf_t*>(ctx->main_conf[auth->ctx_index])->environment;
    }
    return mr::ngx::init_request_id(cf);
  });
}

char* merge_loc_conf(ngx_conf_t* cf, void*, void* child) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = static_cast<mr_ledger_main_conf_t*>(ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_ledger_module));
    return mr::conf::ledger_merge_loc(cf, mcf, static_cast<mr_ledger_loc_conf_t*>(child));
  });
}

ngx_int_t init_process(ngx_cycle_t* cycle) noexcept {
  auto* mcf = static_cast<mr_ledger_main_conf_t*>(
      ngx_http_cycle_get_module_main_conf(cycle, ngx_http_mr_ledger_module));
  if (mcf == nullptr || !mcf->used) return NGX_OK;
  mr::ngx::bind_request_context(cycle);
  return mr::ngx::guarded(
      cycle->log,
      [&]() -> ngx_int_t {
        const mr_auth_main_conf_t* auth = mr::ngx::auth_main_conf(cycle);
        glue::start_pod_pools(*mcf, auth != nullptr ? auth->catalogue : nullptr, cycle->log);
        glue::start_pool_metrics(cycle->log);
        if (mcf->simulator) glue::start_payout_simulator(mcf->simulator_delay, cycle->log);
        return NGX_OK;
      },
      [cycle]() noexcept -> ngx_int_t {
        ngx_log_error(NGX_LOG_EMERG, cycle->log, 0, "mr_ledger: cannot create the connection pools");
        return NGX_ERROR;
      });
}

void exit_process(ngx_cycle_t* cycle) noexcept {
  glue::stop_payout_simulator();
  glue::stop_pool_metrics();
  mr::ngx::guarded(cycle->log, [] { glue::stop_pod_pools(); });
}

ngx_http_module_t module_ctx = {
    nullptr,                                         // preconfiguration
    mr::ngx::c_entry(postconfiguration),             // postconfiguration
    mr::ngx::c_entry(mr::conf::ledger_create_main),  // create main configuration
    mr::ngx::c_entry(mr::conf::ledger_init_main),    // init main configuration
    nullptr,                                         // create server configuration
    nullptr,                                         // merge server configuration
    mr::ngx::c_entry(mr::conf::ledger_create_loc),   // create location configuration
    mr::ngx::c_entry(merge_loc_conf),                // merge location configuration
};

}  // namespace

extern "C" {
constinit ngx_module_t ngx_http_mr_ledger_module = mr::ngx::http_module(&module_ctx, mr::conf::ledger_commands, init_process, exit_process);
}
