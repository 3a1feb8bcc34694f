#include "modules/auth/catalogue_load.hpp"

#include <chrono>
#include <new>

#include <openssl/crypto.h>
#include <string>

#include "keys/key_catalogue.hpp"
#include "keys/secret_box.hpp"
#include "keys/webhook_secret.hpp"
#include "modules/auth/catalogue_source.hpp"
#include "modules/common/request_reading.hpp"

namespace mr::auth {

ngx_int_t load_catalogue(ngx_conf_t* cf, mr_auth_main_conf_t* mcf) {
  using mr::ngx::view;
  try {
    const auto started = std::chrono::steady_clock::now();
    std::string err;
    auto master = mr::load_master_key(view(mcf->master_key_file), err);
    if (!master) {
      mr::conf::log_at(cf, mcf->master_key_where, NGX_LOG_EMERG,
                       "mr_master_key_file: %s (the key that sealed the stored secrets: restore "
                       "that file from your copy of it; a new key would open none of them)",
                       err.c_str());
      return NGX_ERROR;
    }
    auto record_key = mr::derive_key(*master, "mr idempotency record mac v1");
    auto webhook_key = mr::webhook_sealing_key(*master);
    ngx_pool_cleanup_t* wipe = ngx_pool_cleanup_add(cf->pool, 0);
    if (!record_key || !webhook_key || wipe == nullptr) {
      ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_auth: cannot derive the idempotency record and webhook keys");
      return NGX_ERROR;
    }
    ngx_memcpy(mcf->idempotency_record_key, record_key->data(), record_key->size());
    OPENSSL_cleanse(record_key->data(), record_key->size());
    mcf->idempotency_record_key_set = 1;
    ngx_memcpy(mcf->webhook_secret_key, webhook_key->bytes.data(), webhook_key->bytes.size());
    mcf->webhook_secret_key_set = 1;  // webhook_key wipes itself (MasterKey)
    wipe->data = mcf;
    wipe->handler = [](void* data) noexcept {
      auto* conf = static_cast<mr_auth_main_conf_t*>(data);
      OPENSSL_cleanse(conf->idempotency_record_key, sizeof(conf->idempotency_record_key));
      OPENSSL_cleanse(conf->webhook_secret_key, sizeof(conf->webhook_secret_key));
    };
    // The database, else the last-known-good snapshot (catalogue_source).
    if (load_keys(cf, mcf, *master) != NGX_OK) return NGX_ERROR;
    // For the metrics zone (filled when the master maps it).
    mcf->catalogue_load_ms = static_cast<ngx_msec_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                         std::chrono::steady_clock::now() - started)
                                                         .count());
    mcf->catalogue_loaded_unix_ms = static_cast<ngx_msec_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
  } catch (const std::exception& e) {
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_auth: loading keys failed: %s", e.what());
    return NGX_ERROR;
  }
  return NGX_OK;
}

}  // namespace mr::auth
