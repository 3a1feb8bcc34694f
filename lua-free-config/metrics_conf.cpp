#include "lua-free-config/metrics_conf.hpp"

#include <algorithm>
#include <string_view>

#include "lua-free-config/conf_values.hpp"
#include "ngx-boundary/guarded.hpp"

namespace mr::conf {

char* set_metrics_zone(ngx_conf_t* cf, ngx_command_t* cmd, void* conf) noexcept {
  return mr::ngx::guarded(cf->log, static_cast<char*>(NGX_CONF_ERROR), [&]() -> char* {
    auto* mcf = reinterpret_cast<mr_metrics_conf_t*>(static_cast<char*>(conf) + cmd->offset);
    if (mcf->zone_name.len != 0) return const_cast<char*>("is duplicate");
    const auto* value = static_cast<ngx_str_t*>(cf->args->elts);
    const std::string_view name = view(value[1]);
    const bool ok = !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
    if (!ok) {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_metrics_zone: \"%V\" is not 1 to 64 of A-Z a-z 0-9 _ -",
                         &value[1]);
      return static_cast<char*>(NGX_CONF_ERROR);
    }
    mcf->zone_name = value[1];
    return NGX_CONF_OK;
  });
}

}  // namespace mr::conf
