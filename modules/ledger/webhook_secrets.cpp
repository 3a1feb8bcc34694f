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

  std::optional<std::string> open(std::string_view endpoint_id, std::string_view sealed) const override {
    return mr::open_webhook_secret(key(), endpoint_id, sealed);
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
