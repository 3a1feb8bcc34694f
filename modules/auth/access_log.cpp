#include "modules/auth/access_log.hpp"

#include "keys/key_catalogue.hpp"
#include "ngx-boundary/guarded.hpp"
#include "modules/common/access_log_fields.hpp"
#include "modules/common/request_id.hpp"
#include "modules/common/request_outcome.hpp"
#include "modules/common/request_reading.hpp"
#include "modules/common/variables.hpp"

namespace mr::auth {
namespace {

ngx_int_t g_idempotency_index = NGX_ERROR;  // NGX_ERROR: no module defines it
ngx_int_t g_upstream_time_index = NGX_ERROR;

// Whether a module has defined `name` by now (postconfiguration: every
// preconfiguration has run). Asking for the index of one nobody defines
// fails nginx -t, and mr_auth loads without mr_idempotency.
bool variable_defined(ngx_conf_t* cf, std::string_view name) {
  auto* cmcf = static_cast<ngx_http_core_main_conf_t*>(ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module));
  const auto* keys = static_cast<const ngx_hash_key_t*>(cmcf->variables_keys->keys.elts);
  for (ngx_uint_t i = 0; i < cmcf->variables_keys->keys.nelts; ++i) {
    if (mr::ngx::view(keys[i].key) == name) return true;
  }
  return false;
}

ngx_int_t variable_index(ngx_conf_t* cf, const char* name) {
  ngx_str_t s{std::char_traits<char>::length(name), reinterpret_cast<u_char*>(const_cast<char*>(name))};
  return ngx_http_get_variable_index(cf, &s);
}

// Percent-encodes into `out` (3 bytes per byte at most); returns the length.
std::size_t printable_route(std::string_view uri, u_char* out) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  u_char* at = out;
  for (char ch : uri) {
    const auto c = static_cast<unsigned char>(ch);
    if (c > 0x20 && c < 0x7f && c != '%' && c != '"' && c != '\\') {
      *at++ = c;
    } else {
      *at++ = '%';
      *at++ = static_cast<u_char>(kHex[c >> 4]);
      *at++ = static_cast<u_char>(kHex[c & 0xF]);
    }
  }
  return static_cast<std::size_t>(at - out);
}

// The replay header as the client saw it (set by mr_idempotency from
// Redis, or by the ledger from the database's record), found as nginx
// finds $sent_http_x_mr_idempotent_replay.
std::string_view replay_header(ngx_http_request_t* r) {
  static constexpr std::string_view kPrefix = "sent_http_";
  static char name[] = "sent_http_x_mr_idempotent_replay";
  ngx_str_t var{sizeof name - 1, reinterpret_cast<u_char*>(name)};
  ngx_http_variable_value_t value{};
  if (ngx_http_variable_unknown_header(&value, &var, &r->headers_out.headers.part, kPrefix.size()) != NGX_OK ||
      value.not_found) {
    return {};
  }
  return {reinterpret_cast<const char*>(value.data), value.len};
}

}  // namespace

ngx_int_t init_access_log(ngx_conf_t* cf) {
  g_upstream_time_index = variable_index(cf, "upstream_response_time");
  g_idempotency_index = variable_defined(cf, "mr_idempotency") ? variable_index(cf, "mr_idempotency") : NGX_ERROR;
  return g_upstream_time_index == NGX_ERROR ? NGX_ERROR : NGX_OK;
}

std::optional<std::string_view> logged_route(ngx_http_request_t* r) {
  auto* out = static_cast<u_char*>(ngx_pnalloc(r->pool, 3 * r->uri.len + 1));
  if (out == nullptr) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(out), printable_route(mr::ngx::view(r->uri), out));
}

ngx_int_t log_fields_value(ngx_http_request_t* r, ngx_http_variable_value_t* v, const mr::ngx::RequestContext* ctx) {
  const auto route = logged_route(r);
  if (!route) return NGX_ERROR;
  // Only a verified key is named, as in $mr_key_id.
  const mr::KeyEntry* key = ctx != nullptr ? ctx->key : nullptr;
  AccessLogFields fields;
  fields.request_id = mr::ngx::request_id(r);
  fields.key_id = key != nullptr ? std::string_view(key->key_id) : std::string_view{};
  fields.traceparent = mr::ngx::traceparent(r).value_or(std::string_view{});
  fields.club_id = key != nullptr ? std::string_view(key->club_id_text) : std::string_view{};
  fields.method = mr::ngx::view(r->main->method_name);
  fields.route = *route;
  fields.route_name = mr::ngx::route_name_text(r);
  fields.error_code = mr::ngx::error_code_text(r);
  fields.idempotent_replay = replay_header(r);
  fields.idempotency = mr::ngx::variable_value(r, g_idempotency_index).value_or(std::string_view{});
  fields.upstream_time = mr::ngx::variable_value(r, g_upstream_time_index).value_or(std::string_view{});
  const std::size_t size = plain_access_log_members_size(fields);
  auto* out = static_cast<u_char*>(ngx_pnalloc(r->pool, size));
  if (out == nullptr) return NGX_ERROR;
  if (write_plain_access_log_members(fields, reinterpret_cast<char*>(out))) {
    mr::ngx::set_variable(v, out, size, false);
    return NGX_OK;
  }
  return mr::ngx::guarded(r->connection->log, NGX_ERROR, [&]() -> ngx_int_t {
    ledger::JsonText text(512);
    const ngx_str_t copy = mr::ngx::pool_string(r->pool, access_log_members(text, fields));
    if (copy.data == nullptr) return NGX_ERROR;
    mr::ngx::set_variable(v, copy.data, copy.len, false);
    return NGX_OK;
  });
}

}  // namespace mr::auth
