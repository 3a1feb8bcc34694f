#!/usr/bin/env bash
# docs_browser_test.sh <test.env> <openapi.yaml> <work dir>
# The API reference page as a partner gets it: served by the fixture's nginx
# at /docs/ (HTML, while every other path outside /api/ stays a JSON
# not_found), loaded in headless Chromium with every host but the loopback
# unresolvable, and a record of every request the browser made: Redoc's
# script ran (it marks the page hydrated), the signing section and every
# operation of openapi.yaml are in the rendered DOM (a section per
# operation with its summary, its path and the codes of every answer), and
# the page fetched nothing but itself. Keeps a screenshot, <work
# dir>/docs.png (1280x2000).
set -euo pipefail
env_file=${1:?test.env} spec=${2:?openapi.yaml} work=${3:?work dir}
source "$env_file"
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "docs_browser_test: $*" >&2; exit 1; }
command -v chromium >/dev/null || fail "chromium is missing (tools/deps.sh installs it)"
rm -rf "$work"; mkdir -p "$work"
url="$MR_BASE_URL/docs/"

# nginx serves the page as HTML; paths beside it stay the JSON not_found.
status=$(curl -sS -o "$work/page.html" -D "$work/page.headers" -w '%{http_code}' "$url")
[ "$status" = 200 ] || fail "GET $url: $status"
grep -qi '^content-type: text/html; charset=utf-8' "$work/page.headers" || fail "$(cat "$work/page.headers")"
grep -qi '^x-request-id: ' "$work/page.headers" || fail "no X-Request-Id on the page"
for other in /docs/missing.html /docs /doc/ /; do
  body=$(curl -sS -w ' %{http_code} %{content_type}' "$MR_BASE_URL$other")
  case "$body" in
    *'"code":"not_found"'*' 404 application/json') ;;
    *) fail "GET $other: $body" ;;
  esac
done

# The browser, once: a profile of its own, nothing but 127.0.0.1
# resolvable, every request it made written to a net log; the DOM after the
# scripts ran, and a screenshot.
timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
  --user-data-dir="$work/profile" --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
  --log-net-log="$work/netlog.json" --virtual-time-budget=10000 \
  --dump-dom --screenshot="$work/docs.png" --window-size=1280,2000 "$url" > "$work/dom.html" 2>"$work/chromium.log" ||
  fail "chromium failed: $(tail -5 "$work/chromium.log")"
[ -s "$work/dom.html" ] && [ -s "$work/docs.png" ] || fail "no DOM or no screenshot"

HERE=$here /usr/bin/python3 - "$spec" "$work" "$url" <<'PY'
import json, os, re, sys
sys.path.insert(0, os.environ["HERE"])
import openapi_lib as oa

spec, work, url = sys.argv[1:]
doc = oa.load(spec)
problems = []
dom = open(os.path.join(work, "dom.html"), encoding="utf-8").read()
if 'data-redoc="hydrated"' not in dom:
    problems.append("Redoc's script did not run (no data-redoc=\"hydrated\")")
# The text a reader sees: the DOM without scripts, styles and tags.
def visible(html):
    html = re.sub(r"<[^>]+>", " ", html)
    return re.sub(r"\s+", " ", html).replace("&amp;", "&").replace("&quot;", '"').replace("&gt;", ">")
dom = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
text = visible(dom)
for needle in ("Signing requests", "canonical string", "X-MR-Signature",
               "v1=f36f6e182332a3491fb20fd8181912fe1ef4bfe29449e98e67d5df714ae7b6fa"):
    if needle not in text:
        problems.append(f"the signing section lacks {needle!r}")
# Each operation's section (from its anchor to the next operation's): its
# summary, method and path, and the codes each of its answers names.
starts = sorted((m.start(), m.group(1)) for m in re.finditer(r'\bid="[^"]*operation/([^"]+)"', dom))
sections = {op_id: visible(dom[at:(starts[i + 1][0] if i + 1 < len(starts) else len(dom))])
            for i, (at, op_id) in enumerate(starts)}
ops = list(oa.operations(doc))
for method, path, op in ops:
    section = sections.get(op["operationId"])
    if section is None:
        problems.append(f"{method} {path}: no section for operation {op['operationId']}")
        continue
    relative = path[len(oa.base_path(doc)):]
    for needle in (op["summary"], relative):
        if needle not in section:
            problems.append(f"{method} {path}: {needle!r} not in its section")
    for status, response in op["responses"].items():
        for code in oa.error_codes(doc, oa.response_schema(doc, response)) or []:
            if not re.search(rf"\b{code}\b", section):
                problems.append(f"{method} {path}: {status} {code} not in its section")
# The net logs: what the page asked for (the main frame, and every request
# the page's origin initiated) went to the page's server only. Chromium's
# own background requests (initiator "not an origin") are not the page's.
host = re.match(r"https?://[^/]+", url).group(0)
fetched = set()
for log in [os.path.join(work, "netlog.json")]:
    raw = open(log, encoding="utf-8").read()
    try:
        netlog = json.loads(raw)
    except ValueError:  # cut short at exit: the events so far
        netlog = json.loads(raw.rstrip().rstrip(",") + "]}")
    start_job = netlog["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    for event in netlog.get("events", []):
        params = event.get("params", {})
        if event["type"] != start_job or not isinstance(params.get("url"), str):
            continue
        if params.get("request_type") == "main frame" or params.get("initiator") == host:
            fetched.add(params["url"])
outside = sorted(u for u in fetched if not u.startswith(host + "/"))
if outside:
    problems.append(f"the page fetched from elsewhere: {outside[:5]}")
if not any(u.startswith(url) for u in fetched):
    problems.append(f"the net log shows no request for {url}: {sorted(fetched)[:5]}")
size = os.path.getsize(os.path.join(work, "docs.png"))
if size < 40000:
    problems.append(f"the screenshot is {size} bytes: a blank page?")
for p in problems:
    print(f"docs_browser_test: {p}")
print(f"docs_browser_test: {len(ops)} operations, {len(fetched)} URLs requested, screenshot {size} bytes, "
      f"{len(problems)} problems")
sys.exit(1 if problems else 0)
PY
echo "docs_browser_test: screenshot kept at $work/docs.png"
