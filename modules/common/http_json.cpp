#include "modules/common/http_json.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "modules/common/guarded.hpp"
#include "modules/common/node_metrics.hpp"
#include "modules/common/traceparent.hpp"

namespace mr::ngx {

ngx_str_t pool_string(ngx_pool_t* pool, std::string_view s) {
  ngx_str_t out{0, nullptr};
  auto* data = static_cast<u_char*>(ngx_pnalloc(pool, s.size() ? s.size() : 1));
  if (data == nullptr) return out;
  if (!s.empty()) std::memcpy(data, s.data(), s.size());
  out.data = data;
  out.len = s.size();
  return out;
}

std::optional<std::string_view> variable_value(ngx_http_request_t* r, ngx_int_t index) {
  if (index == NGX_ERROR) return std::nullopt;
  const ngx_http_variable_value_t* v = ngx_http_get_indexed_variable(r, index);
  if (v == nullptr || v->not_found || !v->valid) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(v->data), v->len);
}

void headers_in(ngx_http_request_t* r, std::span<const HeaderName> names,
                std::span<std::optional<std::string_view>> found) {
  const std::size_t count = std::min(names.size(), found.size());
  // One bit per wanted hash's low six bits: most headers (Host, Content-Type,
  // User-Agent...) fail this one test instead of a comparison per name.
  std::uint64_t wanted = 0;
  for (std::size_t n = 0; n < count; ++n) wanted |= std::uint64_t{1} << (names[n].hash & 63);
  for (ngx_list_part_t* part = &r->headers_in.headers.part; part != nullptr; part = part->next) {
    auto* h = static_cast<ngx_table_elt_t*>(part->elts);
    for (ngx_uint_t i = 0; i < part->nelts; i++) {
      if ((wanted >> (h[i].hash & 63) & 1) == 0) continue;
      for (std::size_t n = 0; n < count; ++n) {
        if (h[i].hash == names[n].hash && !found[n] && h[i].key.len == names[n].lower.size() &&
            ngx_memcmp(h[i].lowcase_key, names[n].lower.data(), names[n].lower.size()) == 0) {
          found[n] = view(h[i].value);
        }
      }
    }
  }
}

std::optional<std::string_view> header_in(ngx_http_request_t* r, const HeaderName& name) {
  std::optional<std::string_view> found;
  headers_in(r, {&name, 1}, {&found, 1});
  return found;
}

bool add_header_out(ngx_http_request_t* r, std::string_view name, std::string_view value) {
  auto* h = static_cast<ngx_table_elt_t*>(ngx_list_push(&r->headers_out.headers));
  if (h == nullptr) return false;
  h->hash = 1;
  h->key = pool_string(r->pool, name);
  h->value = pool_string(r->pool, value);
  return h->key.data != nullptr && h->value.data != nullptr;
}

std::string_view raw_path(ngx_http_request_t* r) {
  // unparsed_uri is the request target as sent; args_start marks the query.
  std::string_view target = view(r->unparsed_uri);
  if (auto q = target.find('?'); q != std::string_view::npos) target = target.substr(0, q);
  return target;
}

std::optional<std::string_view> request_body(ngx_http_request_t* r) {
  if (r->request_body == nullptr || r->request_body->bufs == nullptr) return std::string_view{};
  const auto in_file_only = [](const ngx_buf_t* b) { return b->in_file && !ngx_buf_in_memory(b); };
  const auto length = [&](const ngx_buf_t* b) {
    return static_cast<std::size_t>(in_file_only(b) ? b->file_last - b->file_pos : b->last - b->pos);
  };
  std::size_t total = 0;
  ngx_chain_t* only = nullptr;
  std::size_t parts = 0;
  bool spooled = false;
  for (ngx_chain_t* cl = r->request_body->bufs; cl != nullptr; cl = cl->next) {
    const std::size_t len = length(cl->buf);
    if (len == 0) continue;
    spooled = spooled || in_file_only(cl->buf);
    total += len;
    only = cl;
    parts++;
  }
  if (parts == 0) return std::string_view{};
  if (parts == 1 && !spooled) {
    return std::string_view{reinterpret_cast<const char*>(only->buf->pos), total};
  }
  // Several parts, or a part nginx spooled to its temp file (chunked framing
  // fills the buffer long before the body reaches the size cap): joined in
  // the pool. The file is one nginx has just written, at most the body cap.
  auto* joined = static_cast<u_char*>(ngx_pnalloc(r->pool, total));
  if (joined == nullptr) return std::nullopt;
  u_char* p = joined;
  for (ngx_chain_t* cl = r->request_body->bufs; cl != nullptr; cl = cl->next) {
    ngx_buf_t* b = cl->buf;
    const std::size_t len = length(b);
    if (len == 0) continue;
    if (in_file_only(b)) {
      const ssize_t n = ngx_read_file(b->file, p, len, b->file_pos);
      if (n != static_cast<ssize_t>(len)) return std::nullopt;
      p += len;
    } else {
      p = ngx_cpymem(p, b->pos, len);
    }
  }
  return std::string_view{reinterpret_cast<const char*>(joined), total};
}

void discard_body(ngx_http_request_t* r) {
  if (r == r->main && !r->discard_body && r->request_body == nullptr) {
    if (ngx_http_discard_request_body(r) != NGX_OK) r->keepalive = 0;
  }
}

std::optional<std::string_view> traceparent(ngx_http_request_t* r) {
  const auto given = header_in(r, "traceparent");
  return given ? valid_traceparent(*given) : std::nullopt;
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
