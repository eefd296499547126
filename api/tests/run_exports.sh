#!/bin/sh
# api/tests/run_exports.sh HEADER LIB: libredfox.so exports exactly the
# functions redfox.h declares (REDFOX_API ... rf_NAME(), nothing else: the
# stage libraries inside stay hidden.
set -eu
header=$1 lib=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tr '\n' ' ' < "$header" | grep -o 'REDFOX_API[^;(]*(' | grep -o 'rf_[A-Za-z0-9_]*($' | tr -d '(' | sort > "$tmp/declared"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRW]$/ {print $3}' | sed 's/@.*//' | grep -v '^REDFOX_' | sort > "$tmp/exported"
if ! cmp -s "$tmp/declared" "$tmp/exported"; then
    echo "declared (<) and exported (>) symbols differ:"
    diff "$tmp/declared" "$tmp/exported" || true
    exit 1
fi
n=$(wc -l < "$tmp/declared")
[ "$n" -gt 40 ] || { echo "only $n functions found"; exit 1; }
echo "ok: $n functions, all exported, nothing else"
