#!/usr/bin/env bash
# deps.sh [--docs|--tests]: installs the Debian 12 packages that are missing.
#   (no argument)  what the service needs to build and run: the compiler,
#                  nginx and its headers, PostgreSQL, Redis, the libraries
#                  (the run command, tools/run.sh)
#   --docs         that and Node.js with npm, for the API reference page
#                  (MR_DOCS=on tools/run.sh)
#   --tests        that and every tool the tests, the fuzzers, the SDKs and
#                  the packaging use (the test command, tools/test.sh)
# Skips apt entirely when everything is already there.
set -euo pipefail
service=(build-essential cmake pkg-config curl ca-certificates
         nginx-core nginx-dev postgresql-15 postgresql-client-15 redis-server
         libpq-dev libhiredis-dev libssl-dev rapidjson-dev libcurl4-openssl-dev)
# prometheus: promtool and a real server for the metrics tests.
# patroni, etcd, redis-sentinel: the failover tests run Debian's own (their
# packaged services stay stopped: policy-rc.d below; the tests start their own).
tests=(git libcriterion-dev prometheus
       patroni etcd-server etcd-client redis-sentinel  # tests/integration: Patroni and Sentinel failover
       clang-14 libclang-rt-14-dev libfuzzer-14-dev  # tests/fuzz
       debhelper dpkg-dev lintian man-db  # tools/package.sh, the package and man page tests
       python3 golang-go openjdk-17-jdk-headless junit5  # tests/sdk: the Python, Go and Java SDKs
       python3-pip python3-setuptools python3-wheel python3-venv  # tools/package-sdk.sh: the wheel, offline; its install test
       python3-yaml python3-jsonschema chromium)  # tests/docs: openapi.yaml checks, the reference page in a browser
node=yes
case "${1:-}" in
  '') pkgs=("${service[@]}"); node=no ;;
  --docs) pkgs=("${service[@]}") ;;
  --tests) pkgs=("${service[@]}" "${tests[@]}") ;;
  *) echo "usage: $0 [--docs|--tests]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js 18+ and npm: the API reference page (docs/api-docs.cmake), and
# for the tests also the TypeScript SDK, newman and the page's checks. A
# machine that has them already (say NodeSource's nodejs, which conflicts
# with Debian's npm) keeps its own; Debian's only where there are none.
if [ "$node" = yes ]; then
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
fi
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # The packaged services must not grab the ports or run beside ours.
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  rm -f /usr/sbin/policy-rc.d
fi
