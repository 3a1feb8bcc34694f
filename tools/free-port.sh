#!/usr/bin/env bash
# free-port.sh: prints a TCP port that nothing listens on at 127.0.0.1,
# below the kernel's ephemeral range (32768+), where a client socket could
# already hold the port.
set -euo pipefail
while :; do
  p=$(( RANDOM % 12000 + 20000 ))
  (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo "$p"; exit 0; }
done
