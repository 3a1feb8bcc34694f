// The node's counters (modules/common/metrics_block.hpp) as each module .so
// sees them, and what a request tells the log phase: its route (set by the
// ops listener, otherwise from the partner path) and the error code of the
// envelope it was answered with (set by send_json), kept typed in the
// request context; $mr_route_name and $mr_error_code show them to the
// access log.
#pragma once

#include <optional>
#include <string_view>

#include "ledger/errors.hpp"
#include "ledger/routes.hpp"
#include "lua-free-config/auth_conf.hpp"
#include "lua-free-config/nginx.hpp"
#include "modules/common/metrics_block.hpp"

namespace mr::ngx {

// This worker's counters in shared memory; nullptr without mr_metrics_zone.
mr::metrics::Block* node_metrics();
// At a worker's start, from the auth module's main conf (its zone).
void bind_node_metrics(const mr_auth_main_conf_t* auth);
// The block in a configured zone (nullptr before the zone is initialised).
mr::metrics::Block* zone_block(const mr_metrics_conf_t& conf);

// How the request was answered (its RequestContext's Outcome; the variables
// $mr_route_name and $mr_error_code show the same): noted by the ops
// listener (its route) and send_json (a failure's code), read by the log
// phase.
void set_route(ngx_http_request_t* r, mr::ledger::Route route);
void note_error_code(ngx_http_request_t* r, mr::ErrorCode code);
mr::ledger::Route route(ngx_http_request_t* r);
std::optional<mr::ErrorCode> error_code(ngx_http_request_t* r);
// The same two as the log shows them ("" for no error code).
std::string_view route_name_text(ngx_http_request_t* r);
std::string_view error_code_text(ngx_http_request_t* r);

// The auth module's preconfiguration: defines $mr_traceparent (the valid
// W3C header, else empty), $mr_route_name (set by the ops listener, else
// the partner route of the raw path) and $mr_error_code (empty unless set).
ngx_int_t add_request_variables(ngx_conf_t* cf);

}  // namespace mr::ngx
