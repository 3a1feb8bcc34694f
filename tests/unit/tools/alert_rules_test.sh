#!/usr/bin/env bash
# alert_rules_test.sh <operator guide> <rules file>: the shipped alerting
# rules pass `promtool check rules`, the guide shows exactly that file, and
# every PromQL query the guide writes inline parses.
set -uo pipefail
guide=${1:?guide} rules=${2:?rules}
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT

out=$(promtool check rules "$rules" 2>&1) || fail "promtool check rules $rules: $out"

# The yaml block after "Alerting rules ship as a file".
awk '/^Alerting rules ship as a file/ { found = 1 } found && /^```yaml$/ { inside = 1; next }
     inside && /^```$/ { exit } inside { print }' "$guide" > "$dir/shown.yml"
cmp -s "$dir/shown.yml" "$rules" || fail "the guide's rules block differs from $rules: $(diff "$dir/shown.yml" "$rules" | head -5)"

# Inline queries: code spans that call rate, increase or histogram_quantile.
# (A bare function name such as `rate()` is a mention, not a query.)
grep -o '`[^`]*\(rate\|increase\|histogram_quantile\)([^`]*`' "$guide" | tr -d '`' | grep -v '^[a-z_]*()$' |
  sort -u > "$dir/queries"
[ -s "$dir/queries" ] || fail "no inline PromQL found in $guide"
{
  echo "groups:"; echo "  - name: guide"; echo "    rules:"
  n=0
  while IFS= read -r q; do
    n=$((n + 1))
    printf '      - record: guide:query_%d\n        expr: %s\n' "$n" "'${q//\'/\'\'}'"
  done < "$dir/queries"
} > "$dir/queries.yml"
out=$(promtool check rules "$dir/queries.yml" 2>&1) || fail "a query in the guide does not parse: $out"
[ $fails -eq 0 ] && echo "alert rules: ok ($(wc -l < "$dir/queries") inline queries)"
exit $(( fails > 0 ))
