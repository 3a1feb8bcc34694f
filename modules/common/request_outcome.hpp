// What a request tells the log phase: its route (set by the ops listener,
// otherwise the partner route of the path) and the error code of the
// envelope it was answered with (set by send_json), kept typed in the
// request context; $mr_route_name and $mr_error_code show them to the
// access log.
#pragma once

#include <optional>
#include <string_view>

#include "ledger/errors.hpp"
#include "ledger/routes.hpp"
#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

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
