#include "modules/common/request_outcome.hpp"

#include "ngx-boundary/guarded.hpp"
#include "modules/common/request_context.hpp"
#include "modules/common/request_reading.hpp"

namespace mr::ngx {

void set_route(ngx_http_request_t* r, mr::ledger::Route route) {
  if (RequestContext* ctx = outcome_context(r)) ctx->outcome.route = route;
}

void note_error_code(ngx_http_request_t* r, mr::ErrorCode code) {
  if (RequestContext* ctx = outcome_context(r)) ctx->outcome.error = code;
}

mr::ledger::Route route(ngx_http_request_t* r) {
  const RequestContext* ctx = request_context(r);
  if (ctx != nullptr && ctx->outcome.route) return *ctx->outcome.route;
  // The method as the log phase sees it: an error_page redirect made a
  // POST a GET (nginx's rule), as the variable always showed it.
  return mr::ledger::route_of(view(r->method_name), raw_path(r));
}

std::optional<mr::ErrorCode> error_code(ngx_http_request_t* r) {
  const RequestContext* ctx = request_context(r);
  return ctx != nullptr ? ctx->outcome.error : std::nullopt;
}

std::string_view route_name_text(ngx_http_request_t* r) { return mr::ledger::route_label(route(r)); }

std::string_view error_code_text(ngx_http_request_t* r) {
  const auto code = error_code(r);
  return code ? mr::code_name(*code) : std::string_view{};
}

namespace {

ngx_int_t static_value(ngx_http_variable_value_t* v, std::string_view value) {
  if (value.empty()) {
    v->not_found = 1;
    return NGX_OK;
  }
  // Static strings or the request's own header: no copy.
  v->data = reinterpret_cast<u_char*>(const_cast<char*>(value.data()));
  v->len = static_cast<unsigned>(value.size());
  v->valid = 1;
  v->no_cacheable = 0;
  v->not_found = 0;
  return NGX_OK;
}

ngx_int_t route_variable(ngx_http_request_t* r, ngx_http_variable_value_t* v, uintptr_t) noexcept {
  return guarded(r->connection->log, NGX_ERROR, [&] { return static_value(v, route_name_text(r)); });
}

ngx_int_t error_code_variable(ngx_http_request_t* r, ngx_http_variable_value_t* v, uintptr_t) noexcept {
  return guarded(r->connection->log, NGX_ERROR, [&] { return static_value(v, error_code_text(r)); });
}

ngx_int_t traceparent_variable(ngx_http_request_t* r, ngx_http_variable_value_t* v, uintptr_t) noexcept {
  return guarded(r->connection->log, NGX_ERROR,
                 [&] { return static_value(v, traceparent(r).value_or(std::string_view{})); });
}

}  // namespace

ngx_int_t add_request_variables(ngx_conf_t* cf) {
  struct Var {
    ngx_str_t name;
    ngx_http_get_variable_pt handler;
  };
  Var vars[] = {
      {ngx_string("mr_traceparent"), traceparent_variable},
      {ngx_string("mr_route_name"), route_variable},
      {ngx_string("mr_error_code"), error_code_variable},
  };
  for (auto& var : vars) {
    ngx_http_variable_t* v = ngx_http_add_variable(cf, &var.name, 0);
    if (v == nullptr) return NGX_ERROR;
    v->get_handler = var.handler;
  }
  return NGX_OK;
}

}  // namespace mr::ngx
