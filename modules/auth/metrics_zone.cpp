#include "modules/auth/metrics_zone.hpp"

#include <cstring>

#include "keys/key_catalogue.hpp"
#include "ngx-boundary/guarded.hpp"
#include "modules/common/node_metrics.hpp"
#include "modules/common/phases.hpp"
#include "modules/common/request_outcome.hpp"

extern "C" ngx_module_t ngx_http_mr_auth_module;

namespace mr::auth {
namespace {

namespace metrics = mr::metrics;

// Runs in the master once the zone is mapped: at start with no old data, at
// a reload with the previous cycle's block when the zone was kept.
ngx_int_t init_zone(ngx_shm_zone_t* zone, void* old_data) noexcept {
  auto* mcf = static_cast<mr_auth_main_conf_t*>(zone->data);
  auto* block = static_cast<metrics::Block*>(old_data);
  if (block == nullptr) {
    auto* shpool = reinterpret_cast<ngx_slab_pool_t*>(zone->shm.addr);
    block = static_cast<metrics::Block*>(ngx_slab_calloc(shpool, sizeof(metrics::Block)));
    if (block == nullptr) return NGX_ERROR;
  }
  if (!metrics::valid(*block)) {
    std::memset(static_cast<void*>(block), 0, sizeof(metrics::Block));
    metrics::initialise(*block);
  }
  zone->data = block;
  const auto keys = mcf->catalogue != nullptr ? static_cast<std::int64_t>(mcf->catalogue->size()) : 0;
  metrics::store(block->catalogue_keys, keys);
  metrics::store(block->catalogue_loaded_unix_ms, static_cast<std::int64_t>(mcf->catalogue_loaded_unix_ms));
  metrics::store(block->catalogue_load_ms, static_cast<std::int64_t>(mcf->catalogue_load_ms));
  const auto source = mcf->catalogue == nullptr      ? metrics::CatalogueSource::none
                      : mcf->catalogue_from_snapshot ? metrics::CatalogueSource::snapshot
                                                     : metrics::CatalogueSource::database;
  metrics::store(block->catalogue_source, static_cast<std::int64_t>(source));
  metrics::store(block->catalogue_read_unix_ms, static_cast<std::int64_t>(mcf->catalogue_read_unix_ms));
  return NGX_OK;
}

// Log phase: one finished request. No lock, no allocation.
ngx_int_t count_request(ngx_http_request_t* r) noexcept {
  const auto* mcf = static_cast<const mr_auth_main_conf_t*>(
      ngx_http_get_module_main_conf(r, ngx_http_mr_auth_module));
  metrics::Block* block = mr::ngx::zone_block(mcf->metrics);
  if (block == nullptr) return NGX_OK;
  mr::ngx::guarded(r->connection->log, [&] {
    // As $status: nginx's error status, else the one sent (499: the client went away).
    const auto status = static_cast<int>(r->err_status != 0 ? r->err_status : r->headers_out.status);
    const ngx_time_t* now = ngx_timeofday();
    const ngx_msec_int_t ms = static_cast<ngx_msec_int_t>((now->sec - r->start_sec) * 1000 +
                                                          (static_cast<ngx_msec_int_t>(now->msec) -
                                                           static_cast<ngx_msec_int_t>(r->start_msec)));
    metrics::count_request(*block, mr::ngx::route(r), status, mr::ngx::error_code(r),
                           static_cast<std::uint64_t>(ms > 0 ? ms : 0));
  });
  return NGX_OK;
}

}  // namespace

ngx_int_t add_metrics_zone(ngx_conf_t* cf, mr_auth_main_conf_t* mcf, void* tag) {
  if (mcf->metrics.zone_name.len == 0) return NGX_OK;
  const size_t size = sizeof(metrics::Block) + 16 * ngx_pagesize;
  ngx_shm_zone_t* zone = ngx_shared_memory_add(cf, &mcf->metrics.zone_name, size, tag);
  if (zone == nullptr) return NGX_ERROR;
  if (zone->data != nullptr) {
    ngx_conf_log_error(NGX_LOG_EMERG, cf, 0, "mr_metrics_zone \"%V\" is already in use",
                       &mcf->metrics.zone_name);
    return NGX_ERROR;
  }
  zone->init = init_zone;
  zone->data = mcf;
  mcf->metrics.zone = zone;
  auto* cmcf = static_cast<ngx_http_core_main_conf_t*>(
      ngx_http_conf_get_module_main_conf(cf, ngx_http_core_module));
  return mr::ngx::add_phase_handler(cmcf, NGX_HTTP_LOG_PHASE, count_request) ? NGX_OK : NGX_ERROR;
}

}  // namespace mr::auth
