#!/bin/sh
# api/tests/run_docs.sh HEADER DOC: every function redfox.h declares
# (REDFOX_API ... rf_NAME() is named in docs/API.md, the guide that states
# its ownership rules beside the header's own comment; and the guide gives
# the interface's level as the header's REDFOX_API_LEVEL (it said 4, and
# "REDFOX_API_LEVEL is 2", "is 3" in the present tense, at level 5).
set -eu
header=$1 doc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tr '\n' ' ' < "$header" | grep -o 'REDFOX_API[^;(]*(' | grep -o 'rf_[A-Za-z0-9_]*($' | tr -d '(' | sort -u > "$tmp/declared"
missing=0
while read -r f; do
    grep -q "\b$f\b" "$doc" || { echo "not in $(basename "$doc"): $f"; missing=$((missing + 1)); }
done < "$tmp/declared"
n=$(wc -l < "$tmp/declared")
[ "$n" -gt 40 ] || { echo "only $n functions found"; exit 1; }
[ "$missing" -eq 0 ] || { echo "$missing of $n functions undocumented"; exit 1; }
level=$(sed -n 's/^#define REDFOX_API_LEVEL \([0-9][0-9]*\).*/\1/p' "$header")
[ -n "$level" ] || { echo "no REDFOX_API_LEVEL in $(basename "$header")"; exit 1; }
grep -q "interface level ($level)" "$doc" || { echo "$(basename "$doc") does not give the interface level as $level"; exit 1; }
grep -q "($level now;" "$doc" || { echo "$(basename "$doc") does not say the level is $level now"; exit 1; }
stale=$(grep -o -e '`REDFOX_API_LEVEL` is [0-9]*' -e '`REDFOX_API_LEVEL` ([0-9]*)' -e 'interface level ([0-9]*)' "$doc" |
        grep -v -e " $level\$" -e "($level)" || true)
[ -z "$stale" ] || { echo "$(basename "$doc") states another level as the level: $stale"; exit 1; }
echo "ok: $n functions, each in $(basename "$doc"); level $level"
