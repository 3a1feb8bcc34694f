#!/usr/bin/env bash
# free-port.sh [taken...]: prints a TCP port that nothing listens on at
# 127.0.0.1 and that is not among `taken`, below the kernel's ephemeral
# range (32768+), where a client socket could already hold the port.
# Ports picked together before anything listens on them must be passed
# back as `taken`: the probe alone can hand out one number twice (seen in
# CI: a fixture's nginx could not bind).
set -euo pipefail
taken=" $* "
while :; do
  p=$(( RANDOM % 12000 + 20000 ))
  [[ $taken == *" $p "* ]] && continue
  (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; exit 0; }
done
