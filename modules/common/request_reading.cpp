#include "modules/common/request_reading.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

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

}  // namespace mr::ngx
