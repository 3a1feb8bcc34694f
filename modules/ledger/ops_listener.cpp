#include "modules/ledger/ops_listener.hpp"

#include <string>

#include <openssl/crypto.h>

#include "lua-free-config/ledger_conf.hpp"
#include "modules/common/http_json.hpp"
#include "modules/ledger/statement_run.hpp"

extern "C" ngx_module_t ngx_http_mr_ledger_module;

namespace mr::ngx::ledger {
namespace {

// "Authorization: Bearer <token>", compared in constant time.
bool token_matches(ngx_http_request_t* r) {
  const auto* mcf = static_cast<const mr_ledger_main_conf_t*>(
      ngx_http_get_module_main_conf(r, ngx_http_mr_ledger_module));
  const std::string_view token = view(mcf->ops_token);
  const auto given = header_in(r, "Authorization");
  const std::string expected = "Bearer " + std::string(token);
  return !token.empty() && given && given->size() == expected.size() &&
         CRYPTO_memcmp(given->data(), expected.data(), expected.size()) == 0;
}

ngx_int_t start(ngx_http_request_t* r) {
  const std::string_view path = raw_path(r);
  auto body = request_body(r);
  if (!body) return send_error(r, mr::ErrorCode::payload_too_large);
  mr::ledger::Request request;
  request.method = view(r->method_name);
  request.path = path;
  request.query = view(r->args);
  request.body = *body;
  request.request_id = request_id(r);
  return run_prepared(r, mr::ledger::prepare_ops(request));
}

}  // namespace

// The token is checked before any body is read: a caller without it gets
// nothing read or spooled on its behalf.
ngx_int_t ops_handler(ngx_http_request_t* r) {
  try {
    if (raw_path(r) == "/healthz") {
      discard_body(r);
      return send_json(r, 200, R"({"ok":true,"data":{"status":"ok"}})");
    }
    if (!token_matches(r)) {
      discard_body(r);
      return send_error(r, mr::ErrorCode::unauthorized, "The ops listener wants its bearer token.");
    }
  } catch (...) {
    return NGX_HTTP_INTERNAL_SERVER_ERROR;
  }
  return read_body_then<start>(r);
}

}  // namespace mr::ngx::ledger
