#!/usr/bin/env bash
# guarded_entries_test.sh <source dir>...: no exception reaches nginx,
# libpq, hiredis or libcurl by one rule, not by convention: every C entry is
# noexcept and runs its body through ngx-boundary/guarded.hpp, the only
# place that catches everything (modules/ and lua-free-config/, which
# depends on no module, both include it).
#
# 1. A `catch (...)` anywhere else in these directories is a hand-written
#    guard this rule replaced: refused.
# 2. Every function of the shape of an nginx configuration callback (a
#    directive's setter, char* (ngx_conf_t*, ngx_command_t*, void*); a
#    module's create conf, void* (ngx_conf_t*); its init main conf,
#    char* (ngx_conf_t*, void*); its merge conf, char* (ngx_conf_t*, void*,
#    void*)) is declared noexcept, so that c_entry() takes it into a command
#    table or a module context and its body has to be guarded to report a
#    failure: one without noexcept is refused. (nginx's own
#    ngx_conf_set_*_slot setters are C and never throw.)
set -euo pipefail
status=0

found=$(grep -rn --include='*.cpp' --include='*.hpp' -E 'catch[[:space:]]*\([[:space:]]*\.\.\.[[:space:]]*\)' "$@" |
  grep -v '^ngx-boundary/guarded\.hpp:' || true)
if [ -n "$found" ]; then
  echo "FAIL: catch (...) outside ngx-boundary/guarded.hpp (use mr::ngx::guarded):" >&2
  echo "$found" | sed 's/^/  /' >&2
  status=1
fi

# A parameter: its type, then a name or none.
conf='ngx_conf_t[[:space:]]*\*[[:space:]]*[A-Za-z_0-9]*'
cmd='ngx_command_t[[:space:]]*\*[[:space:]]*[A-Za-z_0-9]*'
ptr='void[[:space:]]*\*[[:space:]]*[A-Za-z_0-9]*'
name='[A-Za-z_][A-Za-z_0-9:]*'
shapes="(char[[:space:]]*\*[[:space:]]*$name[[:space:]]*\([[:space:]]*$conf,[[:space:]]*$cmd,[[:space:]]*$ptr[[:space:]]*\))"
shapes+="|(void[[:space:]]*\*[[:space:]]*$name[[:space:]]*\([[:space:]]*$conf[[:space:]]*\))"
shapes+="|(char[[:space:]]*\*[[:space:]]*$name[[:space:]]*\([[:space:]]*$conf,[[:space:]]*$ptr[[:space:]]*\))"
shapes+="|(char[[:space:]]*\*[[:space:]]*$name[[:space:]]*\([[:space:]]*$conf,[[:space:]]*$ptr,[[:space:]]*$ptr[[:space:]]*\))"
callbacks=$(grep -rn --include='*.cpp' --include='*.hpp' -E "^[[:space:]]*(static[[:space:]]+|inline[[:space:]]+)*($shapes)" "$@" || true)
unguarded=$(echo "$callbacks" | grep -v -E '\)[[:space:]]*noexcept' | grep -v '^$' || true)
if [ -n "$unguarded" ]; then
  echo "FAIL: nginx configuration callbacks without noexcept (run the body through mr::ngx::guarded):" >&2
  echo "$unguarded" | sed 's/^/  /' >&2
  status=1
fi
checked=$(echo "$callbacks" | grep -c . || true)
if [ "$checked" -lt 10 ]; then
  echo "FAIL: found only $checked configuration callbacks in $*: the pattern no longer matches them" >&2
  status=1
fi
[ $status -eq 0 ] && echo "every catch-all is guarded()'s; $checked configuration callbacks, all noexcept"
exit $status
