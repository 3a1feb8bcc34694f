#include "modules/common/fingerprint.hpp"

#include "modules/auth/auth_core.hpp"

namespace mr {

std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body) {
  auth::Sha256 h;
  h.update(method);
  h.update("\n");
  h.update(path);
  h.update("\n");
  h.update(body);
  return h.hex_final();
}

}  // namespace mr
