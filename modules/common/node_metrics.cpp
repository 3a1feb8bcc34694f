#include "modules/common/node_metrics.hpp"

#include "modules/common/http_json.hpp"
#include "modules/common/request_context.hpp"

namespace mr::ngx {
namespace {

mr::metrics::Block* g_block = nullptr;  // each module .so has its own copy
ngx_int_t g_route_index = NGX_ERROR;
ngx_int_t g_code_index = NGX_ERROR;

void set_static(ngx_http_request_t* r, ngx_int_t index, std::string_view value) {
  if (index == NGX_ERROR || r->variables == nullptr) return;
  ngx_http_variable_value_t& v = r->variables[index];
  // Static strings (route labels, code names): no copy into the pool.
  v.data = reinterpret_cast<u_char*>(const_cast<char*>(value.data()));
  v.len = static_cast<unsigned>(value.size());
  v.valid = 1;
  v.no_cacheable = 0;
  v.not_found = 0;
  v.escape = 0;
}

}  // namespace

mr::metrics::Block* node_metrics() { return g_block; }

mr::metrics::Block* zone_block(const mr_metrics_conf_t& conf) {
  if (conf.zone == nullptr || conf.zone->data == nullptr) return nullptr;
  auto* block = static_cast<mr::metrics::Block*>(conf.zone->data);
  return mr::metrics::valid(*block) ? block : nullptr;
}

void bind_node_metrics(const mr_auth_main_conf_t* auth) {
  g_block = auth != nullptr ? zone_block(auth->metrics) : nullptr;
}

ngx_int_t init_outcome_variables(ngx_conf_t* cf) {
  if (!auth_module_present(cf->cycle)) return NGX_OK;
  ngx_str_t route = ngx_string("mr_route_name");
  ngx_str_t code = ngx_string("mr_error_code");
  g_route_index = ngx_http_get_variable_index(cf, &route);
  g_code_index = ngx_http_get_variable_index(cf, &code);
  return g_route_index == NGX_ERROR || g_code_index == NGX_ERROR ? NGX_ERROR : NGX_OK;
}

void set_route(ngx_http_request_t* r, mr::ledger::Route route) {
  set_static(r, g_route_index, mr::ledger::route_label(route));
}

void note_error_code(ngx_http_request_t* r, std::string_view body) {
  if (g_code_index == NGX_ERROR) return;
  if (const auto code = mr::metrics::envelope_code(body)) set_static(r, g_code_index, mr::code_name(*code));
}

mr::ledger::Route route(ngx_http_request_t* r) {
  const auto label = variable_value(r, g_route_index);
  const auto route = label ? mr::ledger::route_from_label(*label) : std::nullopt;
  return route.value_or(mr::ledger::Route::other);
}

std::optional<mr::ErrorCode> error_code(ngx_http_request_t* r) {
  const auto name = variable_value(r, g_code_index);
  return name ? mr::code_from_name(*name) : std::nullopt;
}

std::string_view route_name_text(ngx_http_request_t* r) { return variable_value(r, g_route_index).value_or(""); }

std::string_view error_code_text(ngx_http_request_t* r) { return variable_value(r, g_code_index).value_or(""); }

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

ngx_int_t route_variable(ngx_http_request_t* r, ngx_http_variable_value_t* v, uintptr_t) {
  return static_value(v, mr::ledger::route_label(mr::ledger::route_of(view(r->method_name), raw_path(r))));
}

ngx_int_t unset_variable(ngx_http_request_t*, ngx_http_variable_value_t* v, uintptr_t) {
  return static_value(v, {});
}

ngx_int_t traceparent_variable(ngx_http_request_t* r, ngx_http_variable_value_t* v, uintptr_t) {
  return static_value(v, traceparent(r).value_or(std::string_view{}));
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
      {ngx_string("mr_error_code"), unset_variable},
  };
  for (auto& var : vars) {
    ngx_http_variable_t* v = ngx_http_add_variable(cf, &var.name, 0);
    if (v == nullptr) return NGX_ERROR;
    v->get_handler = var.handler;
  }
  return NGX_OK;
}

}  // namespace mr::ngx
