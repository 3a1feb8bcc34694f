// Binds a hiredis async context to nginx's event loop: hiredis's
// add/del read/write hooks become nginx events on a connection made with
// ngx_get_connection over the context's fd, and those events call
// redisAsyncHandleRead/Write. Shared by the Redis client and its Sentinel
// lookup.
#pragma once

extern "C" {
#include <hiredis/async.h>
}

#include "ngx-boundary/nginx.hpp"

namespace mr::redis {

// Asked when hiredis wants write interest: true when the caller will write
// the output itself (a posted flush), so no epoll write interest is needed.
using DeferWrite = bool (*)(redisAsyncContext* ac);

// Installs the hooks on `ac` (ac->data stays the caller's). False when
// nginx has no free connection: the caller frees `ac`.
bool attach(redisAsyncContext* ac, ngx_log_t* log, DeferWrite defer_write = nullptr);

// Write interest on an attached context: a non-blocking connect completes
// on writability, and hiredis asks for it only once a command is queued.
void want_write(redisAsyncContext* ac);

}  // namespace mr::redis
