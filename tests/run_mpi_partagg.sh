#!/bin/sh
# tests/run_mpi_partagg.sh REDFOX TESTS_DIR WORK_DIR: partial aggregates
# (queryplan/pass_partagg.c) on ranks, read from --profile's rows sent:
#   1. TPC-H q01 (4 groups of 600,000 lines) and q18 (lineitem grouped by
#      orderkey) at SF 0.1 on 2 CPU ranks move far fewer rows than with
#      --no-partagg, and give one process's output byte for byte either way
#   2. the same q01 on 2 GPU ranks (the emulator: the moves on the device)
#   3. an average of decimals, counts, minima and maxima of strings, a total
#      without groups (split), totals and averages of ints (whole: an int part
#      could overflow): 1, 2 and 3 ranks give one process's output
# Skipped (77) where mpirun is missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
work=$3
mkdir -p "$work"
tmp=$work/tmp.$$
. "$tests/mpi_env.sh"
[ -f "$work/sf0.1/.complete" ] || {
    "$redfox" tpch gen --sf 0.1 --format db --out "$work/sf0.1" >/dev/null 2>&1 || { echo "FAIL: tpch gen"; exit 1; }
    touch "$work/sf0.1/.complete"
}
q="$tests/../tpch/queries"
# rows the ranks sent in all (the profile's "N rows sent" of every rank)
sent() { sed -n 's/^rank [0-9]* of [0-9]*: .*; \([0-9]*\) rows sent, [0-9]* received.*/\1/p' "$1" | awk '{ s += $1 } END { print s + 0 }'; }

# ---- 1, 2. fewer rows move --------------------------------------------------------------
for query in q01 q18; do
    "$redfox" run "$q/schema.logic" "$q/$query.logic" --data "$work/sf0.1" --device cpu --format tbl >"$tmp/$query.1" 2>"$tmp/$query.1.err" ||
        fail "$query in one process"
    for how in part whole gpu; do
        set -- --device cpu
        [ $how = whole ] && set -- --device cpu --no-partagg
        [ $how = gpu ] && { [ $query = q01 ] || continue; set -- --device gpu; }
        emu=
        [ $how = gpu ] && emu=RF_GPU_EMULATE=1
        env $emu $mpi 2 "$redfox" run "$q/schema.logic" "$q/$query.logic" --data "$work/sf0.1" --format tbl \
            --profile "$@" >"$tmp/$query.$how" 2>"$tmp/$query.$how.err" || { fail "$query on 2 ranks ($how)"; cat "$tmp/$query.$how.err"; }
        cmp -s "$tmp/$query.1" "$tmp/$query.$how" || fail "$query on 2 ranks ($how): not one process's output"
        grep -q "rows sent" "$tmp/$query.$how.err" || { fail "$query ($how): the profile lacks rows sent"; cat "$tmp/$query.$how.err"; }
    done
    part=$(sent "$tmp/$query.part.err") whole=$(sent "$tmp/$query.whole.err")
    echo "$query on 2 CPU ranks: $part rows sent with partial aggregates, $whole without"
    [ "$whole" -ge 10000 ] || fail "$query: $whole rows sent with --no-partagg (the input hashed by its groups expected)"
    [ "$part" -le $((whole / 3)) ] || fail "$query: $part rows sent with partial aggregates, $whole without (a third at most expected)"
done
# q01: 4 groups, one partial row each per rank, then the output to rank 0
part=$(sent "$tmp/q01.part.err")
[ "$part" -le 16 ] || fail "q01 on 2 CPU ranks: $part rows sent (at most 16 expected)"
part=$(sent "$tmp/q01.gpu.err")
[ "$part" -le 16 ] || { fail "q01 on 2 GPU ranks: $part rows sent (at most 16 expected)"; cat "$tmp/q01.gpu.err"; }

# ---- 3. every decomposed aggregate: 1, 2, 3 ranks -------------------------------------------
mkdir -p "$tmp/d"
awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "%d|k%d|%d|%d.%02d|s%d\n", i, i % 7, (i * 37) % 1001 - 500, i % 90, i % 100, (i * 13) % 50 }' \
    >"$tmp/d/f.tbl"
cat >"$tmp/p.logic" <<'EOF'
f(id, k, n, d, s) -> int(id), string(k), int(n), decimal(d), string(s).
lang:input[`f] = "f.tbl".
lang:input:key[`f] = "id".
g(k, c, td, ad, lo, hi, mn) <-
  agg<<c = count(), td = total(d), ad = avg(d), lo = min(s), hi = max(s), mn = min(n)>>
  f(_, k, n, d, s).
t(c, ad, hi) <- agg<<c = count(), ad = avg(d), hi = max(d)>> f(_, _, n, d, _).
gi(k, tn, an) <- agg<<tn = total(n), an = avg(n)>> f(_, k, n, _, _).
lang:output[`g] = "g".
lang:output[`t] = "t".
lang:output[`gi] = "gi".
EOF
"$redfox" dump --plan "$tmp/p.logic" | grep -q " partial$" || fail "the test program's aggregates are not split"
"$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --format tbl --no-partagg >"$tmp/p.whole" 2>"$tmp/p.err" || fail "p.logic whole"
"$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --format tbl >"$tmp/p.1" 2>"$tmp/p.err" || fail "p.logic in one process"
cmp -s "$tmp/p.whole" "$tmp/p.1" || { fail "p.logic: partial aggregates change the output"; diff "$tmp/p.whole" "$tmp/p.1" | head; }
for np in 2 3; do
    $mpi $np "$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --format tbl >"$tmp/p.$np" 2>"$tmp/p.$np.err" ||
        { fail "p.logic on $np ranks"; cat "$tmp/p.$np.err"; }
    cmp -s "$tmp/p.1" "$tmp/p.$np" || { fail "p.logic on $np ranks: not one process's output"; diff "$tmp/p.1" "$tmp/p.$np" | head; }
done
[ $fails -eq 0 ] && echo "ok: partial aggregates move fewer rows, with one process's outputs"
[ $fails -eq 0 ]
