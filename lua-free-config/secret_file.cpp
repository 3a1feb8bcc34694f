#include "lua-free-config/secret_file.hpp"

#include <openssl/crypto.h>

#include <string>

#include "keys/private_file.hpp"
#include "lua-free-config/conf_values.hpp"
#include "ngx-boundary/guarded.hpp"

namespace mr::conf {

bool read_secret_file(ngx_conf_t* cf, const char* directive, const mr_conf_where_t& where, const ngx_str_t& path,
                      std::size_t min_len, ngx_str_t& out) {
  std::string err;
  // The master key's rule for every secret file (keys/private_file.hpp).
  auto content = mr::read_private_file(view(path), 511 + 2, err);
  if (!content) {
    log_at(cf, where, NGX_LOG_EMERG, "%s: %s", directive, err.c_str());
    return false;
  }
  std::size_t len = content->size();
  while (len > 0 && ((*content)[len - 1] == '\n' || (*content)[len - 1] == '\r' || (*content)[len - 1] == ' ')) len--;
  ngx_pool_cleanup_t* cln = len >= min_len && len <= 511 ? ngx_pool_cleanup_add(cf->pool, sizeof(ngx_str_t)) : nullptr;
  u_char* data = cln != nullptr ? static_cast<u_char*>(ngx_pnalloc(cf->pool, len)) : nullptr;
  if (data != nullptr) ngx_memcpy(data, content->data(), len);
  OPENSSL_cleanse(content->data(), content->size());
  if (len < min_len || len > 511) {
    log_at(cf, where, NGX_LOG_EMERG, "%s: the secret in \"%V\" must be %uz to 511 bytes", directive, &path,
           min_len);
    return false;
  }
  if (data == nullptr) return false;
  out.data = data;
  out.len = len;
  *static_cast<ngx_str_t*>(cln->data) = out;
  cln->handler = mr::ngx::c_entry(+[](void* p) noexcept {
    auto* s = static_cast<ngx_str_t*>(p);
    OPENSSL_cleanse(s->data, s->len);
  });
  return true;
}

}  // namespace mr::conf
