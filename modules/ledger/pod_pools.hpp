// This worker's PostgreSQL pools, one per pod: the home pod
// (mr_ledger_dsn) at index 0, then the directory's pods in the catalogue's
// order, so that a key's `pod` (keys/key_catalogue.hpp) is its pool's index.
// A request goes to its club's pod and to no other: one pod's outage is
// only its clubs' outage.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "lua-free-config/ledger_conf.hpp"
#include "ngx-boundary/nginx.hpp"
#include "modules/ledger/pg_pool.hpp"

namespace mr {
class KeyCatalogue;
}

namespace mr::ngx::ledger {

struct PodPool {
  std::string name;
  std::unique_ptr<mr::pg::Pool> pool;
};

// Every pod's pool (empty before init_process or when no location uses them).
std::vector<PodPool>& worker_pods();

// Pod `pod`'s pool; nullptr when there is none.
mr::pg::Pool* pod_pool(std::size_t pod);

// The pool of the authenticated request's club; the home pod's for a
// request with no club (the ops listener).
mr::pg::Pool* pool_of(ngx_http_request_t* r);

// At a worker's start: a pool for the home pod and each of the catalogue's
// pods, with the ledger's pool settings. Throws (the caller catches) when
// memory runs out.
void start_pod_pools(const mr_ledger_main_conf_t& mcf, const mr::KeyCatalogue* catalogue, ngx_log_t* log);
void stop_pod_pools();

}  // namespace mr::ngx::ledger
