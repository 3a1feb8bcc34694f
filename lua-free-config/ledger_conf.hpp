// Directives of the ledger module.
//
//   mr_ledger;                              location: the partner API's content handler
//   mr_ledger_dsn "<libpq conninfo>";       http: the ledger database (one hostaddr or
//                                           a unix socket: connecting never resolves names)
//   mr_ledger_pool_size <n>;                http: connections per worker (default 4)
//   mr_ledger_settle_connections <n>;       http: of those, how many may run settles at
//                                          once (default 2; 0: all); the settles that
//                                          wait meanwhile go together in one batch
//   mr_ledger_queue_size <n>;               http: requests waiting per worker (default 1024)
//   mr_ledger_connect_timeout <time>;       http (default 3s)
//   mr_ledger_query_timeout <time>;         http: from arrival to answer (default 5s);
//                                           past it the answer is service_unavailable
//   mr_ops;                                 location: the ops listener (/healthz, /readyz,
//                                           /metrics, /payouts...); put it in its own server
//   mr_ops_token_file <path>;               http: the bearer token the ops listener asks
//                                           for (all but /healthz); read at (re)load
//   mr_payout_simulator on|off;             http (default off): sandbox only; payouts settle
//                                           by themselves (account 00000000 fails)
//   mr_payout_simulator_delay <time>;       http (default 5s): payout age before it settles
//   mr_test_helpers on|off;                 http (default off): sandbox only; partners drive
//                                           their payouts (POST /api/v1/test-helpers/...)
#pragma once

#include "lua-free-config/conf_where.hpp"
#include "ngx-boundary/nginx.hpp"

struct mr_ledger_main_conf_t {
  ngx_str_t dsn;
  ngx_uint_t pool_size;
  ngx_uint_t settle_connections;  // 0: every connection of the pool
  ngx_uint_t queue_size;
  ngx_msec_t connect_timeout;
  ngx_msec_t query_timeout;
  ngx_flag_t used;  // some location has mr_ledger or mr_ops
  ngx_str_t ops_token_file;
  ngx_str_t ops_token;  // the file's content, trimmed
  ngx_flag_t simulator;
  ngx_msec_t simulator_delay;
  ngx_flag_t test_helpers;
  // The auth module's mr_environment, copied at postconfiguration for the
  // partner handler (GET /api/v1/club names it).
  ngx_str_t environment;
  // Recorded while locations merge, for the refusals at postconfiguration
  // (lua-free-config/refusals.hpp).
  ngx_array_t* partner_locations;  // of mr_ledger_location_t: where mr_ledger serves
  ngx_array_t* ops_servers;        // of ngx_http_core_srv_conf_t*: servers with mr_ops
  // For the errors found once the http block is read.
  mr_conf_where_t ops_token_file_where, simulator_where, test_helpers_where, pool_size_where,
      settle_connections_where;
  mr_conf_where_t ops_where;  // the first mr_ops
};

struct mr_ledger_location_t {
  ngx_str_t name;   // the location's name, for the error line
  void** loc_conf;  // its conf of every module (the auth module's is read from it)
  mr_conf_where_t where;  // its mr_ledger directive
};

// What a location serves; the ledger module's content handler reads it.
enum class mr_ledger_role : ngx_uint_t { none, partner_api, ops };

struct mr_ledger_loc_conf_t {
  mr_ledger_role role;  // set by mr_ledger or mr_ops, never inherited
  mr_conf_where_t role_where;
};

namespace mr::conf {

extern ngx_command_t ledger_commands[];

void* ledger_create_main(ngx_conf_t* cf) noexcept;
char* ledger_init_main(ngx_conf_t* cf, void* conf) noexcept;
void* ledger_create_loc(ngx_conf_t* cf) noexcept;
// `main` is the http block's mr_ledger_main_conf_t (the module passes its own).
char* ledger_merge_loc(ngx_conf_t* cf, mr_ledger_main_conf_t* main, mr_ledger_loc_conf_t* conf);

}  // namespace mr::conf
