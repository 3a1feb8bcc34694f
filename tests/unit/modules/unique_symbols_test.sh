#!/usr/bin/env bash
# unique_symbols_test.sh <module.so>...: no module defines an STB_GNU_UNIQUE
# symbol. The dynamic loader never unloads an object that defined one, so a
# reload onto a new module file would leave the old one mapped in the
# master for good, and the new file would share the old one's copies.
set -euo pipefail
rc=0
for so in "$@"; do
  unique=$(readelf -sW --dyn-syms "$so" | awk '$5 == "UNIQUE" { print $8 }' | sort -u | c++filt)
  if [ -n "$unique" ]; then
    echo "FAIL: $so defines STB_GNU_UNIQUE symbols (compile everything it links with -fno-gnu-unique):" >&2
    echo "$unique" | sed 's/^/  /' >&2
    rc=1
  fi
done
[ $rc -eq 0 ] && echo "no STB_GNU_UNIQUE symbols in $# modules"
exit $rc
