// Small readers of parsed directive values shared by the *_conf files.
#pragma once

#include <string_view>

#include "ngx-boundary/nginx.hpp"

namespace mr::conf {

inline std::string_view view(const ngx_str_t& s) {
  return {reinterpret_cast<const char*>(s.data), s.len};
}

}  // namespace mr::conf
