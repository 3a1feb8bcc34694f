#include "modules/common/node_metrics.hpp"

namespace mr::ngx {
namespace {

mr::metrics::Block* g_block = nullptr;  // each module .so has its own copy

}  // namespace

mr::metrics::Block* node_metrics() { return g_block; }

mr::metrics::Block* zone_block(const mr_metrics_conf_t& conf) {
  if (conf.zone == nullptr || conf.zone->data == nullptr) return nullptr;
  auto* block = static_cast<mr::metrics::Block*>(conf.zone->data);
  return mr::metrics::valid(*block) ? block : nullptr;
}

void bind_node_metrics(const mr_auth_main_conf_t* auth) {
  g_block = auth != nullptr ? zone_block(auth->metrics) : nullptr;
}

}  // namespace mr::ngx
