// Registering handlers in nginx's phases at postconfiguration. nginx runs a
// phase's handlers from the last registered to the first.
#pragma once

#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

// Runs before the handlers registered so far (those of nginx's own modules).
inline bool add_phase_handler(ngx_http_core_main_conf_t* cmcf, ngx_http_phases phase,
                              PhaseHandler handler) {
  auto* slot = static_cast<ngx_http_handler_pt*>(ngx_array_push(&cmcf->phases[phase].handlers));
  if (slot == nullptr) return false;
  *slot = handler;
  return true;
}

// Runs after every other handler of the phase, whatever the load_module
// order (the idempotency claim comes after auth and every access check).
inline bool add_phase_handler_last(ngx_http_core_main_conf_t* cmcf, ngx_http_phases phase,
                                   PhaseHandler handler) {
  ngx_array_t* handlers = &cmcf->phases[phase].handlers;
  if (!add_phase_handler(cmcf, phase, handler)) return false;
  auto* all = static_cast<ngx_http_handler_pt*>(handlers->elts);
  ngx_memmove(all + 1, all, (handlers->nelts - 1) * sizeof(ngx_http_handler_pt));
  all[0] = handler;
  return true;
}

}  // namespace mr::ngx
