#include "modules/ledger/webhook_secrets.hpp"

#include <cstring>
#include <optional>

#include <openssl/crypto.h>

#include "keys/webhook_secret.hpp"
#include "modules/common/request_context.hpp"

namespace mr::ngx::ledger {
namespace {

class Secrets final : public mr::ledger::WebhookSecrets {
 public:
  // The key lives in mr_auth's main conf, as long as the cycle.
  explicit Secrets(const u_char* key) : key_(key) {}

  std::string new_endpoint_id() const override { return mr::new_endpoint_id(); }

  std::string new_sealed_secret(std::string_view endpoint_id) const override {
    std::string secret = mr::new_webhook_secret();
    if (secret.empty()) return {};
    std::string sealed = mr::seal_webhook_secret(key(), endpoint_id, secret);
    OPENSSL_cleanse(secret.data(), secret.size());
    return sealed;
  }

  // A secret that does not open (sealed under another master key, or its
  // row altered) answers internal_error: the operator learns why here.
  std::optional<std::string> open(std::string_view endpoint_id, std::string_view sealed) const override {
    auto secret = mr::open_webhook_secret(key(), endpoint_id, sealed);
    if (!secret) {
      ngx_log_error(NGX_LOG_ERR, ngx_cycle->log, 0,
                    "mr_ledger: the secret of webhook endpoint \"%*s\" does not open under this master key "
                    "(mr_master_key_file must be the key it was sealed with)",
                    endpoint_id.size(), endpoint_id.data());
    }
    return secret;
  }

 private:
  // A copy on the stack for one operation, wiped when it goes (MasterKey).
  mr::MasterKey key() const {
    mr::MasterKey k;
    std::memcpy(k.bytes.data(), key_, k.bytes.size());
    return k;
  }
  const u_char* key_;
};

}  // namespace

const mr::ledger::WebhookSecrets* webhook_secrets() {
  // A worker serves one cycle; the check keeps a single-process nginx
  // (master_process off) right across a reload.
  static const volatile ngx_cycle_t* cycle = nullptr;
  static std::optional<Secrets> secrets;
  if (cycle != ngx_cycle) {
    cycle = ngx_cycle;
    secrets.reset();
    const mr_auth_main_conf_t* auth = auth_main_conf(const_cast<ngx_cycle_t*>(ngx_cycle));
    if (auth != nullptr && auth->webhook_secret_key_set) secrets.emplace(auth->webhook_secret_key);
  }
  return secrets ? &*secrets : nullptr;
}

}  // namespace mr::ngx::ledger
