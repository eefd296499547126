#!/bin/sh
# tests/run_db_functional.sh REDFOX E2E_DIR: a table imported into a database
# as a relation, then read by a program that declares it functional, is
# checked like a file: two values for one key are an error (exit 1) that
# names the table's rows. An input function without key columns (p[] = v)
# holds at most one value: the import refuses a file with two, as a run does.
set -u
redfox=$1
dir=$2
tmp=${TMPDIR:-/tmp}/rf_db_fd.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$tmp/imp.logic" <<'P'
price(p, v) -> int(p), decimal(v).
lang:input[`price] = "fd_prices.csv".
lang:input:delimiter[`price] = ",".
lang:output[`price] = "price".
P
"$redfox" import "$tmp/imp.logic" --data "$dir/data" --out "$tmp/db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" run "$dir/input_fd_violation.logic" --data "$tmp/db" --device cpu >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err"; fail "exit $rc, expected 1"; }
grep -qF 'functional dependency violated: `price` has two values for the key (p) = (1)' "$tmp/err" || { cat "$tmp/err"; fail "message"; }
# the error names the database and the table's rows, not a line of the binary manifest
grep -q "^$tmp/db/manifest.rfdb: error: .* in row [0-9]* of the database's table, but .* is already in row [0-9]*" "$tmp/err" ||
    { cat "$tmp/err"; fail "the error does not name the table's rows"; }
grep -q "manifest.rfdb:[0-9]" "$tmp/err" && { cat "$tmp/err"; fail "the error names a line of the manifest"; }
cat >"$tmp/nokeys.logic" <<'P'
limit[] = v -> int(v).
lang:input[`limit] = "fd_no_keys.tbl".
lang:output[`limit] = "limit".
P
"$redfox" import "$tmp/nokeys.logic" --data "$dir/data" --out "$tmp/db2" >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err"; fail "import of a function without key columns with two values: exit $rc, expected 1"; }
grep -qF 'fd_no_keys.tbl:3:1: error: functional dependency violated: `limit` (without key columns) has two values: (6) on line 3, but (5) is already on line 1' "$tmp/err" ||
    { cat "$tmp/err"; fail "message of a function without key columns"; }
[ -e "$tmp/db2" ] && fail "a refused import left a database"
echo ok
