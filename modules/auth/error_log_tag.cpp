#include "modules/auth/error_log_tag.hpp"

#include "modules/common/request_id.hpp"

namespace mr::auth {
namespace {

// nginx's own ngx_http_log_error_handler (the same for every request), or
// whatever another module put there before us.
ngx_http_log_handler_pt g_next = nullptr;
// The id may be made here (a line logged before the response): a failure
// to make it logs, which must not come back here.
bool g_inside = false;

u_char* with_request_id(ngx_http_request_t* r, ngx_http_request_t* sr, u_char* buf, size_t len) noexcept {
  u_char* p = g_next != nullptr ? g_next(r, sr, buf, len) : buf;
  if (g_inside) return p;
  g_inside = true;
  const std::string_view id = mr::ngx::request_id(r);
  g_inside = false;
  const size_t left = len - static_cast<size_t>(p - buf);
  if (id.empty() || left == 0) return p;
  return ngx_snprintf(p, left, ", request_id: \"%*s\"", id.size(), id.data());
}

}  // namespace

void tag_error_log(ngx_http_request_t* r) {
  if (r->log_handler == with_request_id) return;
  if (g_next == nullptr) g_next = r->log_handler;
  // Another handler than the one saved (a module wrapping per request):
  // leave it alone rather than skip it.
  if (r->log_handler != g_next) return;
  r->log_handler = with_request_id;
}

}  // namespace mr::auth
