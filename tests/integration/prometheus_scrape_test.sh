#!/usr/bin/env bash
# prometheus_scrape_test.sh <test.env> <dir>: a real Prometheus on a free
# loopback port, with its own data folder under <dir>, scrapes the ops
# listener's /metrics every second with the bearer token; after some
# traffic, the rate of not_found answers is read back through its HTTP API.
set -euo pipefail
envfile=${1:?test.env} dir=${2:?dir}
source "$envfile"
rm -rf "$dir"; mkdir -p "$dir/data"

source "$(dirname "$0")/free_port.sh"
port=$(free_port)
cat > "$dir/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: mr
    metrics_path: /metrics
    authorization:
      credentials_file: $MR_OPS_TOKEN_FILE
    static_configs:
      - targets: ['${MR_OPS_URL#http://}']
YML
promtool check config "$dir/prometheus.yml" >/dev/null

prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
  --web.listen-address="127.0.0.1:$port" --log.level=warn >"$dir/prometheus.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT

api="http://127.0.0.1:$port/api/v1"
query='sum(rate(mr_http_requests_total{route="other",code="not_found"}[5s]))'
for _ in $(seq 60); do
  # Traffic: unknown paths answer not_found (no key needed).
  for _ in $(seq 10); do curl -s -o /dev/null "$MR_BASE_URL/metrics-test-nothing"; done
  answer=$(curl -s --get "$api/query" --data-urlencode "query=$query" || true)
  value=$(echo "$answer" | grep -o '"value":\[[^]]*\]' | sed 's/.*,"\(.*\)"\]/\1/' || true)
  if [ -n "$value" ] && [ "$value" != "0" ] && [ "$value" != "NaN" ]; then
    up=$(curl -s --get "$api/query" --data-urlencode 'query=up{job="mr"}' | grep -o '"value":\[[^]]*\]' | sed 's/.*,"\(.*\)"\]/\1/')
    [ "$up" = "1" ] || { echo "target not up: $up"; exit 1; }
    echo "rate of not_found answers seen by Prometheus: $value/s"
    exit 0
  fi
  sleep 0.5
done
echo "Prometheus never saw a rate; last answer: ${answer:-none}"
cat "$dir/prometheus.log"
curl -s "$api/targets" || true
exit 1
