#include "modules/common/request_id.hpp"

#include <openssl/rand.h>

#include <cstdint>

#include "modules/common/variables.hpp"

namespace mr::ngx {
namespace {

ngx_int_t g_request_id_index = NGX_ERROR;

// Per process: seeded lazily in the process that first needs an id, so a
// forked worker never inherits its master's prefix.
struct IdState {
  ngx_pid_t pid = 0;
  u_char prefix_hex[16];
  std::uint64_t counter = 0;
};
IdState g_ids;

bool seed_for_this_process() {
  if (g_ids.pid == ngx_pid && g_ids.pid != 0) return true;
  u_char random[8];
  if (RAND_bytes(random, sizeof random) != 1) return false;
  ngx_hex_dump(g_ids.prefix_hex, random, sizeof random);
  g_ids.counter = 0;
  g_ids.pid = ngx_pid;
  return true;
}

}  // namespace

ngx_int_t generate_request_id(ngx_http_request_t* r, ngx_http_variable_value_t* v) {
  if (!seed_for_this_process()) {
    ngx_log_error(NGX_LOG_ALERT, r->connection->log, 0, "mr: RAND_bytes failed; no request id");
    v->not_found = 1;
    return NGX_OK;
  }
  auto* id = static_cast<u_char*>(ngx_pnalloc(r->pool, 32));
  if (id == nullptr) return NGX_ERROR;
  ngx_memcpy(id, g_ids.prefix_hex, 16);
  ngx_sprintf(id + 16, "%016uxL", static_cast<uint64_t>(++g_ids.counter));
  set_variable(v, id, 32, true);
  return NGX_OK;
}

ngx_int_t init_request_id(ngx_conf_t* cf) {
  ngx_str_t name = ngx_string("mr_request_id");
  g_request_id_index = ngx_http_get_variable_index(cf, &name);
  return g_request_id_index == NGX_ERROR ? NGX_ERROR : NGX_OK;
}

std::string_view request_id(ngx_http_request_t* r) {
  return variable_value(r, g_request_id_index).value_or(std::string_view{});
}

}  // namespace mr::ngx
