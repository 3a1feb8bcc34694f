#include "modules/common/answers.hpp"

#include <algorithm>

#include "ngx-boundary/guarded.hpp"
#include "modules/common/request_id.hpp"
#include "modules/common/request_outcome.hpp"
#include "modules/common/request_reading.hpp"

namespace mr::ngx {

bool add_header_out(ngx_http_request_t* r, std::string_view name, std::string_view value) {
  auto* h = static_cast<ngx_table_elt_t*>(ngx_list_push(&r->headers_out.headers));
  if (h == nullptr) return false;
  h->hash = 1;
  h->key = pool_string(r->pool, name);
  h->value = pool_string(r->pool, value);
  return h->key.data != nullptr && h->value.data != nullptr;
}

ngx_int_t send_json(ngx_http_request_t* r, ngx_uint_t status, std::string_view body,
                    std::optional<ErrorCode> error, std::string_view content_type) {
  if (error) note_error_code(r, *error);
  r->headers_out.status = status;
  r->err_status = 0;  // an error_page redirect must not override our status
  r->headers_out.content_type.data = reinterpret_cast<u_char*>(const_cast<char*>(content_type.data()));
  r->headers_out.content_type.len = content_type.size();
  // The media type without parameters (where nginx's charset would go).
  r->headers_out.content_type_len = std::min(content_type.size(), content_type.find(';'));
  r->headers_out.content_type_lowcase = nullptr;
  r->headers_out.content_length_n = static_cast<off_t>(body.size());
  if (r->headers_out.content_length) {
    r->headers_out.content_length->hash = 0;
    r->headers_out.content_length = nullptr;
  }
  ngx_int_t rc = ngx_http_send_header(r);
  if (rc == NGX_ERROR || rc > NGX_OK || r->header_only) return rc;

  auto* b = static_cast<ngx_buf_t*>(ngx_calloc_buf(r->pool));
  if (b == nullptr) return NGX_ERROR;
  ngx_str_t copy = pool_string(r->pool, body);
  if (copy.data == nullptr) return NGX_ERROR;
  b->pos = copy.data;
  b->last = copy.data + copy.len;
  b->memory = 1;
  b->last_buf = (r == r->main) ? 1 : 0;
  b->last_in_chain = 1;
  ngx_chain_t out{b, nullptr};
  return ngx_http_output_filter(r, &out);
}

ngx_int_t send_error(ngx_http_request_t* r, ErrorCode code, std::string_view message,
                     std::span<const FieldProblem> details) {
  const int status = http_status(code);
  if (status == 429 || status == 503 || code == ErrorCode::idempotency_in_progress) {
    if (!add_header_out(r, "Retry-After", "1")) return NGX_ERROR;
  }
  return guarded(r->connection->log, NGX_ERROR, [&] {
    return send_json(r, static_cast<ngx_uint_t>(status), render_error(code, message, request_id(r), details),
                     code);
  });
}

}  // namespace mr::ngx
