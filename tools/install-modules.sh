#!/usr/bin/env bash
# install-modules.sh <built modules dir> <dest dir>
# Installs each built ngx_http_mr_*.so under a new, content-addressed file
# name and rewrites <dest>/load_modules.conf to load those names. nginx only
# picks up a rebuilt module on reload if the path is new (the dynamic loader
# returns the already-mapped file for a known path), and a loaded .so must
# never be overwritten in place: new file, then an atomic rename of the conf.
set -euo pipefail
src=${1:?built modules dir} dest=${2:?destination dir}
mkdir -p "$dest"
tmp=$(mktemp "$dest/.load_modules.conf.XXXXXX")
shopt -s nullglob
mods=("$src"/ngx_http_mr_*.so)
[ ${#mods[@]} -gt 0 ] || { echo "no modules in $src" >&2; exit 1; }
# Load order is irrelevant for correctness (the idempotency handler places
# itself after auth), but keep it stable: auth first.
for so in $(printf '%s\n' "${mods[@]}" | sort); do
  name=$(basename "$so" .so)
  sum=$(sha256sum "$so" | cut -c1-12)
  target="$dest/$name-$sum.so"
  if [ ! -e "$target" ]; then
    install -m 0644 "$so" "$target.tmp.$$"
    mv -f "$target.tmp.$$" "$target"
  fi
  touch "$target"
  echo "load_module $(realpath "$target");" >> "$tmp"
  # Keep the three newest builds of each module; an unlinked file stays
  # mapped in processes that still use it.
  ls -1t "$dest/$name"-*.so 2>/dev/null | tail -n +4 | xargs -r rm -f
done
chmod 0644 "$tmp"
mv -f "$tmp" "$dest/load_modules.conf"
