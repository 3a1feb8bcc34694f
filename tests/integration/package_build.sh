#!/usr/bin/env bash
# package_build.sh <dir>: the packages the package tests use, from the built
# tree: the tree's version (tools/package.sh, as documented) in <dir>/v1 and
# the same build as a bumped version, to upgrade to, in <dir>/v2. Writes the
# two versions to <dir>/versions.env.
set -euo pipefail
dir=${1:?dir}
repo=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$dir"; mkdir -p "$dir"
v1=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
v2="$v1+upgrade1"
"$repo/tools/package.sh" --out "$dir/v1" & p1=$!
"$repo/tools/package.sh" --out "$dir/v2" --version "$v2" & p2=$!
wait $p1; wait $p2
printf "V1='%s'\nV2='%s'\n" "$v1" "$v2" > "$dir/versions.env"
