// The one place nginx's C headers enter C++: inside extern "C", so the
// module's references to ngx_* bind to the executable's unmangled symbols.
#pragma once

extern "C" {
#include <ngx_config.h>
#include <ngx_core.h>
#include <ngx_http.h>
}
