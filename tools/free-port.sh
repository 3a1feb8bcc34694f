#!/usr/bin/env bash
# free-port.sh [taken...]: prints a TCP port that nothing listens on at
# 127.0.0.1 and that is not among `taken`, below the kernel's ephemeral
# range (32768+), where a client socket could already hold the port.
# Ports picked together before anything listens on them must be passed
# back as `taken`: the probe alone can hand out one number twice (seen in
# CI: a fixture's nginx could not bind).
#
# Stacks started at once (ctest -j, other checkouts on the machine) pick
# ports at the same moment, each before it binds, so the probe cannot see
# the other's choice: every port handed out is also reserved machine-wide
# (an atomic mkdir under $MR_PORT_RESERVATIONS) and not handed out again
# for 15 minutes, long after its server listens (the probe covers it then).
set -euo pipefail
taken=" $* "
reserved=${MR_PORT_RESERVATIONS:-/tmp/mr-free-ports}
mkdir -p "$reserved"
# Older reservations are dropped.
find "$reserved" -mindepth 1 -maxdepth 1 -mmin +15 -exec rmdir {} + 2>/dev/null || true
while :; do
  p=$(( RANDOM % 12000 + 20000 ))
  [[ $taken == *" $p "* ]] && continue
  mkdir "$reserved/$p" 2>/dev/null || continue
  (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; exit 0; }
done
