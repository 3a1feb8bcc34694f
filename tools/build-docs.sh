#!/usr/bin/env bash
# build-docs.sh <out dir> [<openapi.yaml>]
# Renders docs/openapi.yaml as the API reference page <out dir>/index.html
# with Redocly's CLI (Redoc), from the versions docs/package-lock.json pins:
# lints the file first (the build fails on an error), then builds the page
# and puts Redoc's standalone script inline, so the page fetches nothing
# (no CDN, no web fonts: docs/redocly.yaml names system fonts). The npm
# packages go to <out dir>/../docs-tools (npm ci, again only when the lock
# file changed). Run by the build (docs/CMakeLists.txt, target api_docs);
# served at /docs/ by the run command, shipped in libnginx-mod-http-mr.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: build-docs.sh <out dir> [openapi.yaml]}
spec=${2:-$repo/docs/openapi.yaml}
mkdir -p "$out"; out=$(cd "$out" && pwd)
tools=$(dirname "$out")/docs-tools
# Redocly's CLI sends usage data and looks for updates unless told not to.
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
command -v npm >/dev/null || { echo "build-docs.sh: npm is missing (tools/deps.sh installs it)" >&2; exit 1; }

mkdir -p "$tools"
if ! cmp -s "$repo/docs/package-lock.json" "$tools/package-lock.json" || [ ! -x "$tools/node_modules/.bin/redocly" ]; then
  cp "$repo/docs/package.json" "$repo/docs/package-lock.json" "$tools/"
  (cd "$tools" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi
redocly=$tools/node_modules/.bin/redocly

# Lint: an error fails the build (the recommended rules, docs/redocly.yaml).
if ! lint=$("$redocly" lint "$spec" --config "$repo/docs/redocly.yaml" --format=stylish 2>&1); then
  printf '%s\n' "$lint" >&2
  echo "build-docs.sh: $spec does not lint" >&2
  exit 1
fi

tmp=$(mktemp -d "$tools/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$redocly" build-docs "$spec" --config "$repo/docs/redocly.yaml" --template "$repo/docs/reference-template.hbs" \
  --disableGoogleFont --output "$tmp/index.html" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log" >&2; echo "build-docs.sh: redocly build-docs failed" >&2; exit 1; }

# The CLI names Redoc's script by its CDN address: put the same version's
# bundle from node_modules there instead (it holds no "</script").
node - "$tmp/index.html" "$tools/node_modules/redoc" <<'JS'
const fs = require('fs');
const [page, redocDir] = process.argv.slice(2);
const version = JSON.parse(fs.readFileSync(`${redocDir}/package.json`, 'utf8')).version;
const bundle = fs.readFileSync(`${redocDir}/bundles/redoc.standalone.js`, 'utf8');
const tag = `<script src="https://cdn.redocly.com/redoc/v${version}/bundles/redoc.standalone.js"></script>`;
let html = fs.readFileSync(page, 'utf8');
if (html.split(tag).length !== 2) throw new Error(`expected one ${tag} in the page`);
if (/<\/script/i.test(bundle)) throw new Error('the Redoc bundle holds "</script": it cannot go inline');
// The page around the bundle may load nothing from elsewhere: no script,
// stylesheet, image or frame with an address, no CSS url() or @import of
// one (the browser check blocks the network and looks at the page too).
const external = html.replace(tag, '').match(
  /<(script|link|img|iframe)\b[^>]*\b(src|href)\s*=\s*["']?(https?:)?\/\/[^>]*>|url\(\s*["']?(https?:)?\/\/|@import\s+["']?(url\()?(https?:)?\/\//gi);
if (external) throw new Error(`the page would fetch: ${external.slice(0, 3).join(' ')}`);
html = html.replace(tag, () => `<script>${bundle}</script>`);
fs.writeFileSync(page, html);
JS
mv "$tmp/index.html" "$out/index.html"
echo "$out/index.html"
