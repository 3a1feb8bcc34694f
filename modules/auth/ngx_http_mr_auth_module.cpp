// The auth edge module: reads the body in the access phase, checks key,
// headers, timestamp window and HMAC (rules in auth_core, order in
// check_request) and keeps what it learned in the request context the other
// modules read; exports $mr_key_id, $mr_club_id, $mr_partner_ref and
// $mr_request_id for logs and limit_req, stamps X-Request-Id on every
// response and answers nginx's own errors with the JSON envelope
// (mr_json_error). Directives: lua-free-config/auth_conf.
#include <chrono>
#include <new>

#include "keys/key_catalogue.hpp"
#include "ledger/errors.hpp"
#include "ledger/read_requests.hpp"
#include "lua-free-config/auth_conf.hpp"
#include "modules/auth/auth_core.hpp"
#include "modules/auth/catalogue_load.hpp"
#include "modules/auth/metrics_zone.hpp"
#include "modules/common/digest.hpp"
#include "modules/common/http_json.hpp"
#include "modules/common/node_metrics.hpp"
#include "modules/common/phases.hpp"
#include "modules/common/request_context.hpp"

extern "C" ngx_module_t ngx_http_mr_auth_module;

namespace {

using AuthCtx = mr::ngx::RequestContext;

ngx_http_output_header_filter_pt next_header_filter;

mr_auth_main_conf_t* main_conf(ngx_http_request_t* r) {
  return static_cast<mr_auth_main_conf_t*>(ngx_http_get_module_main_conf(r, ngx_http_mr_auth_module));
}

mr_auth_loc_conf_t* loc_conf(ngx_http_request_t* r) {
  return static_cast<mr_auth_loc_conf_t*>(ngx_http_get_module_loc_conf(r, ngx_http_mr_auth_module));
}

AuthCtx* get_ctx(ngx_http_request_t* r) {
  return static_cast<AuthCtx*>(ngx_http_get_module_ctx(r, ngx_http_mr_auth_module));
}

// The key a request names: the authenticated one, or before auth has run
// (limit_req in the preaccess phase) the active key X-MR-Key-Id names, so
// rate limits apply per key from the first phase on.
const mr::KeyEntry* request_key(ngx_http_request_t* r) {
  if (AuthCtx* ctx = get_ctx(r); ctx != nullptr && ctx->key != nullptr) return ctx->key;
  const mr_auth_main_conf_t* mcf = main_conf(r);
  if (mcf->catalogue == nullptr) return nullptr;
  auto key_id = mr::ngx::header_in(r, "X-MR-Key-Id");
  return key_id ? mcf->catalogue->find(*key_id) : nullptr;
}

// Decides the request once its body is in memory; answers failures itself.
ngx_int_t authenticate(ngx_http_request_t* r, AuthCtx* ctx) {
  const mr_auth_main_conf_t* mcf = main_conf(r);
  const mr_auth_loc_conf_t* lcf = loc_conf(r);
  auto body = mr::ngx::request_body(r);
  if (!body) {
    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "mr_auth: request body not in memory; client_body_buffer_size too small");
    return mr::ngx::send_error(r, mr::ErrorCode::internal_error);
  }
  mr::auth::RequestFacts facts;
  facts.method = mr::ngx::view(r->method_name);
  facts.path = mr::ngx::raw_path(r);
  facts.key_id = mr::ngx::header_in(r, "X-MR-Key-Id");
  facts.timestamp = mr::ngx::header_in(r, "X-MR-Timestamp");
  facts.signature = mr::ngx::header_in(r, "X-MR-Signature");
  facts.idempotency_key = mr::ngx::header_in(r, "X-MR-Idempotency-Key");
  if (r->headers_in.content_type != nullptr) {
    facts.content_type = mr::ngx::view(r->headers_in.content_type->value);
  }
  ctx->body = *body;
  ctx->idempotency_key = facts.idempotency_key.value_or(std::string_view{});
  const bool is_post = r->method == NGX_HTTP_POST;
  auto digests = mr::digest_request(facts.method, facts.path, *body, is_post);
  ctx->body_sha256_hex = std::move(digests.body_sha256_hex);
  ctx->fingerprint = std::move(digests.fingerprint);
  facts.body_sha256_hex = ctx->body_sha256_hex;

  const mr::KeyEntry* found = nullptr;
  const mr::auth::KeyLookup lookup = [&](std::string_view id) -> std::optional<mr::auth::KeyView> {
    found = mcf->catalogue ? mcf->catalogue->find(id) : nullptr;
    if (found == nullptr) return std::nullopt;
    return mr::auth::KeyView{found->secret, found->club_id, found->partner_ref, found->hmac.get()};
  };
  const auto verdict = mr::auth::check_request(facts, lookup, std::chrono::system_clock::now(),
                                               std::chrono::seconds(lcf->timestamp_window));
  if (verdict.error) return mr::ngx::send_error(r, *verdict.error, verdict.message);

  // The club comes from the key alone (spec rule 7); the ledger's rule,
  // applied here to every path under the edge.
  if (mr::ledger::query_has_club_id(mr::ngx::view(r->args))) {
    const mr::Error error = mr::ledger::club_id_in_query_error();
    return mr::ngx::send_error(r, error.code, error.message, error.details);
  }
  ctx->key = found;
  return NGX_DECLINED;
}

void body_read(ngx_http_request_t* r) {
  AuthCtx* ctx = get_ctx(r);
  ngx_int_t rc;
  try {
    rc = authenticate(r, ctx);
  } catch (...) {
    rc = mr::ngx::send_error(r, mr::ErrorCode::internal_error);
  }
  if (rc != NGX_DECLINED) {
    ngx_http_finalize_request(r, rc);
    return;
  }
  ctx->status = NGX_DECLINED;
  r->write_event_handler = ngx_http_core_run_phases;
  ngx_http_core_run_phases(r);
}

ngx_int_t access_handler(ngx_http_request_t* r) {
  if (r != r->main || !loc_conf(r)->enabled) return NGX_DECLINED;
  if (AuthCtx* ctx = get_ctx(r); ctx != nullptr) return ctx->status;

  // Lives in the request pool; its strings are freed by the cleanup.
  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(r->pool, sizeof(AuthCtx));
  if (cln == nullptr) return NGX_HTTP_INTERNAL_SERVER_ERROR;
  auto* ctx = new (cln->data) AuthCtx{};
  cln->handler = [](void* data) { static_cast<AuthCtx*>(data)->~AuthCtx(); };
  ngx_http_set_ctx(r, ctx, ngx_http_mr_auth_module);

  r->request_body_in_single_buf = 1;
  ngx_int_t rc = ngx_http_read_client_request_body(r, body_read);
  if (rc >= NGX_HTTP_SPECIAL_RESPONSE) return rc;
  ngx_http_finalize_request(r, NGX_DONE);
  return NGX_DONE;
}

ngx_int_t header_filter(ngx_http_request_t* r) {
  if (r == r->main && loc_conf(r)->request_id_header) {
    const std::string_view id = mr::ngx::request_id(r);
    if (!id.empty() && !mr::ngx::add_header_out(r, "X-Request-Id", id)) return NGX_ERROR;
  }
  return next_header_filter(r);
}

enum class VarField : uintptr_t { key_id, club_id, partner_ref, request_id };

ngx_int_t get_variable(ngx_http_request_t* r, ngx_http_variable_value_t* v, uintptr_t data) {
  std::string_view value;
  char club_id_text[NGX_INT64_LEN + 1];
  const auto field = static_cast<VarField>(data);
  if (field == VarField::request_id) {
    value = mr::ngx::request_id(r);
  } else if (const mr::KeyEntry* key = request_key(r); key != nullptr) {
    if (field == VarField::key_id) value = key->key_id;
    if (field == VarField::partner_ref) value = key->partner_ref;
    if (field == VarField::club_id) {
      u_char* end = ngx_sprintf(reinterpret_cast<u_char*>(club_id_text), "%L",
                                static_cast<int64_t>(key->club_id));
      value = {club_id_text, static_cast<size_t>(end - reinterpret_cast<u_char*>(club_id_text))};
    }
  }
  if (value.empty()) {
    v->not_found = 1;
    return NGX_OK;
  }
  ngx_str_t copy = mr::ngx::pool_string(r->pool, value);
  if (copy.data == nullptr) return NGX_ERROR;
  v->data = copy.data;
  v->len = copy.len;
  v->valid = 1;
  v->no_cacheable = 0;
  v->not_found = 0;
  return NGX_OK;
}

ngx_int_t add_variables(ngx_conf_t* cf) {
  struct Var {
    ngx_str_t name;
    VarField field;
    ngx_uint_t flags;
  };
  Var vars[] = {
      {ngx_string("mr_key_id"), VarField::key_id, NGX_HTTP_VAR_NOCACHEABLE},
      {ngx_string("mr_club_id"), VarField::club_id, NGX_HTTP_VAR_NOCACHEABLE},
      {ngx_string("mr_partner_ref"), VarField::partner_ref, NGX_HTTP_VAR_NOCACHEABLE},
      {ngx_string("mr_request_id"), VarField::request_id, 0},
  };
  for (auto& var : vars) {
    ngx_http_variable_t* v = ngx_http_add_variable(cf, &var.name, var.flags);
    if (v == nullptr) return NGX_ERROR;
    v->get_handler = get_variable;
    v->data = static_cast<uintptr_t>(var.field);
  }
  // $mr_traceparent, $mr_route_name, $mr_error_code (modules/common/node_metrics).
  if (mr::ngx::add_request_variables(cf) != NGX_OK) return NGX_ERROR;
  return NGX_OK;
}

// Content phase, in locations with mr_json_error: answers with the JSON
// error for the location's status, or for the status error_page redirected
// here with (nginx's own 404, 405, 413, 429, 5xx).
ngx_int_t json_error_handler(ngx_http_request_t* r) {
  const mr_auth_loc_conf_t* lcf = loc_conf(r);
  if (lcf->json_error_status == kJsonErrorOff) return NGX_DECLINED;
  try {
    ngx_int_t status = lcf->json_error_status != kJsonErrorFromErrorPage ? lcf->json_error_status
                       : r->err_status != 0       ? static_cast<ngx_int_t>(r->err_status)
                                                  : NGX_HTTP_NOT_FOUND;
    if (r == r->main && !r->discard_body && r->request_body == nullptr) {
      if (ngx_http_discard_request_body(r) != NGX_OK) r->keepalive = 0;
    }
    return mr::ngx::send_error(r, mr::code_for_status(static_cast<int>(status)));
  } catch (...) {
    return NGX_ERROR;
  }
}

ngx_int_t postconfiguration(ngx_conf_t* cf) {
  auto* cmcf = static_cast<ngx_http_core_main_conf_t*>(
      ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module));
  if (!mr::ngx::add_phase_handler(cmcf, NGX_HTTP_ACCESS_PHASE, access_handler) ||
      !mr::ngx::add_phase_handler(cmcf, NGX_HTTP_CONTENT_PHASE, json_error_handler)) {
    return NGX_ERROR;
  }

  next_header_filter = ngx_http_top_header_filter;
  ngx_http_top_header_filter = header_filter;

  if (mr::ngx::init_request_id(cf) != NGX_OK) return NGX_ERROR;
  auto* mcf = static_cast<mr_auth_main_conf_t*>(
      ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_auth_module));
  if (mcf->used || mcf->catalogue_dsn.len != 0) {
    if (!mr::conf::auth_catalogue_settings_complete(cf, mcf)) return NGX_ERROR;
    if (mr::auth::load_catalogue(cf, mcf) != NGX_OK) return NGX_ERROR;
  }
  return mr::auth::add_metrics_zone(cf, mcf, &ngx_http_mr_auth_module);
}

char* merge_loc_conf(ngx_conf_t* cf, void* parent, void* child) {
  auto* mcf = static_cast<mr_auth_main_conf_t*>(
      ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_auth_module));
  return mr::conf::auth_merge_loc(cf, mcf, static_cast<mr_auth_loc_conf_t*>(parent),
                                  static_cast<mr_auth_loc_conf_t*>(child));
}

ngx_http_module_t module_ctx = {
    add_variables,                 // preconfiguration
    postconfiguration,             // postconfiguration
    mr::conf::auth_create_main,    // create main configuration
    nullptr,                       // init main configuration
    nullptr,                       // create server configuration
    nullptr,                       // merge server configuration
    mr::conf::auth_create_loc,     // create location configuration
    merge_loc_conf,                // merge location configuration
};

}  // namespace

extern "C" {
ngx_module_t ngx_http_mr_auth_module = {
    NGX_MODULE_V1,
    &module_ctx,           // module context
    mr::conf::auth_commands,  // module directives
    NGX_HTTP_MODULE,       // module type
    nullptr,               // init master
    nullptr,               // init module
    nullptr,               // init process
    nullptr,               // init thread
    nullptr,               // exit thread
    nullptr,               // exit process
    nullptr,               // exit master
    NGX_MODULE_V1_PADDING};
}
