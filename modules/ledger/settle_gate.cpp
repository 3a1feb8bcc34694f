#include "modules/ledger/settle_gate.hpp"

#include <cstdint>
#include <new>

#include "ledger/routes.hpp"
#include "ngx-boundary/guarded.hpp"
#include "lua-free-config/ledger_conf.hpp"
#include "modules/common/phases.hpp"
#include "modules/common/request_context.hpp"
#include "modules/common/request_reading.hpp"
#include "modules/ledger/pod_pools.hpp"

extern "C" ngx_module_t ngx_http_mr_ledger_module;

namespace mr::ngx::ledger {
namespace {

ngx_http_output_header_filter_pt next_header_filter;

struct Ticket {
  std::uint64_t id = 0;
  bool held = false;
  mr::pg::Pool* pool = nullptr;  // the club's pod's: its batch is the one this settle joins
};

void give_back(Ticket* ticket) noexcept {
  if (!ticket->held) return;
  ticket->held = false;
  // The pools go only at a worker's exit, when nothing waits any more.
  mr::ngx::guarded(ngx_cycle->log, [ticket] {
    if (!worker_pods().empty()) ticket->pool->settle_arrived(ticket->id);
  });
}

void ticket_cleanup(void* data) noexcept { give_back(static_cast<Ticket*>(data)); }

// The module ctx, or after an internal redirect (which clears every
// module's ctx) the ticket still in the request pool.
Ticket* ticket_of(ngx_http_request_t* r) {
  if (auto* ticket = static_cast<Ticket*>(ngx_http_get_module_ctx(r->main, ngx_http_mr_ledger_module))) return ticket;
  return static_cast<Ticket*>(redirected_ctx(r, ticket_cleanup));
}

ngx_int_t gate_handler(ngx_http_request_t* r) noexcept {
  if (r != r->main || r->method != NGX_HTTP_POST) return NGX_DECLINED;
  const auto* lcf = static_cast<const mr_ledger_loc_conf_t*>(
      ngx_http_get_module_loc_conf(r, ngx_http_mr_ledger_module));
  if (lcf->role != mr_ledger_role::partner_api) return NGX_DECLINED;
  if (ticket_of(r) != nullptr) return NGX_DECLINED;  // the phase again, or a redirect
  mr::pg::Pool* pool = pool_of(r);
  if (pool == nullptr || mr::ledger::route_of(raw_path(r)) != mr::ledger::Route::transactions_settled) {
    return NGX_DECLINED;
  }
  // Without a ticket (out of memory) nothing waits for this settle.
  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(r->pool, sizeof(Ticket));
  if (cln == nullptr) return NGX_DECLINED;
  auto* ticket = new (cln->data) Ticket{};
  cln->handler = ticket_cleanup;
  const bool held = mr::ngx::guarded(r->connection->log, false, [&] {
    ticket->id = pool->settle_arriving();
    ticket->pool = pool;
    ticket->held = true;
    return true;
  });
  if (!held) return NGX_DECLINED;
  ngx_http_set_ctx(r, ticket, ngx_http_mr_ledger_module);
  return NGX_DECLINED;
}

// Any answer that is not the ledger's own (that one gave its ticket back
// at submit) ends the wait for this settle now, not when its client has
// read the answer and the request is freed.
ngx_int_t header_filter(ngx_http_request_t* r) noexcept {
  if (Ticket* ticket = ticket_of(r)) give_back(ticket);
  return next_header_filter(r);
}

}  // namespace

bool install_settle_gate(ngx_http_core_main_conf_t* cmcf) {
  if (!add_phase_handler(cmcf, NGX_HTTP_ACCESS_PHASE, gate_handler)) return false;
  next_header_filter = ngx_http_top_header_filter;
  ngx_http_top_header_filter = header_filter;
  return true;
}

void settle_reached_pool(ngx_http_request_t* r) {
  if (Ticket* ticket = ticket_of(r)) give_back(ticket);
}

}  // namespace mr::ngx::ledger
