#!/usr/bin/env bash
# package-sdk.sh <out dir>: the partner SDKs of client/ as the packages a
# partner installs (each client/<sdk>/README.md, "Install into your project"):
#   memberrewards-<v>-py3-none-any.whl            Python wheel (pip install)
#   member-rewards-partner-api-<v>.tgz            npm tarball with dist/ (npm install)
#   member-rewards-partner-<v>.jar, -sources.jar,
#   member-rewards-partner-<v>.pom                Java jar, sources and pom (mvn install:install-file)
#   memberrewards-go-<v>.tar.gz                   the Go module (a replace directive)
# Nothing is downloaded but the TypeScript compiler and @types/node, which
# `npm ci` takes from the npm registry (or its cache, npm_config_cache) as
# client/typescript/package-lock.json pins them; the wheel is built offline
# by Debian's pip, setuptools and wheel (tools/deps.sh). Each SDK is built in
# a scratch copy: the tree stays clean and two runs may share no folder.
# Prints the paths of the files it wrote.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: package-sdk.sh <out dir>}
mkdir -p "$out"; out=$(cd "$out" && pwd)
client=$repo/client
# Debian's interpreter: its pip, setuptools and wheel build without an index.
python=${MR_SDK_PYTHON:-/usr/bin/python3}

work=$(mktemp -d "${TMPDIR:-/tmp}/mr-sdk-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
copy() {  # copy <sdk>: client/<sdk> -> $work/<sdk> without build output
  mkdir -p "$work/$1"
  tar -C "$client/$1" --exclude=./node_modules --exclude=./dist --exclude=./build-test --exclude=./build \
    --exclude=__pycache__ --exclude='*.egg-info' -cf - . | tar -C "$work/$1" -xf -
}
quiet() {  # quiet <log> <command...>: its output only when it fails
  local log=$1; shift
  "$@" > "$log" 2>&1 || { cat "$log" >&2; echo "package-sdk.sh: failed: $*" >&2; exit 1; }
}

# Python: a pure wheel, no dependency to fetch.
copy python
quiet "$work/python.log" env PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1 \
  "$python" -m pip wheel --no-deps --no-build-isolation --no-index -w "$work/wheel" "$work/python"
wheel=$(find "$work/wheel" -name 'memberrewards-*.whl')
mv -f "$wheel" "$out/"; echo "$out/$(basename "$wheel")"

# TypeScript: npm pack runs the package's prepack (tsc into dist/).
copy typescript
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
(cd "$work/typescript" && quiet "$work/npm-ci.log" npm ci --no-audit --no-fund --loglevel=error &&
  quiet "$work/npm-pack.log" npm pack --pack-destination "$work/typescript" --loglevel=error)
tgz=$(find "$work/typescript" -maxdepth 1 -name 'member-rewards-partner-api-*.tgz')
listing=$(tar -tzf "$tgz")
grep -qx 'package/dist/index.js' <<<"$listing" || { echo "package-sdk.sh: $tgz has no dist/index.js" >&2; exit 1; }
mv -f "$tgz" "$out/"; echo "$out/$(basename "$tgz")"

# Java: build.sh's jar, its sources beside it and the pom it is described by.
copy java
version=$(sed -n 's/^version=//p' "$client/java/build.sh")
quiet "$work/java.log" env MR_JAVA_BUILD_DIR="$work/java-build" "$work/java/build.sh" jar
base=member-rewards-partner-$version
jar --create --file "$work/java-build/$base-sources.jar" -C "$work/java/src/main/java" .
cp "$client/java/pom.xml" "$work/java-build/$base.pom"
for f in "$base.jar" "$base-sources.jar" "$base.pom"; do
  mv -f "$work/java-build/$f" "$out/"; echo "$out/$f"
done

# Go: the module's folder (sources, go.mod, README, examples), tests left out.
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' "$client/go/client.go")
[ -n "$version" ] || { echo "package-sdk.sh: no Version in client/go/client.go" >&2; exit 1; }
copy go
find "$work/go" -name '*_test.go' -delete
tar -C "$work" --owner=0 --group=0 --numeric-owner --sort=name \
  --transform "s,^go,memberrewards-go-$version," -czf "$out/memberrewards-go-$version.tar.gz" go
echo "$out/memberrewards-go-$version.tar.gz"
