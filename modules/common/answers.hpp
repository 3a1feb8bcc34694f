// Answering: the JSON envelope (or any body) with its status, response
// headers; a failure's code is noted for the log phase (request_outcome).
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "ledger/errors.hpp"
#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

// Adds a response header; false when out of memory.
bool add_header_out(ngx_http_request_t* r, std::string_view name, std::string_view value);

// Sends status + JSON body (a failure envelope's `error` code noted for the
// log phase) and returns what the handler should hand to
// ngx_http_finalize_request (or return from a content handler).
// content_type must outlive the request (a literal).
ngx_int_t send_json(ngx_http_request_t* r, ngx_uint_t status, std::string_view body,
                    std::optional<ErrorCode> error = std::nullopt,
                    std::string_view content_type = "application/json");

// Sends the failure envelope for `code`; 429 and 503 get Retry-After: 1.
ngx_int_t send_error(ngx_http_request_t* r, ErrorCode code, std::string_view message = {},
                     std::span<const FieldProblem> details = {});

}  // namespace mr::ngx
