// Directives of webhook delivery (contract section 10; registered by the
// webhooks module, built into the ledger module's file).
//
//   mr_webhook_delivery on|off;             http (default: on where mr_ledger or mr_ops
//                                           serves): this node's workers send the
//                                           deliveries that are due
//   mr_webhook_schedule <time>...;          http (default 0 5s 5m 30m 2h 5h 10h 10h):
//                                           the wait before each attempt; the first is 0
//   mr_webhook_timeout <time>;              http (default 15s): one attempt, connect to
//                                           the last byte of the answer
//   mr_webhook_concurrency <n>;             http (default 16): attempts in flight per worker
//   mr_webhook_poll <time>;                 http (default 5s): how often a worker looks for
//                                           due deliveries without a notification
//   mr_webhook_insecure_targets on|off;     http (default: on in sandbox, off otherwise):
//                                           allow http:// and loopback, private and other
//                                           non-public addresses; nginx -t refuses on
//                                           unless mr_environment sandbox
#pragma once

#include "ngx-boundary/nginx.hpp"

// Standard layout: ngx_conf_set_*_slot write by offsetof.
struct mr_webhooks_main_conf_t {
  ngx_flag_t delivery;          // resolved at postconfiguration (webhooks_resolve)
  ngx_array_t* schedule;        // of ngx_msec_t; nullptr until set or resolved
  ngx_msec_t timeout;
  ngx_uint_t concurrency;
  ngx_msec_t poll;
  ngx_flag_t insecure_targets;  // resolved at postconfiguration
};

namespace mr::conf {

extern ngx_command_t webhooks_commands[];

void* webhooks_create_main(ngx_conf_t* cf) noexcept;
char* webhooks_init_main(ngx_conf_t* cf, void* conf) noexcept;

// At postconfiguration, once the ledger's locations are merged: the defaults
// that depend on them (`ledger_used`: some location has mr_ledger or
// mr_ops) and on mr_environment (`sandbox`), and the refusal of insecure
// targets outside the sandbox. False after a one-line nginx -t error.
bool webhooks_resolve(ngx_conf_t* cf, mr_webhooks_main_conf_t* conf, bool ledger_used, bool sandbox);

}  // namespace mr::conf
