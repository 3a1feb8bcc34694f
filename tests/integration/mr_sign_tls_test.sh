#!/usr/bin/env bash
# mr_sign_tls_test.sh <mr-sign> <test.env> <work dir>: a partner reaches a
# TLS sandbox with a CA of its own and sends traceparent, with mr-sign's
# --cacert and --header. An nginx of the test's own (no modules) terminates
# TLS with a fresh self-signed certificate and proxies to the fixture's
# unbuffered-log server, whose mr_json line must carry the traceparent. The
# twins: without --cacert the certificate is refused; a header mr-sign
# writes itself, or one that is not "Name: value", is refused.
set -euo pipefail
mrsign=${1:?mr-sign} test_env=${2:?test.env} work=${3:?work dir}
source "$test_env"
rm -rf "$work"; mkdir -p "$work/logs"; work=$(cd "$work" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
stop() { [ -s "$work/nginx.pid" ] && kill -QUIT "$(cat "$work/nginx.pid")" 2>/dev/null || true; }
trap stop EXIT

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=mr-sandbox \
  -addext subjectAltName=IP:127.0.0.1 -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
port=$("$MR_REPO/tools/free-port.sh")
cat > "$work/nginx.conf" <<CONF
pid $work/nginx.pid;
error_log $work/logs/error.log;
events { worker_connections 64; }
http {
    client_body_temp_path $work/client_body; proxy_temp_path $work/proxy; fastcgi_temp_path $work/fastcgi;
    uwsgi_temp_path $work/uwsgi; scgi_temp_path $work/scgi;
    access_log off;
    server {
        listen 127.0.0.1:$port ssl;
        ssl_certificate $work/cert.pem;
        ssl_certificate_key $work/key.pem;
        location / { proxy_pass $MR_LIMITED_URL; }
    }
}
CONF
nginx -p "$work" -c "$work/nginx.conf" -e "$work/logs/error.log"
base="https://127.0.0.1:$port"
for _ in $(seq 100); do curl -sk -o /dev/null "$base/" && break; sleep 0.1; done

export MR_KEY_ID=$MR_KEY_A_ID MR_KEY_SECRET=$MR_KEY_A_SECRET
trace=$(openssl rand -hex 16) parent=$(openssl rand -hex 8)
tp="00-$trace-$parent-01"
out=$("$mrsign" --method GET --path /api/v1/club --send "$base" --cacert "$work/cert.pem" --header "traceparent: $tp" 2>&1) \
  || fail "signed GET over TLS with --cacert: $out"
head -1 <<<"$out" | grep -q " 200 " || fail "not 200: $out"
grep -q '"partnerRef":"club-a"' <<<"$out" || fail "not club-a's answer: $out"
id=$(sed -n 's/^x-request-id: *//p' <<<"$out" | tr -d '\r')
[ -n "$id" ] || fail "no x-request-id in: $out"
line=
for _ in $(seq 40); do
  line=$(grep "\"requestId\":\"$id\"" "$MR_STACK_DIR/nginx/logs/limited-access.log" || true)
  [ -n "$line" ] && break; sleep 0.05
done
grep -q "\"traceparent\":\"$tp\"" <<<"$line" || fail "the traceparent did not arrive: $line"

# --print-curl: the printed command carries --cacert and the header, and works.
cmd=$("$mrsign" --method GET --path /api/v1/club --print-curl --base-url "$base" --cacert "$work/cert.pem" \
        --header "traceparent: $tp")
grep -q -- "--cacert '$work/cert.pem'" <<<"$cmd" || fail "--print-curl without --cacert: $cmd"
grep -q -- "-H 'traceparent: $tp'" <<<"$cmd" || fail "--print-curl without the header: $cmd"
curl_out=$(eval "$cmd") || fail "the printed curl command failed: $cmd"
head -1 <<<"$curl_out" | grep -q " 200 " || fail "the printed curl command: $curl_out"

# Twins: the system's CAs do not know this certificate.
set +e
out=$("$mrsign" --method GET --path /api/v1/club --send "$base" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -qi "certificate" <<<"$out" || fail "without --cacert: exit $rc: $out"
out=$("$mrsign" --method GET --path /api/v1/club --send "$base" --cacert "$work/none.pem" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "cannot read $work/none.pem" <<<"$out" || fail "a missing --cacert: exit $rc: $out"
for bad in "X-MR-Signature: forged" "x-mr-idempotency-key: k" "Host: elsewhere" "no colon here" "Bad Name: x" \
           "traceparent: $(printf 'a\rb')"; do
  out=$("$mrsign" --method GET --path /api/v1/club --send "$base" --cacert "$work/cert.pem" --header "$bad" 2>&1); rc=$?
  [ $rc -eq 2 ] && grep -q -- "--header" <<<"$out" || fail "--header \"$bad\": exit $rc: $out"
done
set -e
echo "mr-sign tls: ok"
