#!/bin/sh
# bench/txn/tpcb/stream.sh BUILD SCALE N K [DEVICE] [ACCOUNTS] [LIBDUCKDB]: the
# TPC-B-style bank (README.md here) taking K successive batches of N
# transactions in ONE process, as an engine that stays up would: one
# `redfox exec --each` (each --batch its own transaction with its own
# commit; the program compiled and the device started once). Per batch,
# from --profile: the batch read and parsed (in the transaction; and
# parsed ahead, on the read-ahead thread while the one before ran), resolved
# by key, the database read, the derived predicates maintained, the outputs, the commit (the
# columns written: its syncs, manifest and exchange end on a thread while the
# next transaction runs, their time there and the next one's wait for them in
# two columns of that next one), and the transaction's whole time; then the first batch and the steady state
# (batches 2..K): transactions per second whole, without the commit, and of
# the execution alone (resolution by key + maintenance, as GPUTx reports).
# The end state must equal the generator's (tpcb_gen with K batches: every
# branch, teller and account, the checksum); the outputs after each batch
# equal a from-scratch run in tests/run_exec_each.sh. DuckDB (where
# LIBDUCKDB exists): the same K batches, each one transaction (bulk UPDATE
# ... FROM), on one open database, its end state compared too.
set -eu
build=$1
scale=$2
n=$3
k=$4
dev=${5:-cpu}
per=${6:-100000}
here=$(cd "$(dirname "$0")" && pwd)
lib=${7:-$here/../../../peers/duckdb/package/libduckdb.so}
redfox=$build/tools/redfox
prog=$here/tpcb.logic
tmp=${TMPDIR:-/tmp}/rf_tpcb_stream.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
now() { date +%s.%N; }
[ "$k" -ge 2 ] || fail "K must be at least 2 (the steady state is batches 2..K)"

"$build/bench/tpcb_gen" "$tmp/gen" "$scale" "$per" "$n" 1 "$k"
echo "TPC-B stream: $scale branch(es), $((scale * 10)) tellers, $((scale * per)) accounts; $k batches of $n transactions in one process; device $dev"
"$redfox" import "$prog" --data "$tmp/gen/data" --out "$tmp/db" >/dev/null
"$redfox" exec "$tmp/db" "$prog" --device "$dev" --format tbl >/dev/null
args=
i=1
while [ $i -le "$k" ]; do
    args="$args --batch $tmp/gen/batch_$i.txn"
    i=$((i + 1))
done
s=$(now)
# shellcheck disable=SC2086
"$redfox" exec "$tmp/db" "$prog" --each $args --device "$dev" --profile --format tbl >"$tmp/out" 2>"$tmp/profile" ||
    { cat "$tmp/profile"; fail "redfox exec --each"; }
e=$(now)
awk -v s="$s" -v e="$e" -v k="$k" 'BEGIN { printf "redfox exec --each, whole process (start, %d transactions, exit): %.0f ms\n", k, (e - s) * 1000 }'
echo "batch | read+parse | parsed ahead (thread) | resolved by key | GPU wait | db read | maintenance | outputs | commit | last commit's end (thread) | waited for it | whole txn | txn/s | txn/s w/o commit"
awk -v n="$n" '
    function ms(line, pat,   m) { if (match(line, pat)) { m = substr(line, RSTART, RLENGTH); gsub(/[^0-9.]/, "", m); return m + 0 } return 0 }
    /^exec: transaction [0-9]+ of / { t++ }
    /^exec: the GPU started beside/ { wait[t] = ms($0, "waited [0-9.]+ ms") }
    /^exec: ran while the last transaction.s commit ended on a thread/ { pt[t] = ms($0, "exchange: [0-9.]+ ms there"); pw[t] = ms($0, "waited [0-9.]+ ms") }
    /^exec: batch: / { rp[t] = ms($0, "files read [0-9.]+") + ms($0, "parsed [0-9.]+"); rk[t] = ms($0, "resolved by key [0-9.]+") }
    /^exec:   parsed ahead on that thread/ { pa[t] = ms($0, "1 file, [0-9.]+ ms") }
    /^exec: derived predicates / { mt[t] = ms($0, "\\([0-9.]+ ms, runs"); how[t] = ($0 ~ /recomputed/) ? "recomputed" : "by diffs" }
    /^exec: compile / { db[t] = ms($0, "read the database [0-9.]+"); out[t] = ms($0, "outputs [0-9.]+"); cm[t] = ms($0, "commit [0-9.]+"); all[t] = ms($0, "in all [0-9.]+") }
    END {
        for (i = 1; i <= t; i++) {
            # (the commit: its own columns written, and the wait for the end of the last)
            c = cm[i] + pw[i]
            printf "%d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f (%s) | %.1f | %.1f | %.1f | %.1f | %.1f ms | %.0f | %.0f\n", i, rp[i], pa[i], rk[i], wait[i], db[i], mt[i],
                how[i], out[i], cm[i], pt[i], pw[i], all[i], n / (all[i] / 1000), n / ((all[i] - c) / 1000)
            if (i > 1) { sa += all[i]; sc += c; sx += rk[i] + mt[i]; sp += rp[i] }
        }
        printf "first batch: %.1f ms whole (the program compiled, the device started), %.0f txn/s; without its commit %.0f txn/s\n",
            all[1], n / (all[1] / 1000), n / ((all[1] - cm[1] - pw[1]) / 1000)
        m = t - 1
        printf "steady state (batches 2..%d, mean): %.1f ms a batch: %.0f txn/s with the commit, %.0f txn/s without it, ", t, sa / m,
            n * m / (sa / 1000), n * m / ((sa - sc) / 1000)
        printf "%.0f txn/s executed (resolution by key + maintenance: %.1f ms a batch); read+parse %.1f ms a batch\n",
            n * m / (sx / 1000), sx / m, sp / m
    }' "$tmp/profile"
# the state after the last batch: its outputs, and every account
awk '/^-- transaction [0-9]+ of [0-9]+: / { keep = ($3 + 0 == $5 + 0); skip = 1; next } keep { if (skip && $0 == "") next; skip = 0; print }' \
    "$tmp/out" | awk '{ line[NR] = $0 } END { n = NR; if (n && line[n] == "") n--; for (i = 1; i <= n; i++) print line[i] }' >"$tmp/last.txt"
cmp -s "$tmp/last.txt" "$tmp/gen/expected.txt" || { diff "$tmp/last.txt" "$tmp/gen/expected.txt" | head; fail "redfox's outputs after batch $k differ from the generator's"; }
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
"$build/bench/tpcb_duck" "$lib" "$tmp/gen" bulk 0 "$k" >"$tmp/duck.txt" 2>"$tmp/duck.err" || { cat "$tmp/duck.err"; fail "tpcb_duck"; }
sed 's/^duckdb: /DuckDB /' "$tmp/duck.err"
awk -v n="$n" '/^duckdb: batch [0-9]+ of / { if ($3 > 1) { s += $9 + 0; m++ } }
    END { if (m) printf "DuckDB steady state (batches 2..%d, mean): %.1f ms a batch, %.0f txn/s\n", m + 1, s / m, n * m / (s / 1000) }' "$tmp/duck.err"
cmp -s "$tmp/duck.txt" "$tmp/last.txt" || { diff "$tmp/duck.txt" "$tmp/last.txt" | head; fail "DuckDB and redfox differ"; }
cmp -s "$tmp/gen/duck_accounts.tbl" "$tmp/redfox_accounts.tbl" || fail "DuckDB and redfox differ on account balances"
echo "DuckDB end state = redfox's"
