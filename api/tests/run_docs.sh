#!/bin/sh
# api/tests/run_docs.sh HEADER DOC: every function redfox.h declares
# (REDFOX_API ... rf_NAME() is named in docs/API.md, the guide that states
# its ownership rules beside the header's own comment.
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
echo "ok: $n functions, each in $(basename "$doc")"
