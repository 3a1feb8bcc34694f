#!/usr/bin/env bash
# dsn_file_test.sh <mrctl>: mrctl --dsn-file holds the file to the master
# key's rule: a file group or others may read or write, or a folder, is
# refused with exit 2 before any connection; the safe twin (0600, 0400) is
# read and mrctl goes on to connect (here to a server that is not there).
set -uo pipefail
mrctl=${1:?mrctl}
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
# A unix socket folder with no server: connecting fails at once, no network.
printf 'host=%s/nowhere dbname=mr connect_timeout=2\n' "$dir" > "$dir/dsn"

for mode in 644 640 604 660; do
  chmod "$mode" "$dir/dsn"
  out=$("$mrctl" club show --ref x --dsn-file "$dir/dsn" 2>&1); rc=$?
  [ $rc -eq 2 ] || fail "mode $mode: exit $rc, want 2 ($out)"
  [[ $out == *"--dsn-file $dir/dsn: mode 0$mode lets group or others at a secret; chmod 600 it"* ]] \
    || fail "mode $mode: $out"
done
out=$("$mrctl" club show --ref x --dsn-file "$dir" 2>&1); rc=$?
[ $rc -eq 2 ] && [[ $out == *"not a regular file"* ]] || fail "a folder: exit $rc: $out"
out=$("$mrctl" club show --ref x --dsn-file "$dir/none" 2>&1); rc=$?
[ $rc -eq 2 ] && [[ $out == *"No such file or directory"* ]] || fail "a missing file: exit $rc: $out"
for mode in 600 400; do
  chmod "$mode" "$dir/dsn"
  out=$("$mrctl" club show --ref x --dsn-file "$dir/dsn" 2>&1); rc=$?
  [ $rc -eq 1 ] && [[ $out == *"cannot connect to the database"* ]] || fail "mode $mode (safe): exit $rc: $out"
done
[ $fails -eq 0 ] && echo "dsn file: ok"
exit $(( fails > 0 ))
