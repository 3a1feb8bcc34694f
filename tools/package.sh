#!/usr/bin/env bash
# package.sh [--out DIR] [--version V]
# Builds the Debian packages libnginx-mod-http-mr (the three modules, their
# modules-available conf, the snippets, the API reference page) and
# mr-partner-tools (mrctl, mr-sign, man pages) with debhelper from the tree
# tools/build.sh built (MR_BUILD_DIR, default build/): nothing is compiled
# again. debian/ is copied into a scratch folder, so the tree stays clean.
# Then the partner SDKs' packages (wheel, npm tarball, jar with sources and
# pom, Go module tarball) into <out>/sdk, by tools/package-sdk.sh.
#   --out DIR     where the .deb, .changes and .buildinfo go [$MR_BUILD_DIR/packages]
#   --version V   package this build as version V (debian/changelog gets an
#                 entry in the copy only), e.g. to test an upgrade
# Prints the paths of the .deb files and SDK packages it wrote.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${MR_BUILD_DIR:-$repo/build}" && pwd)
out=$build/packages version=
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=${2:?--out DIR}; shift 2 ;;
    --version) version=${2:?--version V}; shift 2 ;;
    -h|--help) sed -n '2,14s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "package.sh: unknown argument $1 (--help)" >&2; exit 2 ;;
  esac
done
for f in tools/mrctl/mrctl tools/mr-sign/mr-sign nginx-modules/ngx_http_mr_auth_module.so docs/index.html; do
  [ -e "$build/$f" ] || { echo "package.sh: $build/$f missing: run tools/build.sh first (the API reference page needs npm: tools/deps.sh)" >&2; exit 1; }
done

work=$(mktemp -d "$build/.package.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=$work/member-rewards
mkdir -p "$src"
cp -r "$repo/debian" "$src/debian"
if [ -n "$version" ]; then
  {
    printf 'member-rewards (%s) bookworm; urgency=medium\n\n  * Rebuilt as %s.\n\n' "$version" "$version"
    printf ' -- %s  %s\n\n' "$(sed -n 's/^Maintainer: //p' "$repo/debian/control")" "$(date -R)"
    cat "$repo/debian/changelog"
  } > "$src/debian/changelog"
fi
if ! (cd "$src" && MR_SOURCE_DIR="$repo" MR_BUILD_DIR="$build" \
        dpkg-buildpackage --build=binary --no-sign > "$work/build.log" 2>&1); then
  cat "$work/build.log" >&2
  echo "package.sh: dpkg-buildpackage failed" >&2
  exit 1
fi
mkdir -p "$out"
for f in "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo; do
  mv -f "$f" "$out/"
  case "$f" in *.deb) echo "$out/$(basename "$f")" ;; esac
done

# npm's cache in the build tree: package-sdk.sh's `npm ci` fetches the
# TypeScript compiler once, not on every build.
npm_config_cache=${npm_config_cache:-$build/npm-cache} "$repo/tools/package-sdk.sh" "$out/sdk"
