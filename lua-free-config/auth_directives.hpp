// Directives of the auth edge module. nginx.conf is the only configuration
// language; every mr_auth* setting is parsed, defaulted and merged here.
//
//   mr_environment sandbox|production;      http      required where mr_auth is on
//   mr_catalogue_dsn "<libpq conninfo>";    http      keys and clubs, read at (re)load
//   mr_master_key_file <path>;              http      32-byte AES-256-GCM key file
//   mr_auth on|off;                         http, server, location (default off)
//   mr_timestamp_window <time>;             http, server, location (default 300s)
//   mr_max_body_size <size>;                http, server, location (default 16k)
//   mr_request_id on|off;                   http, server, location (default off):
//                                           X-Request-Id on every response
//   mr_json_error [status];                 location: answer with the JSON error
//                                           envelope (of error_page's status if none)
#pragma once

#include <memory>

#include "modules/common/nginx.hpp"

namespace mr {
class KeyCatalogue;
}

// Standard layout on purpose: nginx's ngx_conf_set_*_slot write by offsetof.
struct mr_auth_main_conf_t {
  ngx_str_t environment;
  ngx_str_t catalogue_dsn;
  ngx_str_t master_key_file;
  ngx_flag_t used;                  // some location has mr_auth on
  const mr::KeyCatalogue* catalogue;  // loaded at (re)load, freed with the cycle
};

struct mr_auth_loc_conf_t {
  ngx_flag_t enabled;
  ngx_flag_t request_id_header;
  time_t timestamp_window;
  size_t max_body_size;
  ngx_int_t json_error_status;  // 0: not a JSON error location, -1: error_page's status
};

extern ngx_command_t mr_auth_commands[];

void* mr_auth_create_main_conf(ngx_conf_t* cf);
char* mr_auth_init_main_conf(ngx_conf_t* cf, void* conf);
void* mr_auth_create_loc_conf(ngx_conf_t* cf);
char* mr_auth_merge_loc_conf(ngx_conf_t* cf, void* parent, void* child);

// Reads keys and clubs of the configured environment from PostgreSQL with
// the master key. Runs in the master at start and reload: on failure the
// new configuration is refused and the running one keeps serving.
ngx_int_t mr_auth_load_catalogue(ngx_conf_t* cf, mr_auth_main_conf_t* mcf);

// Defined by the auth module: the module itself and the content handler
// that mr_json_error installs.
extern "C" ngx_module_t ngx_http_mr_auth_module;
extern "C" ngx_int_t mr_json_error_handler(ngx_http_request_t* r);
