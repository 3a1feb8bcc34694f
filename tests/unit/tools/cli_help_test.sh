#!/usr/bin/env bash
# cli_help_test.sh <mrctl> <mr-sign> <man dir>: every mrctl command and
# group answers --help (and `mrctl help <command>`) with exit 0 and its own
# usage line; unknown commands exit 2; mr-sign --help exits 0; each man page
# formats without warnings and names every command or option the --help
# output lists, so a new command cannot ship undocumented.
set -uo pipefail
mrctl=${1:?mrctl} mrsign=${2:?mr-sign} man_dir=${3:?man dir}
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

commands=$("$mrctl" help | sed -n 's/^  \([a-z][a-z -]*[a-z]\)\( --.*\| \[.*\)\?$/\1/p')
[ "$(echo "$commands" | wc -l)" -ge 10 ] || fail "mrctl help lists too few commands: $commands"
while IFS= read -r words; do
  out=$("$mrctl" $words --help) || fail "mrctl $words --help exits $?"
  [[ $out == "usage: mrctl $words"* ]] || fail "mrctl $words --help: $out"
  [ "$("$mrctl" help $words)" = "$out" ] || fail "mrctl help $words differs from --help"
  # The man page names the command in bold (\fB or .B), hyphens escaped.
  grep -q "^\.B ${words//-/\\\\-}\b" "$man_dir/mrctl.1" || fail "mrctl.1 does not describe \"$words\""
done <<< "$commands"
for group in $(echo "$commands" | awk 'NF > 1 { print $1 }' | sort -u); do
  out=$("$mrctl" "$group" --help) || fail "mrctl $group --help exits $?"
  echo "$out" | grep -q "^  $group " || fail "mrctl $group --help lists no $group command"
done
"$mrctl" --help >/dev/null || fail "mrctl --help exits $?"
"$mrctl" -h >/dev/null || fail "mrctl -h exits $?"
"$mrctl" no-such-command --help >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown command --help is not exit 2"
"$mrctl" >/dev/null 2>&1; [ $? -eq 2 ] || fail "mrctl without a command is not exit 2"

out=$("$mrctl" club show --help --ref x) || fail "--help after other flags exits $?"

sign_help=$("$mrsign" --help) || fail "mr-sign --help exits $?"
"$mrsign" -h >/dev/null || fail "mr-sign -h exits $?"
for opt in $(echo "$sign_help" | grep -o -- '--[a-z][a-z-]*' | sort -u); do
  grep -q -- "${opt//-/\\\\-}" "$man_dir/mr-sign.1" || fail "mr-sign.1 does not describe $opt"
done

for page in "$man_dir"/mrctl.1 "$man_dir"/mr-sign.1; do
  warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "$page: $warnings"
done
[ $fails -eq 0 ] && echo "cli help: ok"
exit $(( fails > 0 ))
