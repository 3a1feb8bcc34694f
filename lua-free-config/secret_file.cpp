#include "lua-free-config/secret_file.hpp"

#include <openssl/crypto.h>

namespace mr::conf {

bool read_secret_file(ngx_conf_t* cf, const char* directive, const ngx_str_t& path, std::size_t min_len,
                      ngx_str_t& out) {
  ngx_file_t file{};
  file.name = path;
  file.log = cf->log;
  file.fd = ngx_open_file(path.data, NGX_FILE_RDONLY, NGX_FILE_OPEN, 0);
  if (file.fd == NGX_INVALID_FILE) {
    ngx_conf_log_error(NGX_LOG_EMERG, cf, ngx_errno, "%s: cannot open \"%V\"", directive, &path);
    return false;
  }
  u_char buf[512];
  const ssize_t n = ngx_read_file(&file, buf, sizeof(buf), 0);
  ngx_close_file(file.fd);
  std::size_t len = n > 0 ? static_cast<std::size_t>(n) : 0;
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ')) len--;
  if (len < min_len || len == sizeof(buf)) {
    OPENSSL_cleanse(buf, sizeof(buf));
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "%s: the secret in \"%V\" must be %uz to 511 bytes", directive,
                       &path, min_len);
    return false;
  }
  ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(cf->pool, sizeof(ngx_str_t));
  u_char* data = static_cast<u_char*>(ngx_pnalloc(cf->pool, len));
  if (cln == nullptr || data == nullptr) {
    OPENSSL_cleanse(buf, sizeof(buf));
    return false;
  }
  ngx_memcpy(data, buf, len);
  OPENSSL_cleanse(buf, sizeof(buf));
  out.data = data;
  out.len = len;
  *static_cast<ngx_str_t*>(cln->data) = out;
  cln->handler = [](void* p) {
    auto* s = static_cast<ngx_str_t*>(p);
    OPENSSL_cleanse(s->data, s->len);
  };
  return true;
}

}  // namespace mr::conf
