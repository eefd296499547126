#!/bin/sh
# bench/txn/tpcb/run.sh BUILD SCALE N [DEVICE] [ACCOUNTS] [LIBDUCKDB]: the
# TPC-B-style benchmark (README.md here). SCALE branches (10 tellers and
# ACCOUNTS accounts each, default 100000 as TPC-B says), a batch of N
# transactions (bench/txn/tpcb_gen.c, seed 1). redfox: import, a first exec
# that stores the derived balances, then the batch in one `redfox exec
# --profile` on DEVICE (default cpu): transactions per second of the whole
# process and of its maintenance part. DuckDB (where LIBDUCKDB, default
# peers/duckdb/package/libduckdb.so of the repository, exists): the same
# batch, bulk (UPDATE ... FROM per-key sums) and, up to 10^4 transactions,
# one transaction at a time through prepared statements. Every end state
# (branches, tellers, every account, the checksum) must equal the
# generator's own (the script stops otherwise).
set -eu
build=$1
scale=$2
n=$3
dev=${4:-cpu}
per=${5:-100000}
here=$(cd "$(dirname "$0")" && pwd)
lib=${6:-$here/../../../peers/duckdb/package/libduckdb.so}
redfox=$build/tools/redfox
prog=$here/tpcb.logic
tmp=${TMPDIR:-/tmp}/rf_tpcb.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
now() { date +%s.%N; }
ms() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.1f", (e - s) * 1000 }'; }
tps() { awk -v n="$n" -v t="$1" 'BEGIN { printf "%.0f", (t > 0 ? n / (t / 1000) : 0) }'; }

"$build/bench/tpcb_gen" "$tmp/gen" "$scale" "$per" "$n" 1
echo "TPC-B: $scale branch(es), $((scale * 10)) tellers, $((scale * per)) accounts; a batch of $n transactions; device $dev"
"$redfox" import "$prog" --data "$tmp/gen/data" --out "$tmp/db" >/dev/null
s=$(now)
"$redfox" exec "$tmp/db" "$prog" --device "$dev" --format tbl >/dev/null
e=$(now)
printf 'redfox first exec (derived balances computed and stored): %.0f ms\n' "$(ms "$s" "$e")"
# the process's CPU time beside its wall time, where GNU time is there (the
# machine may be shared: then wall time overstates the work)
timer=
[ -x /usr/bin/time ] && timer="/usr/bin/time -f %U+%S -o $tmp/cpu"
s=$(now)
$timer "$redfox" exec "$tmp/db" "$prog" --batch "$tmp/gen/batch.txn" --device "$dev" --profile --format tbl \
    >"$tmp/redfox.txt" 2>"$tmp/profile.txt" || { cat "$tmp/profile.txt"; fail "redfox exec"; }
e=$(now)
whole=$(ms "$s" "$e")
cpu=n/a
[ -s "$tmp/cpu" ] && cpu=$(awk -F+ '{ printf "%.0f ms", ($1 + $2) * 1000 }' "$tmp/cpu")
maint=$(sed -n 's/^exec: derived predicates .*(\([0-9.]*\) ms, runs.*/\1/p' "$tmp/profile.txt")
phases=$(sed -n 's/^exec: compile /compile /p' "$tmp/profile.txt")
batch=$(sed -n 's/^exec: batch: \(.*\)/\1/p' "$tmp/profile.txt")
how=$(sed -n 's/^exec: derived predicates \(.*\) ([0-9.]* ms, runs.*/\1/p' "$tmp/profile.txt")
printf 'redfox exec --batch: whole process %.0f ms (cpu %s), %s txn/s; maintenance %.0f ms, %s txn/s\n' \
    "$whole" "$cpu" "$(tps "$whole")" "$maint" "$(tps "$maint")"
echo "  batch read and applied to the base predicates: $batch"
echo "  derived predicates $how"
echo "  $phases"
cmp -s "$tmp/redfox.txt" "$tmp/gen/expected.txt" || { diff "$tmp/redfox.txt" "$tmp/gen/expected.txt" | head; fail "redfox's outputs differ from the generator's"; }
# every account's balance as exec stored it
table=$(grep -ao 'derived\.[0-9a-f]*\.account_balance' "$tmp/db/manifest.rfdb" | head -n 1)
printf 'ab(a, v) -> int(a), int(v).\nlang:input[`ab] = "%s".\nlang:output[`ab] = "ab".\nlang:output:orderBy[`ab] = "1".\n' \
    "$table" >"$tmp/accounts.logic"
"$redfox" run "$tmp/accounts.logic" --data "$tmp/db" --device cpu --format tbl | tail -n +2 >"$tmp/redfox_accounts.tbl"
cmp -s "$tmp/redfox_accounts.tbl" "$tmp/gen/expected_accounts.tbl" || fail "redfox's account balances differ from the generator's"
echo "redfox end state = the generator's (branches, tellers, $((scale * per)) accounts, checksum)"

if [ ! -f "$lib" ]; then
    echo "DuckDB: skipped ($lib not found)"
    exit 0
fi
duck=$build/bench/tpcb_duck
for mode in bulk prepared; do
    if [ "$mode" = prepared ] && [ "$n" -gt 10000 ]; then
        echo "DuckDB prepared: skipped above 10^4 transactions (100-250 a second on the 2-core machine)"
        continue
    fi
    "$duck" "$lib" "$tmp/gen" "$mode" >"$tmp/duck.txt" 2>"$tmp/duck.err" || { cat "$tmp/duck.err"; fail "tpcb_duck $mode"; }
    sed 's/^duckdb: /DuckDB /' "$tmp/duck.err"
    cmp -s "$tmp/duck.txt" "$tmp/redfox.txt" || { diff "$tmp/duck.txt" "$tmp/redfox.txt" | head; fail "DuckDB ($mode) and redfox differ"; }
    cmp -s "$tmp/gen/duck_accounts.tbl" "$tmp/redfox_accounts.tbl" || fail "DuckDB ($mode) and redfox differ on account balances"
done
echo "DuckDB end state = redfox's"
