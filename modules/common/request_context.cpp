#include "modules/common/request_context.hpp"

#include <new>

#include "signing/digest.hpp"
#include "modules/common/node_metrics.hpp"

namespace mr::ngx {
namespace {

// ngx_http_mr_auth_module's ctx_index in this worker's cycle; each module
// .so has its own copy, set by its init_process.
ngx_uint_t g_auth_ctx_index = NGX_CONF_UNSET_UINT;

ngx_module_t* find_auth_module(ngx_module_t** modules, ngx_uint_t count) {
  for (ngx_uint_t i = 0; i < count; i++) {
    if (modules[i]->name != nullptr && modules[i]->name == kAuthModuleName) return modules[i];
  }
  return nullptr;
}

void destroy_request_context(void* data) { static_cast<RequestContext*>(data)->~RequestContext(); }

}  // namespace

void* redirected_ctx(ngx_http_request_t* r, ngx_pool_cleanup_pt handler) {
  if (!r->main->internal) return nullptr;
  for (ngx_pool_cleanup_t* cln = r->main->pool->cleanup; cln != nullptr; cln = cln->next) {
    if (cln->handler == handler) return cln->data;
  }
  return nullptr;
}

const ngx_module_t* auth_module(ngx_conf_t* cf, const char* directive) {
  if (const ngx_module_t* m = find_auth_module(cf->cycle->modules, cf->cycle->modules_n)) return m;
  ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                     "%s needs the mr_auth module in front of it: add load_module for %s.so",
                     directive, kAuthModuleName.data());
  return nullptr;
}

bool auth_module_present(ngx_cycle_t* cycle) {
  return find_auth_module(cycle->modules, cycle->modules_n) != nullptr;
}

const mr_auth_main_conf_t* auth_main_conf(ngx_cycle_t* cycle) {
  ngx_module_t* auth = find_auth_module(cycle->modules, cycle->modules_n);
  if (auth == nullptr) return nullptr;
  return static_cast<const mr_auth_main_conf_t*>(ngx_http_cycle_get_module_main_conf(cycle, (*auth)));
}

void bind_request_context(ngx_cycle_t* cycle) {
  ngx_module_t* auth = find_auth_module(cycle->modules, cycle->modules_n);
  g_auth_ctx_index = auth != nullptr ? auth->ctx_index : NGX_CONF_UNSET_UINT;
  bind_node_metrics(auth != nullptr ? static_cast<const mr_auth_main_conf_t*>(
                                          ngx_http_cycle_get_module_main_conf(cycle, (*auth)))
                                    : nullptr);
}

std::string_view RequestContext::fingerprint() const {
  if (fingerprint_.empty() && method == "POST") fingerprint_ = request_fingerprint(method, path, body);
  return fingerprint_;
}

RequestContext* new_request_context(ngx_http_request_t* r) {
  if (g_auth_ctx_index == NGX_CONF_UNSET_UINT) return nullptr;
  // Lives in the request pool; its strings are freed by the cleanup.
  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(r->main->pool, sizeof(RequestContext));
  if (cln == nullptr) return nullptr;
  auto* ctx = new (cln->data) RequestContext{};
  cln->handler = destroy_request_context;
  r->main->ctx[g_auth_ctx_index] = ctx;
  return ctx;
}

RequestContext* request_context(ngx_http_request_t* r) {
  if (g_auth_ctx_index == NGX_CONF_UNSET_UINT) return nullptr;
  auto* ctx = static_cast<RequestContext*>(r->main->ctx[g_auth_ctx_index]);
  // Each module .so has its own destroy_request_context: a context another
  // module made is found in the slot only (error pages are the auth
  // module's, and so is a context that lives on past their redirect).
  if (ctx == nullptr) ctx = static_cast<RequestContext*>(redirected_ctx(r, destroy_request_context));
  return ctx != nullptr && ctx->layout == RequestContext::kLayout ? ctx : nullptr;
}

RequestContext* outcome_context(ngx_http_request_t* r) {
  if (RequestContext* ctx = request_context(r)) return ctx;
  return new_request_context(r);
}

const RequestContext* authenticated(ngx_http_request_t* r) {
  if (g_auth_ctx_index == NGX_CONF_UNSET_UINT) return nullptr;
  const auto* ctx = static_cast<const RequestContext*>(r->main->ctx[g_auth_ctx_index]);
  if (ctx == nullptr || ctx->layout != RequestContext::kLayout || ctx->key == nullptr || ctx->refusal) {
    return nullptr;
  }
  return ctx;
}

}  // namespace mr::ngx
