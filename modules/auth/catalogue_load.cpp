#include "modules/auth/catalogue_load.hpp"

#include <chrono>
#include <new>
#include <string>

#include "keys/key_catalogue.hpp"
#include "keys/secret_box.hpp"
#include "modules/common/http_json.hpp"

namespace mr::auth {

ngx_int_t load_catalogue(ngx_conf_t* cf, mr_auth_main_conf_t* mcf) {
  using mr::ngx::view;
  try {
    const auto started = std::chrono::steady_clock::now();
    std::string err;
    auto master = mr::load_master_key(view(mcf->master_key_file), err);
    if (!master) {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0,
                         "mr_master_key_file: %s (the key that sealed the stored secrets; a new "
                         "one is made with \"mrctl master-key create --out <path>\")",
                         err.c_str());
      return NGX_ERROR;
    }
    auto catalogue = mr::load_key_catalogue(view(mcf->catalogue_dsn), *master, view(mcf->environment), err);
    if (!catalogue) {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_catalogue_dsn: cannot load keys: %s",
                         err.c_str());
      return NGX_ERROR;
    }
    // The catalogue lives as long as this configuration's cycle: placement
    // new into cleanup storage, destroyed when the cycle's pool goes.
    ngx_pool_cleanup_t* cln = ngx_pool_cleanup_add(cf->pool, sizeof(mr::KeyCatalogue));
    if (cln == nullptr) return NGX_ERROR;
    auto* stored = new (cln->data) mr::KeyCatalogue(std::move(*catalogue));
    cln->handler = [](void* data) { static_cast<mr::KeyCatalogue*>(data)->~KeyCatalogue(); };
    mcf->catalogue = stored;
    // For the metrics zone (filled when the master maps it).
    mcf->catalogue_load_ms = static_cast<ngx_msec_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                         std::chrono::steady_clock::now() - started)
                                                         .count());
    mcf->catalogue_loaded_unix_ms = static_cast<ngx_msec_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
    ngx_conf_log_error(NGX_LOG_NOTICE, cf, 0, "mr_auth: %uz active %V keys loaded",
                       stored->size(), &mcf->environment);
  } catch (const std::exception& e) {
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_auth: loading keys failed: %s", e.what());
    return NGX_ERROR;
  }
  return NGX_OK;
}

}  // namespace mr::auth
