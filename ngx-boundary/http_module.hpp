// The ngx_module_t of one of our HTTP modules: nginx's NGX_MODULE_V1 layout
// with its context, its directives and the per-worker hooks, the hooks our
// modules never use left empty. Evaluated at compile time, so the module
// is in place before nginx reads it from the loaded object.
#pragma once

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

using InitProcess = ngx_int_t (*)(ngx_cycle_t*);
using ExitProcess = void (*)(ngx_cycle_t*);

constexpr ngx_module_t http_module(ngx_http_module_t* ctx, ngx_command_t* commands, InitProcess init_process,
                                   ExitProcess exit_process = nullptr) {
  return {NGX_MODULE_V1,
          ctx,
          commands,
          NGX_HTTP_MODULE,
          nullptr,  // init master
          nullptr,  // init module
          init_process,
          nullptr,  // init thread
          nullptr,  // exit thread
          exit_process,
          nullptr,  // exit master
          NGX_MODULE_V1_PADDING};
}

}  // namespace mr::ngx
