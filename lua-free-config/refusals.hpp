// Configurations that would start but are dangerous: `nginx -t` refuses
// them, each with one line naming the directive and the fix.
//
//   mr_payout_simulator on          outside mr_environment sandbox
//   mr_test_helpers on              outside mr_environment sandbox
//   mr_ops on a non-loopback listen without mr_ops_token_file
//   mr_ledger in a location without mr_auth on
//
// (A missing or wrongly sized mr_master_key_file, and mr_auth without
// mr_catalogue_dsn, are refused where the auth module reads them.)
#pragma once

#include "lua-free-config/auth_conf.hpp"
#include "lua-free-config/ledger_conf.hpp"

namespace mr::conf {

// At the ledger module's postconfiguration, once every location is merged.
// `auth_ctx_index` is the loaded auth module's: its confs are read from the
// same configuration (the modules are separate .so files).
bool ledger_refusals_pass(ngx_conf_t* cf, const mr_ledger_main_conf_t* ledger,
                          ngx_uint_t auth_ctx_index);

}  // namespace mr::conf
