// The one place an exception stops before a C frame. nginx, libpq, hiredis
// and libcurl call our functions from C: nothing may unwind through them.
// Every such entry is noexcept and runs its body through guarded(): what
// escapes the body (out of memory, a bug) is logged on the caller's log and
// the C caller gets the failure it understands (a directive's setter or a
// module's init conf NGX_CONF_ERROR, a create conf nullptr: nginx stops
// loading the configuration). The compiler holds it where we hand nginx a
// callback: c_entry() and the handler types below take only noexcept
// functions, in the modules (modules/) and in the directives' command
// tables and conf callbacks (lua-free-config/, which includes this from
// here: it depends on no module). tests/unit/modules/guarded_entries_test.sh
// keeps every other `catch (...)` out of both and every configuration
// callback of nginx's shape noexcept.
#pragma once

#include <exception>
#include <type_traits>
#include <utility>

#include "ngx-boundary/nginx.hpp"

namespace mr::ngx {

// Logs the exception being handled (its what(), if it has one) at ALERT.
inline void log_escaped(ngx_log_t* log) noexcept {
  const char* what = "not a std::exception";
  try {
    throw;
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  if (log != nullptr) ngx_log_error(NGX_LOG_ALERT, log, 0, "mr: stopped an exception before nginx: %s", what);
}

// body(), or after an exception fallback(), which must not throw.
template <class Body, class Fallback>
  requires std::is_nothrow_invocable_v<Fallback&>
std::invoke_result_t<Body&> guarded(ngx_log_t* log, Body&& body, Fallback&& fallback) noexcept {
  try {
    return body();
  } catch (...) {
    log_escaped(log);
  }
  return fallback();
}

// body(), or `failed` (the C caller's failure value) after an exception.
template <class Body>
  requires(!std::is_void_v<std::invoke_result_t<Body&>> &&
           std::is_nothrow_move_constructible_v<std::invoke_result_t<Body&>>)
std::invoke_result_t<Body&> guarded(ngx_log_t* log, std::type_identity_t<std::invoke_result_t<Body&>> failed,
                                    Body&& body) noexcept {
  return guarded(log, std::forward<Body>(body), [&failed]() noexcept { return std::move(failed); });
}

// body(), which returns nothing; an exception is logged and dropped.
template <class Body>
  requires std::is_void_v<std::invoke_result_t<Body&>>
void guarded(ngx_log_t* log, Body&& body) noexcept {
  guarded(log, std::forward<Body>(body), []() noexcept {});
}

// Only a noexcept function converts: `ev.handler = c_entry(on_timer);`
// does not compile when on_timer may throw. Lambdas: c_entry(+[](...) noexcept {...}).
template <class R, class... A>
constexpr auto c_entry(R (*f)(A...) noexcept) noexcept {
  return f;
}

using EventHandler = void (*)(ngx_event_t*) noexcept;
using PhaseHandler = ngx_int_t (*)(ngx_http_request_t*) noexcept;

}  // namespace mr::ngx
