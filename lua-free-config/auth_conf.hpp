// Directives of the auth edge module. nginx.conf is the only configuration
// language; every mr_auth* setting is parsed, defaulted and merged here.
// Nothing here knows a module: the auth module registers its handlers from
// these structs at postconfiguration.
//
//   mr_environment sandbox|production;      http      required where mr_auth is on
//   mr_catalogue_dsn "<libpq conninfo>";    http      keys and clubs, read at (re)load
//   mr_master_key_file <path>;              http      32-byte AES-256-GCM key file
//   mr_catalogue_snapshot <path>|off;       http      last-known-good keys, sealed (default
//                                                     <master key's folder>/mr-catalogue-<env>.snapshot)
//   mr_auth on|off;                         http, server, location (default off)
//   mr_timestamp_window <time>;             http, server, location (default 300s)
//   mr_max_body_size <size>;                http, server, location (default 16k)
//   mr_request_id on|off;                   http, server, location (default off):
//                                           X-Request-Id on every response
//   mr_json_error [status];                 location: answer with the JSON error
//                                           envelope (of error_page's status if none)
//   mr_metrics_zone <name>;                 http: see metrics_conf.hpp
#pragma once

#include "lua-free-config/conf_where.hpp"
#include "lua-free-config/metrics_conf.hpp"
#include "ngx-boundary/nginx.hpp"

namespace mr {
class KeyCatalogue;
}

// Standard layout on purpose: nginx's ngx_conf_set_*_slot write by offsetof.
struct mr_auth_main_conf_t {
  ngx_str_t environment;
  ngx_str_t catalogue_dsn;
  ngx_str_t master_key_file;
  mr_conf_where_t master_key_where;   // for errors found at postconfiguration
  mr_conf_where_t auth_where;         // the first mr_auth on that a location uses
  ngx_flag_t used;                    // some location has mr_auth on
  const mr::KeyCatalogue* catalogue;  // loaded by the module at (re)load, freed with the cycle
  ngx_msec_t catalogue_loaded_unix_ms; // when and how long that load took (metrics)
  ngx_msec_t catalogue_load_ms;
  // mr_catalogue_snapshot: the last-known-good catalogue's file, "off" for
  // none; resolved at postconfiguration (default beside the master key).
  ngx_str_t catalogue_snapshot;
  ngx_flag_t catalogue_from_snapshot;  // the database could not be read: the keys are the snapshot's
  ngx_msec_t catalogue_read_unix_ms;   // when the keys served were read from the database
  void* catalogue_report;              // what the load has to say (modules/auth/catalogue_source)
  mr_metrics_conf_t metrics;
  // Derived from the master key at (re)load, wiped with the cycle: the
  // idempotency module seals its Redis records with it.
  u_char idempotency_record_key[32];
  ngx_flag_t idempotency_record_key_set;
  // Also derived at (re)load and wiped with the cycle: webhook endpoint
  // secrets are sealed and opened with it (keys/webhook_secret.hpp).
  u_char webhook_secret_key[32];
  ngx_flag_t webhook_secret_key_set;
};

struct mr_auth_loc_conf_t {
  ngx_flag_t enabled;
  mr_conf_where_t enabled_where;  // the mr_auth directive it was set by
  ngx_flag_t request_id_header;
  time_t timestamp_window;
  size_t max_body_size;
  ngx_int_t json_error_status;  // mr_json_error: kJsonErrorOff, kJsonErrorFromErrorPage or 400..599
};

inline constexpr ngx_int_t kJsonErrorOff = 0;
inline constexpr ngx_int_t kJsonErrorFromErrorPage = 1;  // the status error_page redirected with

namespace mr::conf {

extern ngx_command_t auth_commands[];

void* auth_create_main(ngx_conf_t* cf) noexcept;
void* auth_create_loc(ngx_conf_t* cf) noexcept;
// `main` is the http block's mr_auth_main_conf_t (the module passes its own).
char* auth_merge_loc(ngx_conf_t* cf, mr_auth_main_conf_t* main, mr_auth_loc_conf_t* prev,
                     mr_auth_loc_conf_t* conf);
// At postconfiguration, when some location has mr_auth on: every setting
// the catalogue needs is there (one-line nginx -t error otherwise).
bool auth_catalogue_settings_complete(ngx_conf_t* cf, const mr_auth_main_conf_t* main);
// Then: mr_catalogue_snapshot's file, or its default beside the master key
// when it was not set; false (out of memory) after an nginx -t error.
bool auth_resolve_catalogue_snapshot(ngx_conf_t* cf, mr_auth_main_conf_t* main);

}  // namespace mr::conf
