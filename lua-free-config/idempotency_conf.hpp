// Directives of the idempotency edge module.
//
//   mr_idempotency on|off;                 http, server, location (default off): POSTs
//                                          carry X-MR-Idempotency-Key, scoped by the club
//   mr_redis <ip>:<port>;                  http (default 127.0.0.1:6379)
//   mr_redis_sentinel <ip>:<port>... master <name>;  http: instead of mr_redis, ask
//                                          these Sentinels for the master's address
//                                          (at every connect and after READONLY)
//   mr_redis_password_file <path>;         http: Redis AUTH password, read by the master
//   mr_redis_username <name>;              http: Redis ACL user for AUTH (needs the password)
//   mr_redis_connect_timeout <time>;       http (default 200ms)
//   mr_redis_timeout <time>;               http: per command (default 200ms); past it the
//                                          request goes on to the database path
//   mr_idempotency_ttl <time>;             http: how long Redis keeps answers (default 24h)
//   mr_idempotency_lock_ttl <time>;        http: how long a request in progress holds its
//                                          key (default 60s; longer than any answer takes)
//   mr_idempotency_replay_cache <size>|off; http: per worker, final answers kept in
//                                          memory to replay without asking Redis
//                                          (default 4m)
#pragma once

#include "lua-free-config/conf_where.hpp"
#include "ngx-boundary/nginx.hpp"

struct mr_idempotency_main_conf_t {
  ngx_str_t redis;  // "ip:port"
  ngx_msec_t connect_timeout;
  ngx_msec_t command_timeout;
  ngx_msec_t ttl;
  ngx_msec_t lock_ttl;
  size_t replay_cache;  // bytes per worker; 0: off
  ngx_flag_t used;
  ngx_str_t redis_host;  // parsed from redis
  ngx_int_t redis_port;
  ngx_str_t redis_password_file;
  ngx_str_t redis_username;
  ngx_str_t redis_password;  // read from the file at (re)load, wiped with the cycle
  ngx_array_t* redis_sentinels;     // of ngx_str_t "ip:port" (mr_redis_sentinel); null: none
  ngx_str_t redis_sentinel_master;  // the master's name at those Sentinels
  // For the errors found once the http block is read.
  mr_conf_where_t redis_where, redis_username_where, redis_password_file_where;
};

struct mr_idempotency_loc_conf_t {
  ngx_flag_t enabled;
};

namespace mr::conf {

extern ngx_command_t idempotency_commands[];

void* idempotency_create_main(ngx_conf_t* cf) noexcept;
char* idempotency_init_main(ngx_conf_t* cf, void* conf) noexcept;
void* idempotency_create_loc(ngx_conf_t* cf) noexcept;
// `main` is the http block's mr_idempotency_main_conf_t (the module passes its own).
char* idempotency_merge_loc(ngx_conf_t* cf, mr_idempotency_main_conf_t* main,
                            mr_idempotency_loc_conf_t* prev, mr_idempotency_loc_conf_t* conf);

}  // namespace mr::conf
