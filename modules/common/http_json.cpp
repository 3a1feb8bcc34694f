#include "modules/common/http_json.hpp"

#include <cstring>
#include <string>

#include "modules/common/node_metrics.hpp"
#include "modules/common/traceparent.hpp"

namespace mr::ngx {
namespace {
ngx_int_t g_request_id_index = NGX_ERROR;
}

ngx_str_t pool_string(ngx_pool_t* pool, std::string_view s) {
  ngx_str_t out{0, nullptr};
  auto* data = static_cast<u_char*>(ngx_pnalloc(pool, s.size() ? s.size() : 1));
  if (data == nullptr) return out;
  if (!s.empty()) std::memcpy(data, s.data(), s.size());
  out.data = data;
  out.len = s.size();
  return out;
}

std::optional<std::string_view> header_in(ngx_http_request_t* r, std::string_view name) {
  for (ngx_list_part_t* part = &r->headers_in.headers.part; part != nullptr; part = part->next) {
    auto* h = static_cast<ngx_table_elt_t*>(part->elts);
    for (ngx_uint_t i = 0; i < part->nelts; i++) {
      if (h[i].key.len == name.size() &&
          ngx_strncasecmp(h[i].key.data, reinterpret_cast<u_char*>(const_cast<char*>(name.data())),
                          name.size()) == 0) {
        return view(h[i].value);
      }
    }
  }
  return std::nullopt;
}

bool add_header_out(ngx_http_request_t* r, std::string_view name, std::string_view value) {
  auto* h = static_cast<ngx_table_elt_t*>(ngx_list_push(&r->headers_out.headers));
  if (h == nullptr) return false;
  h->hash = 1;
  h->key = pool_string(r->pool, name);
  h->value = pool_string(r->pool, value);
  return h->key.data != nullptr && h->value.data != nullptr;
}

ngx_int_t init_request_id(ngx_conf_t* cf) {
  ngx_str_t name = ngx_string("request_id");
  g_request_id_index = ngx_http_get_variable_index(cf, &name);
  if (g_request_id_index == NGX_ERROR) return NGX_ERROR;
  return init_outcome_variables(cf);
}

std::string_view request_id(ngx_http_request_t* r) {
  if (g_request_id_index == NGX_ERROR) return {};
  ngx_http_variable_value_t* v = ngx_http_get_indexed_variable(r, g_request_id_index);
  if (v == nullptr || v->not_found) return {};
  return {reinterpret_cast<const char*>(v->data), v->len};
}

std::string_view raw_path(ngx_http_request_t* r) {
  // unparsed_uri is the request target as sent; args_start marks the query.
  std::string_view target = view(r->unparsed_uri);
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  return target;
}

std::optional<std::string_view> request_body(ngx_http_request_t* r) {
  if (r->request_body == nullptr || r->request_body->bufs == nullptr) return std::string_view{};
  std::size_t total = 0;
  ngx_chain_t* only = nullptr;
  std::size_t memory_bufs = 0;
  for (ngx_chain_t* cl = r->request_body->bufs; cl != nullptr; cl = cl->next) {
    ngx_buf_t* b = cl->buf;
    if (b->in_file && !ngx_buf_in_memory(b)) return std::nullopt;
    const auto len = static_cast<std::size_t>(b->last - b->pos);
    if (len == 0) continue;
    total += len;
    only = cl;
    memory_bufs++;
  }
  if (memory_bufs == 0) return std::string_view{};
  if (memory_bufs == 1) {
    return std::string_view{reinterpret_cast<const char*>(only->buf->pos), total};
  }
  auto* joined = static_cast<u_char*>(ngx_pnalloc(r->pool, total));
  if (joined == nullptr) return std::nullopt;
  u_char* p = joined;
  for (ngx_chain_t* cl = r->request_body->bufs; cl != nullptr; cl = cl->next) {
    p = ngx_cpymem(p, cl->buf->pos, cl->buf->last - cl->buf->pos);
  }
  return std::string_view{reinterpret_cast<const char*>(joined), total};
}

std::optional<std::string_view> traceparent(ngx_http_request_t* r) {
  const auto given = header_in(r, "traceparent");
  return given ? valid_traceparent(*given) : std::nullopt;
}

ngx_int_t send_json(ngx_http_request_t* r, ngx_uint_t status, std::string_view body) {
  if (status >= 400) note_error_code(r, body);
  r->headers_out.status = status;
  r->err_status = 0;  // an error_page redirect must not override our status
  ngx_str_set(&r->headers_out.content_type, "application/json");
  r->headers_out.content_type_len = r->headers_out.content_type.len;
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
  try {
    return send_json(r, static_cast<ngx_uint_t>(status),
                     render_error(code, message, request_id(r), details));
  } catch (...) {
    return NGX_ERROR;
  }
}

}  // namespace mr::ngx
