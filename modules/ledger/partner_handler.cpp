#include "modules/ledger/partner_handler.hpp"

#include "keys/key_catalogue.hpp"
#include "lua-free-config/ledger_conf.hpp"
#include "modules/common/answers.hpp"
#include "modules/common/request_context.hpp"
#include "modules/common/request_id.hpp"
#include "modules/common/request_reading.hpp"
#include "modules/ledger/statement_run.hpp"
#include "modules/ledger/webhook_secrets.hpp"

extern "C" ngx_module_t ngx_http_mr_ledger_module;

namespace mr::ngx::ledger {
namespace {

ngx_int_t start(ngx_http_request_t* r) {
  const RequestContext* edge = authenticated(r);
  if (edge == nullptr) {
    ngx_log_error(NGX_LOG_ERR, r->connection->log, 0,
                  "mr_ledger: no authenticated request; is mr_auth on here?");
    return send_error(r, mr::ErrorCode::internal_error);
  }
  mr::ledger::Request request;
  request.method = view(r->method_name);
  request.path = raw_path(r);
  request.query = view(r->args);
  request.body = edge->body;
  request.club_id = edge->key->club_id;
  request.partner_ref = edge->key->partner_ref;
  request.request_id = request_id(r);
  request.idempotency_key = edge->idempotency_key;
  request.fingerprint = edge->fingerprint();
  if (request.method == "POST") request.signature = edge->signature;
  const auto* mcf = static_cast<const mr_ledger_main_conf_t*>(
      ngx_http_get_module_main_conf(r, ngx_http_mr_ledger_module));
  request.environment = view(mcf->environment);
  request.test_helpers = mcf->test_helpers == 1;
  request.webhook_secrets = webhook_secrets();
  return run_prepared(r, mr::ledger::prepare(request));
}

}  // namespace

ngx_int_t partner_handler(ngx_http_request_t* r) { return read_body_then<start>(r); }

}  // namespace mr::ngx::ledger
