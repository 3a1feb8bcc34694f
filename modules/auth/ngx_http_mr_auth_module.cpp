// The auth edge module: reads the body in the rewrite phase, checks key,
// headers, timestamp window and HMAC (rules in auth_core, order in
// check_request) and keeps what it learned in the request context the other
// modules read; answers a refusal in the access phase, after limit_req
// (preaccess) has charged it to the client address; exports $mr_key_id,
// $mr_club_id, $mr_partner_ref (verified keys only), $mr_unauthenticated_addr,
// $mr_route, $mr_request_id and $mr_log_fields (modules/auth/access_log) for
// logs and limit_req, stamps X-Request-Id on every response and answers
// nginx's own errors with the JSON envelope (mr_json_error).
// Directives: lua-free-config/auth_conf.
#include <sys/stat.h>

#include <chrono>
#include <new>

#include "keys/key_catalogue.hpp"
#include "ledger/errors.hpp"
#include "ledger/read_requests.hpp"
#include "lua-free-config/auth_conf.hpp"
#include "ngx-boundary/guarded.hpp"
#include "ngx-boundary/http_module.hpp"
#include "modules/auth/access_log.hpp"
#include "modules/auth/auth_core.hpp"
#include "modules/auth/catalogue_load.hpp"
#include "modules/auth/catalogue_source.hpp"
#include "modules/auth/error_log_tag.hpp"
#include "modules/auth/metrics_zone.hpp"
#include "modules/common/answers.hpp"
#include "signing/digest.hpp"
#include "modules/common/phases.hpp"
#include "modules/common/request_context.hpp"
#include "modules/common/request_id.hpp"
#include "modules/common/request_outcome.hpp"
#include "modules/common/request_reading.hpp"
#include "modules/common/variables.hpp"
#include "modules/common/wall_clock.hpp"

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

// The module ctx, or after an internal redirect (error_page to /mr-error
// clears every module's ctx) the one still in the request pool: the log line
// of a verified request answered by an error page still names its key.
const AuthCtx* surviving_ctx(ngx_http_request_t* r) { return mr::ngx::request_context(r); }

// Decides the request once its body is read: the verified key, or the
// refusal the access handler answers after limit_req has counted it.
void authenticate(ngx_http_request_t* r, AuthCtx* ctx) {
  const mr_auth_main_conf_t* mcf = main_conf(r);
  const mr_auth_loc_conf_t* lcf = loc_conf(r);
  auto body = mr::ngx::request_body(r);
  if (!body) {
    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0, "mr_auth: could not read the request body back");
    ctx->refusal = mr::Error{mr::ErrorCode::internal_error, {}, {}};
    return;
  }
  mr::auth::RequestFacts facts;
  facts.method = mr::ngx::view(r->method_name);
  facts.path = mr::ngx::raw_path(r);
  static constexpr mr::ngx::HeaderName kHeaders[] = {"x-mr-key-id", "x-mr-timestamp", "x-mr-signature",
                                                     "x-mr-idempotency-key"};
  std::optional<std::string_view> values[std::size(kHeaders)];
  mr::ngx::headers_in(r, kHeaders, values);
  facts.key_id = values[0];
  facts.timestamp = values[1];
  facts.signature = values[2];
  facts.idempotency_key = values[3];
  if (r->headers_in.content_type != nullptr) {
    facts.content_type = mr::ngx::view(r->headers_in.content_type->value);
  }
  ctx->method = facts.method;
  ctx->path = facts.path;
  ctx->body = *body;
  ctx->idempotency_key = facts.idempotency_key.value_or(std::string_view{});
  const mr::Sha256Hex body_hash = mr::sha256_hex_inline(*body);
  facts.body_sha256_hex = mr::view(body_hash);

  const mr::KeyEntry* found = nullptr;
  const mr::auth::KeyLookup lookup = [&](std::string_view id) -> std::optional<mr::auth::KeyView> {
    found = mcf->catalogue ? mcf->catalogue->find(id) : nullptr;
    if (found == nullptr) return std::nullopt;
    return mr::auth::KeyView{found->secret, found->club_id, found->partner_ref, found->hmac.get()};
  };
  auto verdict = mr::auth::check_request(facts, lookup, mr::ngx::wall_clock(),
                                               std::chrono::seconds(lcf->timestamp_window));
  if (verdict.error) {
    ctx->refusal = mr::Error{*verdict.error, std::move(verdict.message), {}};
    return;
  }
  // Verified: from here on the key's rate limit counts the request.
  ctx->key = found;
  ctx->signature = verdict.signature;
  ctx->signature_stale_at = verdict.stale_at;
  // The club comes from the key alone (spec rule 7); the ledger's rule,
  // applied here to every path under the edge.
  if (mr::ledger::query_has_club_id(mr::ngx::view(r->args))) {
    ctx->refusal = mr::ledger::club_id_in_query_error();
  }
}

void body_read(ngx_http_request_t* r) noexcept {
  AuthCtx* ctx = get_ctx(r);
  mr::ngx::guarded(
      r->connection->log, [&] { authenticate(r, ctx); },
      [ctx]() noexcept { ctx->refusal = mr::Error{mr::ErrorCode::internal_error, {}, {}}; });
  ctx->status = NGX_DECLINED;
  r->write_event_handler = ngx_http_core_run_phases;
  ngx_http_core_run_phases(r);
}

// Rewrite phase: read the body and decide, before limit_req (preaccess)
// looks at $mr_key_id (verified keys only) and $mr_unauthenticated_addr.
ngx_int_t rewrite_handler(ngx_http_request_t* r) noexcept {
  return mr::ngx::guarded(r->connection->log, NGX_HTTP_INTERNAL_SERVER_ERROR, [&]() -> ngx_int_t {
    if (r != r->main) return NGX_DECLINED;
    const mr_auth_loc_conf_t* lcf = loc_conf(r);
    if (lcf->enabled || lcf->request_id_header) mr::auth::tag_error_log(r);
    if (!lcf->enabled) return NGX_DECLINED;
    if (AuthCtx* ctx = get_ctx(r); ctx != nullptr) return ctx->status;

    AuthCtx* ctx = mr::ngx::new_request_context(r);
    if (ctx == nullptr) return NGX_HTTP_INTERNAL_SERVER_ERROR;

    r->request_body_in_single_buf = 1;
    ngx_int_t rc = ngx_http_read_client_request_body(r, body_read);
    if (rc >= NGX_HTTP_SPECIAL_RESPONSE) return rc;
    ngx_http_finalize_request(r, NGX_DONE);
    return NGX_DONE;
  });
}

// Access phase: answers the refusal decided in the rewrite phase.
ngx_int_t access_handler(ngx_http_request_t* r) noexcept {
  if (r != r->main || !loc_conf(r)->enabled) return NGX_DECLINED;
  const AuthCtx* ctx = get_ctx(r);
  if (ctx != nullptr && !ctx->refusal) return NGX_DECLINED;
  const ngx_int_t rc = mr::ngx::guarded(r->connection->log, NGX_ERROR, [&] {
    return ctx == nullptr ? mr::ngx::send_error(r, mr::ErrorCode::internal_error)
                          : mr::ngx::send_error(r, ctx->refusal->code, ctx->refusal->message, ctx->refusal->details);
  });
  ngx_http_finalize_request(r, rc);
  return NGX_DONE;
}

ngx_int_t header_filter(ngx_http_request_t* r) noexcept {
  return mr::ngx::guarded(r->connection->log, NGX_ERROR, [&]() -> ngx_int_t {
    if (r == r->main && loc_conf(r)->request_id_header) {
      const std::string_view id = mr::ngx::request_id(r);
      if (!id.empty() && !mr::ngx::add_header_out(r, "X-Request-Id", id)) return NGX_ERROR;
    }
    return next_header_filter(r);
  });
}

enum class VarField : uintptr_t { key_id, club_id, partner_ref, request_id, unauthenticated_addr, route, log_fields };

ngx_int_t g_binary_remote_addr_index = NGX_ERROR;

// v names `len` bytes that outlive the request's log phase (the request
// pool, or the key catalogue the request's ctx already points into); none
// is "not found".
ngx_int_t set_value(ngx_http_variable_value_t* v, std::string_view value) {
  if (value.empty()) {
    v->not_found = 1;
  } else {
    mr::ngx::set_variable(v, reinterpret_cast<u_char*>(const_cast<char*>(value.data())), value.size(), true);
  }
  return NGX_OK;
}

// No allocation but the request pool's: these run for every log line.
ngx_int_t get_variable(ngx_http_request_t* r, ngx_http_variable_value_t* v, uintptr_t data) noexcept {
  return mr::ngx::guarded(r->connection->log, NGX_ERROR, [&]() -> ngx_int_t {
    const auto field = static_cast<VarField>(data);
    if (field == VarField::request_id) return mr::ngx::generate_request_id(r, v);
    if (field == VarField::route) {
      const auto route = mr::auth::logged_route(r);
      return route ? set_value(v, *route) : NGX_ERROR;
    }
    const AuthCtx* ctx = surviving_ctx(r);
    if (field == VarField::log_fields) return mr::auth::log_fields_value(r, v, ctx);
    // Only a verified key is named: a request that merely names one is
    // neither charged to its rate limit nor logged as its club's.
    const mr::KeyEntry* key = ctx != nullptr ? ctx->key : nullptr;
    switch (field) {
      case VarField::key_id: return set_value(v, key != nullptr ? std::string_view(key->key_id) : "");
      case VarField::partner_ref: return set_value(v, key != nullptr ? std::string_view(key->partner_ref) : "");
      case VarField::club_id: return set_value(v, key != nullptr ? std::string_view(key->club_id_text) : "");
      case VarField::unauthenticated_addr:
        if (ctx != nullptr && key == nullptr && ctx->refusal) {
          if (const auto addr = mr::ngx::variable_value(r, g_binary_remote_addr_index)) return set_value(v, *addr);
        }
        return set_value(v, "");
      case VarField::request_id:
      case VarField::route:
      case VarField::log_fields:
        break;  // answered above
    }
    return set_value(v, "");
  });
}

ngx_int_t add_variables(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, NGX_ERROR, [&]() -> ngx_int_t {
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
        {ngx_string("mr_unauthenticated_addr"), VarField::unauthenticated_addr, NGX_HTTP_VAR_NOCACHEABLE},
        {ngx_string("mr_route"), VarField::route, NGX_HTTP_VAR_NOCACHEABLE},
        {ngx_string("mr_log_fields"), VarField::log_fields, NGX_HTTP_VAR_NOCACHEABLE},
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
  });
}

// Content phase, in locations with mr_json_error: answers with the JSON
// error for the location's status, or for the status error_page redirected
// here with (nginx's own 404, 405, 413, 429, 5xx).
ngx_int_t json_error_handler(ngx_http_request_t* r) noexcept {
  const mr_auth_loc_conf_t* lcf = loc_conf(r);
  if (lcf->json_error_status == kJsonErrorOff) return NGX_DECLINED;
  const ngx_int_t status = lcf->json_error_status != kJsonErrorFromErrorPage ? lcf->json_error_status
                           : r->err_status != 0       ? static_cast<ngx_int_t>(r->err_status)
                                                      : NGX_HTTP_NOT_FOUND;
  mr::ngx::discard_body(r);
  return mr::ngx::guarded(r->connection->log, NGX_ERROR,
                          [&] { return mr::ngx::send_error(r, mr::code_for_status(static_cast<int>(status))); });
}

ngx_int_t postconfiguration(ngx_conf_t* cf) noexcept {
  return mr::ngx::guarded(cf->log, NGX_ERROR, [&]() -> ngx_int_t {
    auto* cmcf = static_cast<ngx_http_core_main_conf_t*>(
        ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module));
    if (!mr::ngx::add_phase_handler(cmcf, NGX_HTTP_REWRITE_PHASE, rewrite_handler) ||
        !mr::ngx::add_phase_handler(cmcf, NGX_HTTP_ACCESS_PHASE, access_handler) ||
        !mr::ngx::add_phase_handler(cmcf, NGX_HTTP_CONTENT_PHASE, json_error_handler)) {
      return NGX_ERROR;
    }

    next_header_filter = ngx_http_top_header_filter;
    ngx_http_top_header_filter = header_filter;

    if (mr::ngx::init_request_id(cf) != NGX_OK || mr::auth::init_access_log(cf) != NGX_OK) return NGX_ERROR;
    ngx_str_t binary_remote_addr = ngx_string("binary_remote_addr");
    g_binary_remote_addr_index = ngx_http_get_variable_index(cf, &binary_remote_addr);
    if (g_binary_remote_addr_index == NGX_ERROR) return NGX_ERROR;
    auto* mcf = static_cast<mr_auth_main_conf_t*>(
        ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_auth_module));
    // `nginx -s <signal>` parses the configuration only to find the pid
    // file: it must never wait for, or fail on, a database.
    if ((mcf->used || mcf->catalogue_dsn.len != 0) && ngx_process != NGX_PROCESS_SIGNALLER) {
      // Request paths carry member ids: every file nginx creates from here on
      // (access and error logs, at start, reload and reopen, in the master
      // and in the workers it forks) is at most 0640, as Debian's logs are.
      ::umask(::umask(0) | 027);
      if (!mr::conf::auth_catalogue_settings_complete(cf, mcf) ||
          !mr::conf::auth_resolve_catalogue_snapshot(cf, mcf) || mr::auth::load_catalogue(cf, mcf) != NGX_OK ||
          mr::auth::add_catalogue_report(cf, mcf, &ngx_http_mr_auth_module) != NGX_OK) {
        return NGX_ERROR;
      }
    }
    return mr::auth::add_metrics_zone(cf, mcf, &ngx_http_mr_auth_module);
  });
}

char* merge_loc_conf(ngx_conf_t* cf, void* parent, void* child) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = static_cast<mr_auth_main_conf_t*>(
        ngx_http_conf_get_module_main_conf(cf, ngx_http_mr_auth_module));
    return mr::conf::auth_merge_loc(cf, mcf, static_cast<mr_auth_loc_conf_t*>(parent),
                                    static_cast<mr_auth_loc_conf_t*>(child));
  });
}

// Where the request context and the node's counters are (the common
// code finds both by the auth module's name, this module included).
ngx_int_t init_process(ngx_cycle_t* cycle) noexcept {
  return mr::ngx::guarded(cycle->log, NGX_ERROR, [&]() -> ngx_int_t {
    mr::ngx::bind_request_context(cycle);
    return NGX_OK;
  });
}

ngx_http_module_t module_ctx = {
    mr::ngx::c_entry(add_variables),               // preconfiguration
    mr::ngx::c_entry(postconfiguration),           // postconfiguration
    mr::ngx::c_entry(mr::conf::auth_create_main),  // create main configuration
    nullptr,                                       // init main configuration
    nullptr,                                       // create server configuration
    nullptr,                                       // merge server configuration
    mr::ngx::c_entry(mr::conf::auth_create_loc),   // create location configuration
    mr::ngx::c_entry(merge_loc_conf),              // merge location configuration
};

}  // namespace

extern "C" {
constinit ngx_module_t ngx_http_mr_auth_module = mr::ngx::http_module(&module_ctx, mr::conf::auth_commands, init_process);
}
