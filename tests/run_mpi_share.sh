#!/bin/sh
# tests/run_mpi_share.sh REDFOX TESTS_DIR WORK_DIR [cpu|gpu]: on several MPI
# ranks each rank reads only its share of an input (runtime/rt_share.c):
#   - a text file: every rank reads some rows and none all of them (--profile's
#     "read N input rows" per rank), they add up to the file's, and the
#     outputs are byte-identical to one process, with and without a header;
#   - files smaller than the ranks (a header and a row; a header alone);
#   - a file with a quoted line end: all ranks read it whole, same outputs;
#   - --repeat 3: run 1 reads the shares (or the quoted file, whole), runs 2
#     and 3 nothing (each rank keeps its share), the outputs one process's;
#   - a database: each rank reads its blocks, the rows add up to the table's;
#     a table of one block is read whole by every rank: a join with it moves nothing;
#   - a bad value in the last rank's share: the error names the file's line
#     as one process does;
#   - a declared key and a functional dependency broken by two rows in two
#     ranks' shares: the error text of one process.
# at -np 2 and 3 (gpu: GPU ranks through the emulator). Skipped (77) without
# mpirun or MPI support.
set -u
redfox=$1
tests=$2
work=$3
dev=${4:-cpu}
[ "$dev" = gpu ] && export RF_GPU_EMULATE=1
tmp=${TMPDIR:-/tmp}/rf_mpi_share.$$
. "$tests/mpi_env.sh"
mkdir -p "$tmp/d" "$work"
runs=0

# 3,000 rows (id, name, amount); ids unique
awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "%d|n%d|%d.%02d\n", i, i % 97, i % 50, i % 100 }' >"$tmp/d/rows.tbl"
{ echo "id|name|amount"; cat "$tmp/d/rows.tbl"; } >"$tmp/d/rows_h.tbl"
cat >"$tmp/sum.logic" <<'EOF'
row(id, name, amount) -> int(id), string(name), decimal(amount).
lang:input[`row] = "rows.tbl".
lang:input:key[`row] = "id".
total[name] = s <- agg<<s = total(amount)>> row(_, name, amount).
lang:output[`total] = "total".
big(id) <- row(id, _, a), a > 45.
lang:output[`big] = "big".
EOF
sed 's/"rows.tbl"/"rows_h.tbl"/; s/^lang:input:key.*/&\nlang:input:header[`row] = true./' "$tmp/sum.logic" >"$tmp/sum_h.logic"

# run NAME NP PROG DATA [ARGS]: stdout to NAME.NP, stderr to NAME.NP.err
run() {
    r_name=$1 r_np=$2 r_prog=$3 r_data=$4
    shift 4
    if [ "$r_np" = 1 ]; then
        "$redfox" run "$r_prog" --data "$r_data" --device $dev --format tbl --threads 1 "$@" >"$tmp/$r_name.1" \
            2>"$tmp/$r_name.1.err"
    else
        $mpi "$r_np" "$redfox" run "$r_prog" --data "$r_data" --device $dev --format tbl --threads 1 \
            --set rank_timeout_s=120 "$@" >"$tmp/$r_name.$r_np" 2>"$tmp/$r_name.$r_np.err"
    fi
}

# shares NAME NP TOTAL: each rank's "read N input rows" is below TOTAL, above 0, and they add up to TOTAL
shares() {
    awk -v total="$3" -v np="$2" '/^rank [0-9]+ of [0-9]+: run .* read [0-9]+ input rows/ {
            n++; for (i = 1; i <= NF; i++) if ($i == "read") r = $(i + 1)
            if (r + 0 >= total + 0 || r + 0 <= 0) bad = 1; sum += r }
        END { exit !(n == np && !bad && sum == total) }' "$tmp/$1.$2.err"
}

# same outputs, and every rank read a share
for prog in sum sum_h; do
    runs=$((runs + 1))
    run $prog 1 "$tmp/$prog.logic" "$tmp/d" || fail "$prog: one process"
    for np in 2 3; do
        run $prog $np "$tmp/$prog.logic" "$tmp/d" --profile || { fail "$prog -np $np: exit $?"; cat "$tmp/$prog.$np.err"; continue; }
        cmp -s "$tmp/$prog.1" "$tmp/$prog.$np" || { fail "$prog -np $np: outputs differ"; diff "$tmp/$prog.1" "$tmp/$prog.$np" | head; }
        shares $prog $np 3000 || { fail "$prog -np $np: rows read per rank"; grep "^rank" "$tmp/$prog.$np.err"; }
    done
done

# files smaller than the ranks: a header and one row, a header alone (the header is rank 0's)
runs=$((runs + 1))
printf 'id\n5\n' >"$tmp/d/tiny.tbl"
printf 'id\n' >"$tmp/d/hdr.tbl"
for f in tiny hdr; do
    printf 'a(x) -> int(x).\nlang:input[`a] = "%s.tbl".\nlang:input:header[`a] = true.\nb(x) <- a(x).\nlang:output[`b] = "b".\n' \
        $f >"$tmp/$f.logic"
    run $f 1 "$tmp/$f.logic" "$tmp/d"
    run $f 3 "$tmp/$f.logic" "$tmp/d" || { fail "$f -np 3: exit"; cat "$tmp/$f.3.err"; }
    cmp -s "$tmp/$f.1" "$tmp/$f.3" || fail "$f -np 3: outputs differ"
done

# a quoted field with a line end: read whole on every rank, the same outputs
runs=$((runs + 1))
{ printf '1,"a\nb"\n'; awk 'BEGIN { for (i = 2; i <= 400; i++) printf "%d,\"q%d\"\n", i, i % 7 }'; } >"$tmp/d/quoted.csv"
cat >"$tmp/quoted.logic" <<'EOF'
q(id, s) -> int(id), string(s).
lang:input[`q] = "quoted.csv".
lang:input:delimiter[`q] = ",".
lang:input:key[`q] = "id".
n[s] = c <- agg<<c = count()>> q(_, s).
lang:output[`n] = "n".
EOF
run quoted 1 "$tmp/quoted.logic" "$tmp/d"
for np in 2 3; do
    run quoted $np "$tmp/quoted.logic" "$tmp/d" || { fail "quoted -np $np: exit"; cat "$tmp/quoted.$np.err"; }
    cmp -s "$tmp/quoted.1" "$tmp/quoted.$np" || fail "quoted -np $np: outputs differ"
done

# --repeat: each rank keeps its share of a text file for the process's later
# runs, as one process keeps the file (it read it again every run): run 1's
# shares add up to the file's rows, runs 2 and 3 read nothing on any rank, and
# the outputs are one process's; a quoted file (read whole by every rank) too
# repeat_reads NAME NP TOTAL: --profile's per-run "read N input rows" lines
repeat_reads() {
    awk -v total="$3" -v np="$2" '/^run [0-9] of 3: rank [0-9]+ of [0-9]+: run .* read [0-9]+ input rows/ {
            for (i = 1; i <= NF; i++) if ($i == "read") r = $(i + 1)
            if ($2 == 1) { n1++; sum += r } else { n++; if (r + 0 != 0) bad = 1 } }
        END { exit !(n1 == np && n == 2 * np && !bad && sum == total) }' "$tmp/$1.$2.err"
}
for prog in sum quoted; do
    runs=$((runs + 1))
    total=3000
    for np in 2 3; do
        [ $prog = quoted ] && total=$((400 * np)) # (every rank reads its 400 rows whole)
        run rep_$prog $np "$tmp/$prog.logic" "$tmp/d" --repeat 3 --profile ||
            { fail "$prog -np $np --repeat 3: exit"; cat "$tmp/rep_$prog.$np.err"; continue; }
        cmp -s "$tmp/$prog.1" "$tmp/rep_$prog.$np" || fail "$prog -np $np --repeat 3: outputs differ"
        repeat_reads rep_$prog $np $total ||
            { fail "$prog -np $np --repeat 3: rows read per run"; grep "^run [0-9] of 3: rank" "$tmp/rep_$prog.$np.err"; }
    done
done

# errors: the first error line of one process, from the rank that holds it
# errs NAME PROG: fails alike at -np 2 and 3 with one process's first error
errs() {
    runs=$((runs + 1))
    run "$1" 1 "$2" "$tmp/d"
    [ $? -eq 1 ] || { fail "$1: one process should fail"; cat "$tmp/$1.1.err"; return; }
    first=$(grep -m1 "error" "$tmp/$1.1.err")
    for np in 2 3; do
        run "$1" $np "$2" "$tmp/d"
        rc=$?
        if [ $rc -ne 1 ] || ! grep -qxF -- "$first" "$tmp/$1.$np.err"; then
            fail "$1 -np $np: exit $rc, expected '$first'"; cat "$tmp/$1.$np.err"
        fi
    done
}
# a bad amount on line 2,950 (the last rank's share), after a header
mkdir -p "$tmp/bad"
awk 'NR == 2950 { print "2949|x|1.0q"; next } { print }' "$tmp/d/rows_h.tbl" >"$tmp/d/rows_bad.tbl"
sed 's/"rows_h.tbl"/"rows_bad.tbl"/' "$tmp/sum_h.logic" >"$tmp/bad.logic"
errs bad "$tmp/bad.logic"
grep -q "rows_bad.tbl:2950:" "$tmp/bad.1.err" || fail "bad: one process names line 2950"
# id 7 again on line 2,990 (another rank's share than line 7's)
awk 'NR == 2990 { print "7|dup|1.00"; next } { print }' "$tmp/d/rows.tbl" >"$tmp/d/rows_dup.tbl"
sed 's/"rows.tbl"/"rows_dup.tbl"/' "$tmp/sum.logic" >"$tmp/dup.logic"
errs dup "$tmp/dup.logic"
grep -q "of line 2990 is already on line 7" "$tmp/dup.1.err" || fail "dup: one process names lines 2990 and 7"
# a functional dependency: price[7] twice with different values, far apart
awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "%d|%d.00\n", (i == 2990 ? 7 : i), i }' >"$tmp/d/price.tbl"
cat >"$tmp/fd.logic" <<'EOF'
price[p] = v -> int(p), decimal(v).
lang:input[`price] = "price.tbl".
lang:output[`price] = "price".
EOF
errs fd "$tmp/fd.logic"
grep -q "on line 2990, but (7.00) is already on line 7" "$tmp/fd.1.err" || fail "fd: one process names lines 2990 and 7"

# a database: each rank reads its blocks (3,000 rows in 256-row blocks)
runs=$((runs + 1))
"$redfox" import "$tmp/sum.logic" --data "$tmp/d" --out "$tmp/db" --block-rows 256 >/dev/null 2>&1 || fail "import"
run db 1 "$tmp/sum.logic" "$tmp/db"
cmp -s "$tmp/sum.1" "$tmp/db.1" || fail "db: one process differs from the text's outputs"
for np in 2 3; do
    run db $np "$tmp/sum.logic" "$tmp/db" --profile || { fail "db -np $np: exit"; cat "$tmp/db.$np.err"; }
    cmp -s "$tmp/db.1" "$tmp/db.$np" || fail "db -np $np: outputs differ"
    shares db $np 3000 || { fail "db -np $np: rows read per rank"; grep "^rank" "$tmp/db.$np.err"; }
done
# block skipping within the shares (tests/db_blocks: March 2001 of 5,000 rows in 128-row blocks)
runs=$((runs + 1))
mkdir -p "$tmp/ev"
awk 'BEGIN { for (i = 0; i < 5000; i++) { d = int(i / 5); y = 2000 + int(d / 336); m = int(d / 28) % 12 + 1;
             printf "%d|%04d-%02d-%02d|%d.%02d|t%d|%.1f|\n", i, y, m, d % 28 + 1, (i * 37) % 10, (i * 11) % 100, i % 7, i * 0.1 } }' \
    >"$tmp/ev/events.tbl"
b="$tests/db_blocks"
"$redfox" import "$b/schema.logic" --data "$tmp/ev" --out "$tmp/evdb" --block-rows 128 >/dev/null 2>&1 || fail "import events"
"$redfox" run "$b/schema.logic" "$b/range.logic" --data "$tmp/ev" --device $dev --format tbl >"$tmp/range.1" 2>/dev/null
for np in 2 3; do
    $mpi $np "$redfox" run "$b/schema.logic" "$b/range.logic" --data "$tmp/evdb" --device $dev --format tbl --threads 1 \
        >"$tmp/range.$np" 2>"$tmp/range.$np.err" || { fail "range -np $np: exit"; cat "$tmp/range.$np.err"; }
    # the float total adds in another order (runtime/dist/README.md): compared without it
    for f in "$tmp/range.1" "$tmp/range.$np"; do sed 's/^\([0-9]*\)|[-0-9.e+]*|/\1|F|/' "$f" >"$f.nf"; done
    cmp -s "$tmp/range.1.nf" "$tmp/range.$np.nf" || { fail "range -np $np: outputs differ"; diff "$tmp/range.1" "$tmp/range.$np" | head; }
done
# a table of one block (20 rows) beside one of 12 blocks: every rank reads the
# small one whole (replicated), so the join moves nothing and the output's
# gather is the only move
runs=$((runs + 1))
mkdir -p "$tmp/one"
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "%d|%d\n", i, (i * 7) % 20 }' >"$tmp/one/big.tbl"
awk 'BEGIN { for (i = 0; i < 20; i++) printf "%d|name%d\n", i, (i * 3) % 20 }' >"$tmp/one/small.tbl"
cat >"$tmp/one.logic" <<'EOF'
big(k, c) -> int(k), int(c).
lang:input[`big] = "big.tbl".
lang:input:key[`big] = "k".
small(c, s) -> int(c), string(s).
lang:input[`small] = "small.tbl".
lang:input:key[`small] = "c".
named(k, s) <- big(k, c), small(c, s).
lang:output[`named] = "named".
EOF
"$redfox" import "$tmp/one.logic" --data "$tmp/one" --out "$tmp/onedb" --block-rows 256 >/dev/null 2>&1 || fail "import one"
run one 1 "$tmp/one.logic" "$tmp/onedb"
[ "$(wc -l <"$tmp/one.1")" -gt 3000 ] || fail "one: the join's rows are missing"
for np in 2 3; do
    run one $np "$tmp/one.logic" "$tmp/onedb" --profile || { fail "one -np $np: exit"; cat "$tmp/one.$np.err"; }
    cmp -s "$tmp/one.1" "$tmp/one.$np" || fail "one -np $np: outputs differ"
    grep -q "^rank 0 of $np: 1 moves," "$tmp/one.$np.err" ||
        { fail "one -np $np: the join should move nothing"; grep "^rank 0" "$tmp/one.$np.err"; }
done
echo "$runs checks, $fails failures"
[ $fails -eq 0 ]
