#!/bin/sh
# tests/run_exec_each.sh BUILD SRC MODE: several transactions applied in one
# process (`redfox exec --each`: each --batch its own transaction, committed
# in order, the program compiled and the device started once). Two programs:
# the TPC-B-style bank (bench/txn/tpcb/tpcb.logic: aggregates by diffs, a
# big batch recomputed) over K successive generator batches, and a
# transitive closure (tests/exec/tc.logic: delta rules, DRed) with inserts,
# deletes and both. The outputs printed after transaction k must equal a
# from-scratch `redfox run` over a copy of the database that took batches 1
# to k in separate processes (one exec each), and the stored derived tables
# at the end must equal that copy's. Every transaction after the first starts
# from the relations the one before kept in memory (--profile says so), and
# the first of an exec reads the tables: a second --each on the same database
# sees what the first committed. A bad batch among them stops there: its
# transaction fails (exit 1, naming it), the ones before it stay committed.
# Each batch file is read ahead (--profile says so) while the compile or the
# transaction before it runs, and each after the first parsed there too (a
# bad one's error reported only when its transaction is reached, the words
# of its file alone, and none after a transaction that failed before it);
# one changed after that is read again (its
# transaction applies what it holds then); a FIFO and `-` are not read ahead,
# but in order. Another exec committing while a commit ends on its thread
# (before its exchange, or after it: the folder exchanged in is not under the
# ending commit's lock) makes the next transaction be done again; no update
# is lost.
# MODE cpu or emu (the GPU emulator).
set -u
build=$1
src=$2
mode=$3
redfox=$build/tools/redfox
tmp=${TMPDIR:-/tmp}/rf_exec_each.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dev=cpu
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
fi

# split OUT DIR: the outputs of --each, one file per transaction (DIR/1, DIR/2, ...)
split_out() {
    mkdir -p "$2"
    awk -v dir="$2" '/^-- transaction [0-9]+ of [0-9]+: / { k++; f = dir "/" k; skip = 1; next }
        { if (skip && $0 == "") next; skip = 0; print > f }' "$1"
    # the blank line that separates one transaction's outputs from the next's
    for f in "$2"/*; do
        awk '{ line[NR] = $0 } END { n = NR; if (n && line[n] == "") n--; for (i = 1; i <= n; i++) print line[i] }' "$f" >"$f.t" &&
            mv "$f.t" "$f"
    done
}

# each PROG DB REF NAME BATCH...: the batches in one --each exec on DB, and one
# by one (separate execs) on REF, each compared with a from-scratch run
each() {
    prog=$1 db=$2 ref=$3 name=$4
    shift 4
    args=
    for b in "$@"; do args="$args --batch $b"; done
    # shellcheck disable=SC2086
    "$redfox" exec "$db" "$prog" $args --each --device "$dev" --format tbl --profile >"$tmp/$name.out" 2>"$tmp/$name.prof" ||
        { cat "$tmp/$name.prof"; fail "$name: exec --each"; }
    [ "$(grep -c '^exec: transaction [0-9]* of [0-9]*: ' "$tmp/$name.prof")" -eq $# ] ||
        { cat "$tmp/$name.prof"; fail "$name: not one profile per transaction"; }
    [ "$(grep -c '^exec: batch: ' "$tmp/$name.prof")" -eq $# ] || fail "$name: not one batch line per transaction"
    # every batch file was read ahead, on a thread, while the compile or the
    # transaction before its own ran
    [ "$(grep -c '^exec:   read ahead on a thread, while the compile or the transaction before this one ran: 1 file, ' "$tmp/$name.prof")" -eq $# ] ||
        { cat "$tmp/$name.prof"; fail "$name: not every batch file read ahead"; }
    # ... and every batch file after the first parsed there too, once read
    # (the first's is read while the program compiles: parsed in its transaction)
    [ "$(grep -c '^exec:   parsed ahead on that thread, once read: 1 file, ' "$tmp/$name.prof")" -eq $(($# - 1)) ] ||
        { cat "$tmp/$name.prof"; fail "$name: not every batch file after the first parsed ahead"; }
    # every transaction after the first starts from the relations the one
    # before kept in memory, not from the database's tables
    [ "$(grep -c '^exec: started from the relations the last transaction of this process kept' "$tmp/$name.prof")" -eq $(($# - 1)) ] ||
        { cat "$tmp/$name.prof"; fail "$name: the transactions after the first did not start from the relations kept"; }
    split_out "$tmp/$name.out" "$tmp/$name.each"
    k=0
    for b in "$@"; do
        k=$((k + 1))
        "$redfox" exec "$ref" "$prog" --batch "$b" --device "$dev" --format tbl >"$tmp/$name.one" 2>"$tmp/err" ||
            { cat "$tmp/err"; fail "$name: exec of batch $k alone"; }
        "$redfox" run "$prog" --data "$ref" --device cpu --format tbl >"$tmp/$name.want" 2>"$tmp/err" ||
            { cat "$tmp/err"; fail "$name: run after batch $k"; }
        [ -f "$tmp/$name.each/$k" ] || fail "$name: no outputs after transaction $k"
        cmp -s "$tmp/$name.each/$k" "$tmp/$name.want" ||
            { diff "$tmp/$name.each/$k" "$tmp/$name.want" | head; fail "$name: transaction $k of --each differs from a run"; }
        cmp -s "$tmp/$name.one" "$tmp/$name.want" || fail "$name: exec of batch $k alone differs from a run"
    done
    [ ! -f "$tmp/$name.each/$((k + 1))" ] || fail "$name: more outputs than transactions"
}
# same_tables DB REF PRED...: the stored derived tables (two int columns) equal
same_tables() {
    a=$1 b=$2
    shift 2
    for q in "$@"; do
        for d in "$a" "$b"; do
            table=$(grep -ao "derived\.[0-9a-f]*\.$q" "$d/manifest.rfdb" | head -n 1)
            [ -n "$table" ] || fail "no stored table of $q in $d"
            printf 'p(a, v) -> int(a), int(v).\nlang:input[`p] = "%s".\nlang:output[`p] = "p".\nlang:output:orderBy[`p] = "1,2".\n' \
                "$table" >"$tmp/dump.logic"
            "$redfox" run "$tmp/dump.logic" --data "$d" --device cpu --format tbl >"$tmp/dump.$(basename "$d")" ||
                fail "dump $q of $d"
        done
        cmp -s "$tmp/dump.$(basename "$a")" "$tmp/dump.$(basename "$b")" || fail "stored $q differs between --each and one exec a batch"
    done
}

# ---- the bank: four small batches (by diffs), then a big one (recomputed) ----
prog=$src/bench/txn/tpcb/tpcb.logic
"$build/bench/tpcb_gen" "$tmp/gen" 2 200 40 5 5 >/dev/null || fail "tpcb_gen"
"$redfox" import "$prog" --data "$tmp/gen/data" --out "$tmp/bank" >/dev/null || fail "import"
"$redfox" exec "$tmp/bank" "$prog" --device "$dev" >/dev/null || fail "first exec"
cp -r "$tmp/bank" "$tmp/bank_ref"
cat "$tmp/gen/batch_5.txn" "$tmp/gen/batch_5.txn" "$tmp/gen/batch_5.txn" |
    awk -F'[(,]' '{ printf "+txn(%d,%s,%s,%s,%s\n", $2 + 1000 * NR, $3, $4, $5, $6 }' >"$tmp/big.txn"
# then ids below every stored one (the history's ids no longer increase: the
# rows a batch meets are found by hashing), and ids above them again with a
# fact of the low ones repeated, which must meet its stored row
head -n 3 "$tmp/gen/batch_1.txn" | awk -F'[(,]' '{ printf "+txn(%d,%s,%s,%s,%s\n", -NR, $3, $4, $5, $6 }' >"$tmp/low.txn"
head -n 3 "$tmp/gen/batch_2.txn" | awk -F'[(,]' '{ printf "+txn(%d,%s,%s,%s,%s\n", 1000000 + NR, $3, $4, $5, $6 }' >"$tmp/high.txn"
sed -n 2p "$tmp/low.txn" >>"$tmp/high.txn" # (a fact stored already: it changes nothing)
each "$prog" "$tmp/bank" "$tmp/bank_ref" bank "$tmp/gen/batch_1.txn" "$tmp/gen/batch_2.txn" "$tmp/gen/batch_3.txn" \
    "$tmp/gen/batch_4.txn" "$tmp/big.txn" "$tmp/low.txn" "$tmp/high.txn"
[ "$(grep -c 'maintained incrementally by diffs' "$tmp/bank.prof")" -eq 6 ] || { cat "$tmp/bank.prof"; fail "bank: the small batches not by diffs"; }
grep -q 'more than an eighth' "$tmp/bank.prof" || fail "bank: the big batch not recomputed"
same_tables "$tmp/bank" "$tmp/bank_ref" account_delta teller_delta account_balance teller_balance branch_balance

# the generator's own end state after its five batches, where the batches
# are exactly its own (a fresh bank)
"$redfox" import "$prog" --data "$tmp/gen/data" --out "$tmp/bank2" >/dev/null || fail "import"
"$redfox" exec "$tmp/bank2" "$prog" --device "$dev" --each --format tbl --batch "$tmp/gen/batch_1.txn" --batch "$tmp/gen/batch_2.txn" \
    --batch "$tmp/gen/batch_3.txn" --batch "$tmp/gen/batch_4.txn" --batch "$tmp/gen/batch_5.txn" >"$tmp/gen.out" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "the generator's batches"; }
split_out "$tmp/gen.out" "$tmp/gen.each"
cmp -s "$tmp/gen.each/5" "$tmp/gen/expected.txt" || { diff "$tmp/gen.each/5" "$tmp/gen/expected.txt" | head; fail "not the generator's end state"; }

# ---- a closure: inserts (delta rules), deletes (DRed), both ----------------------
prog=$src/tests/exec/tc.logic
mkdir -p "$tmp/tcdata"
awk 'BEGIN { srand(11); for (i = 0; i < 30; i++) printf "%d,%d\n", int(rand() * 15), int(rand() * 15) }' >"$tmp/tcdata/edge.csv"
"$redfox" import "$prog" --data "$tmp/tcdata" --out "$tmp/tc" >/dev/null || fail "import tc"
"$redfox" exec "$tmp/tc" "$prog" --device "$dev" >/dev/null || fail "first exec tc"
cp -r "$tmp/tc" "$tmp/tc_ref"
printf '+edge(20, 21).\n+edge(21, 22).\n+edge(3, 20).\n' >"$tmp/t1.txn"
head -n 4 "$tmp/tcdata/edge.csv" | awk -F, '{ printf "-edge(%d, %d).\n", $1, $2 }' >"$tmp/t2.txn"
printf -- '-edge(21, 22).\n+edge(22, 5).\n+edge(16, 17).\n' >"$tmp/t3.txn"
printf '+edge(17, 16).\n' >"$tmp/t4.txn"
each "$prog" "$tmp/tc" "$tmp/tc_ref" tc "$tmp/t1.txn" "$tmp/t2.txn" "$tmp/t3.txn" "$tmp/t4.txn"
grep -q 'by delta rules' "$tmp/tc.prof" || fail "tc: no batch by delta rules"
grep -q 'deletions by DRed' "$tmp/tc.prof" || fail "tc: no batch by DRed"
same_tables "$tmp/tc" "$tmp/tc_ref" tc

# ---- read ahead: a file changed after it was read is read again; FIFOs, - in order
# (the first batch a FIFO holds the exec in transaction 1 while the second,
# a regular file, is read ahead; it is then rewritten before the FIFO is fed)
cp -r "$tmp/tc" "$tmp/tc_ra"
cp -r "$tmp/tc" "$tmp/tc_ra_ref"
mkfifo "$tmp/ra1.fifo" || fail "mkfifo"
printf '+edge(60, 61).
' >"$tmp/ra2.txn"
"$redfox" exec "$tmp/tc_ra" "$prog" --device "$dev" --each --batch "$tmp/ra1.fifo" --batch "$tmp/ra2.txn" --format tbl --profile \
    >"$tmp/ra.out" 2>"$tmp/ra.prof" &
pid=$!
sleep 2
printf '+edge(60, 62).
+edge(62, 63).
// rewritten after the read ahead
' >"$tmp/ra2.new"
mv "$tmp/ra2.new" "$tmp/ra2.txn"
printf '+edge(59, 60).
' >"$tmp/ra1.fifo"
wait $pid || { cat "$tmp/ra.prof"; fail "read ahead: exec --each with a FIFO and a file rewritten"; }
printf '+edge(59, 60).
' >"$tmp/ra1.txn"
"$redfox" exec "$tmp/tc_ra_ref" "$prog" --device "$dev" --batch "$tmp/ra1.txn" >/dev/null 2>&1 || fail "read ahead: ref 1"
"$redfox" exec "$tmp/tc_ra_ref" "$prog" --device "$dev" --batch "$tmp/ra2.txn" >/dev/null 2>&1 || fail "read ahead: ref 2"
"$redfox" run "$prog" --data "$tmp/tc_ra_ref" --device cpu --format tbl >"$tmp/ra.want" || fail "read ahead: run"
split_out "$tmp/ra.out" "$tmp/ra.each"
cmp -s "$tmp/ra.each/2" "$tmp/ra.want" ||
    { diff "$tmp/ra.each/2" "$tmp/ra.want" | head; fail "read ahead: the file rewritten after its read ahead was not applied as it is now"; }
# the FIFO was not read ahead; the rewritten file was, and then read again
# (unless the read ahead came after the rewrite: then it is simply used)
[ "$(grep -c '^exec:   read ahead on a thread' "$tmp/ra.prof")" -le 1 ] || { cat "$tmp/ra.prof"; fail "read ahead: the FIFO was read ahead"; }
grep -q '^exec:   read ahead, but changed since: 1 file read again now$' "$tmp/ra.prof" ||
    grep -q '^exec:   read ahead on a thread' "$tmp/ra.prof" || { cat "$tmp/ra.prof"; fail "read ahead: no word of the rewritten file"; }
# standard input: read in order, never ahead
printf '+edge(70, 71).
' | "$redfox" exec "$tmp/tc_ra" "$prog" --device "$dev" --each --batch "$tmp/ra1.txn" --batch - \
    --format tbl --profile >/dev/null 2>"$tmp/ra_stdin.prof" || { cat "$tmp/ra_stdin.prof"; fail "read ahead: --batch -"; }
[ "$(grep -c '^exec:   read ahead on a thread' "$tmp/ra_stdin.prof")" -eq 1 ] ||
    { cat "$tmp/ra_stdin.prof"; fail "read ahead: standard input read ahead, or the file not"; }

# ---- the database named "." (exec run inside it): its commits exchange the
# folder itself, not "." (which cannot be moved), a single exec's and each
# of --each's (after the first, the working folder is the old state)
cp -r "$tmp/tc" "$tmp/tcdot"
cp -r "$tmp/tc" "$tmp/tcdot_ref"
(cd "$tmp/tcdot" && "$redfox" exec . "$prog" --device "$dev" --batch "$tmp/t2.txn" >/dev/null 2>"$tmp/dot.err") ||
    { cat "$tmp/dot.err"; fail "exec . (inside the database)"; }
(cd "$tmp/tcdot" && "$redfox" exec . "$prog" --device "$dev" --each --batch "$tmp/t1.txn" --batch "$tmp/t3.txn" \
    --batch "$tmp/t4.txn" >/dev/null 2>"$tmp/dot.err") || { cat "$tmp/dot.err"; fail "exec . --each (inside the database)"; }
for b in t2 t1 t3 t4; do
    "$redfox" exec "$tmp/tcdot_ref" "$prog" --device cpu --batch "$tmp/$b.txn" >/dev/null 2>&1 || fail "exec $b (dot ref)"
done
"$redfox" run "$prog" --data "$tmp/tcdot" --device cpu --format tbl >"$tmp/dot.got" || fail "run after exec ."
"$redfox" run "$prog" --data "$tmp/tcdot_ref" --device cpu --format tbl >"$tmp/dot.want" || fail "run dot ref"
cmp -s "$tmp/dot.got" "$tmp/dot.want" || fail "exec . : not the state of its transactions"

# ---- a bad batch stops there; the ones before it stay committed ---------------
printf '+edge(30, 31).\n' >"$tmp/ok.txn"
printf '+edge(40, 41).\n+edge(1).\n' >"$tmp/bad.txn"
cp -r "$tmp/tc" "$tmp/tc_bad"
"$redfox" exec "$tmp/tc_bad" "$prog" --device "$dev" --each --batch "$tmp/ok.txn" --batch "$tmp/bad.txn" --batch "$tmp/ok.txn" \
    --format tbl >"$tmp/bad.out" 2>"$tmp/bad.err" && fail "a bad batch did not fail"
grep -q 'transaction 2 of 3 (.*bad.txn) failed; the one before it is committed$' "$tmp/bad.err" ||
    { cat "$tmp/bad.err"; fail "the failure does not name the transaction and the one committed before it"; }
grep -q 'bad.txn:2:' "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "the failure does not name the line"; }
"$redfox" exec "$tmp/tc" "$prog" --device "$dev" --batch "$tmp/ok.txn" --format tbl >"$tmp/ok.want" 2>/dev/null || fail "exec ok.txn"
"$redfox" run "$prog" --data "$tmp/tc_bad" --device cpu --format tbl >"$tmp/bad.now" || fail "run after the bad batch"
cmp -s "$tmp/bad.now" "$tmp/ok.want" || fail "after a failed transaction 2 the database is not transaction 1's state"
# the first: none committed, said by name (a database error, as a full disk's,
# names no batch of its own: here a bad line, which does)
cp -r "$tmp/tc" "$tmp/tc_bad1"
"$redfox" exec "$tmp/tc_bad1" "$prog" --device "$dev" --each --batch "$tmp/bad.txn" --batch "$tmp/ok.txn" \
    --format tbl >"$tmp/bad1.out" 2>"$tmp/bad1.err" && fail "a bad first batch did not fail"
grep -q '^redfox exec: transaction 1 of 2 (.*bad.txn) failed; none is committed$' "$tmp/bad1.err" ||
    { cat "$tmp/bad1.err"; fail "the failure of the first does not name it and say none is committed"; }
[ ! -s "$tmp/bad1.out" ] || fail "a bad first batch: outputs printed"
# several before it: counted in the plural
cp -r "$tmp/tc" "$tmp/tc_bad4"
"$redfox" exec "$tmp/tc_bad4" "$prog" --device "$dev" --each --batch "$tmp/ok.txn" --batch "$tmp/t4.txn" \
    --batch "$tmp/ok.txn" --batch "$tmp/bad.txn" --format tbl >"$tmp/bad4.out" 2>"$tmp/bad4.err" &&
    fail "a bad fourth batch did not fail"
grep -q 'transaction 4 of 4 (.*bad.txn) failed; the 3 before it are committed$' "$tmp/bad4.err" ||
    { cat "$tmp/bad4.err"; fail "the failure does not name the transaction and the 3 committed before it"; }

# ---- a bad batch parsed ahead: its error only when its transaction is reached ----
# (each batch after the first is parsed on a thread while the one before it
# runs.) Transaction 2's file is bad and transaction 1 succeeds: transaction
# 1 committed and printed, then transaction 2's error, the same words as an
# exec of that file alone gives. Transaction 2 bad and transaction 3 bad too:
# only 2's error. Transaction 1 bad (a line of its own) and 2 bad: only 1's.
printf '+edge(1, 2, 3).\n' >"$tmp/bad_other.txn"
"$redfox" exec "$tmp/tc" "$prog" --device "$dev" --batch "$tmp/bad.txn" --format tbl >/dev/null 2>"$tmp/bad_alone.err" &&
    fail "bad.txn alone did not fail"
grep 'bad.txn:2:' "$tmp/bad_alone.err" >"$tmp/bad_alone.line" || { cat "$tmp/bad_alone.err"; fail "bad.txn alone: no line named"; }
"$redfox" exec "$tmp/tc" "$prog" --device "$dev" --batch "$tmp/bad_other.txn" --format tbl >/dev/null 2>"$tmp/bad_other.err" &&
    fail "bad_other.txn alone did not fail"
grep 'bad_other.txn:1:' "$tmp/bad_other.err" >"$tmp/bad_other.line" || { cat "$tmp/bad_other.err"; fail "bad_other.txn alone: no line named"; }
cp -r "$tmp/tc" "$tmp/tc_pa"
"$redfox" exec "$tmp/tc_pa" "$prog" --device "$dev" --each --batch "$tmp/ok.txn" --batch "$tmp/bad.txn" --format tbl --profile \
    >"$tmp/pa.out" 2>"$tmp/pa.err" && fail "parsed ahead: a bad second batch did not fail"
grep 'bad.txn:2:' "$tmp/pa.err" | cmp -s - "$tmp/bad_alone.line" ||
    { cat "$tmp/pa.err"; fail "parsed ahead: the bad second batch's error is not the one its file gives alone"; }
grep -q 'transaction 2 of 2 (.*bad.txn) failed; the one before it is committed$' "$tmp/pa.err" || { cat "$tmp/pa.err"; fail "parsed ahead: no word of transaction 2"; }
split_out "$tmp/pa.out" "$tmp/pa.each"
cmp -s "$tmp/pa.each/1" "$tmp/ok.want" && [ ! -f "$tmp/pa.each/2" ] || fail "parsed ahead: not transaction 1's outputs alone"
"$redfox" run "$prog" --data "$tmp/tc_pa" --device cpu --format tbl >"$tmp/pa.now" || fail "run after parsed ahead"
cmp -s "$tmp/pa.now" "$tmp/ok.want" || fail "parsed ahead: the database is not transaction 1's state"
# transaction 2 fails (its own bad line) while 3, parsed ahead meanwhile, is bad too
cp -r "$tmp/tc" "$tmp/tc_pa2"
"$redfox" exec "$tmp/tc_pa2" "$prog" --device "$dev" --each --batch "$tmp/ok.txn" --batch "$tmp/bad_other.txn" --batch "$tmp/bad.txn" \
    --format tbl >/dev/null 2>"$tmp/pa2.err" && fail "parsed ahead: a bad second and third batch did not fail"
grep 'bad_other.txn:1:' "$tmp/pa2.err" | cmp -s - "$tmp/bad_other.line" && ! grep -q 'bad.txn' "$tmp/pa2.err" ||
    { cat "$tmp/pa2.err"; fail "parsed ahead: transaction 3's error shown, or not transaction 2's"; }
"$redfox" run "$prog" --data "$tmp/tc_pa2" --device cpu --format tbl >"$tmp/pa.now" || fail "run after parsed ahead 2"
cmp -s "$tmp/pa.now" "$tmp/ok.want" || fail "parsed ahead: the database is not transaction 1's state (2 and 3 bad)"
# transaction 1 fails, 2 (parsed ahead while 1 ran) is bad too
cp -r "$tmp/tc" "$tmp/tc_pa3"
"$redfox" exec "$tmp/tc_pa3" "$prog" --device "$dev" --each --batch "$tmp/bad_other.txn" --batch "$tmp/bad.txn" \
    --format tbl >"$tmp/pa3.out" 2>"$tmp/pa3.err" && fail "parsed ahead: a bad first and second batch did not fail"
grep 'bad_other.txn:1:' "$tmp/pa3.err" | cmp -s - "$tmp/bad_other.line" && ! grep -q 'bad.txn' "$tmp/pa3.err" ||
    { cat "$tmp/pa3.err"; fail "parsed ahead: transaction 2's error shown, or not transaction 1's"; }
grep -q '^redfox exec: transaction 1 of 2 (.*bad_other.txn) failed; none is committed$' "$tmp/pa3.err" || { cat "$tmp/pa3.err"; fail "parsed ahead: no word of transaction 1"; }
[ ! -s "$tmp/pa3.out" ] || fail "parsed ahead: a bad first batch printed outputs"

# ---- a commit that fails at its end, on its thread, while the next runs ----------
# (copy-on-write commits: the batches delete.) Transaction 1's commit ends on
# a thread (its syncs, manifest and exchange) while transaction 2 runs;
# strace fails that thread's fsync of the new manifest (strace counts a
# thread's calls apart: the first fsync of the first thread that makes one,
# the commit's end, fails; the main thread makes none before): transaction 2,
# built on a state never committed, must not be committed or printed either;
# the database stays as it was, exit 1, the error names transaction 1.
# LeakSanitizer cannot run under ptrace: a sanitizer build's leak check is
# off for the runs under strace (it stops them with a fatal error otherwise)
nolsan="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
if command -v strace >/dev/null 2>&1; then
    # (each deletes a fact there: (30, 31) from ok.txn, (20, 21) from t1, (16, 17) from t3)
    printf -- '-edge(30, 31).\n-edge(%s).\n' "$(sed -n 5p "$tmp/tcdata/edge.csv")" >"$tmp/f1.txn"
    printf '+edge(80, 81).\n-edge(20, 21).\n' >"$tmp/f2.txn"
    printf -- '-edge(16, 17).\n+edge(82, 83).\n' >"$tmp/f3.txn"
    cp -r "$tmp/tc" "$tmp/fd"
    "$redfox" run "$prog" --data "$tmp/fd" --device cpu --format tbl >"$tmp/fstate.0" || fail "run f0"
    $nolsan strace -f -qq -o "$tmp/fsyncs" -e trace=fsync,openat -e inject=fsync:error=EIO:when=1 "$redfox" exec "$tmp/fd" "$prog" \
        --device "$dev" --each --batch "$tmp/f1.txn" --batch "$tmp/f2.txn" --batch "$tmp/f3.txn" --format tbl --profile \
        >"$tmp/fail.out" 2>"$tmp/fail.err"
    code=$?
    # the fault hit the fsync of transaction 1's new manifest, and nothing before it
    # (the last file its thread opened: the lines are each thread's id first)
    awk '/fsync\(/ { print last[$1]; exit } /openat\(/ { last[$1] = $0 }' "$tmp/fsyncs" | grep -q '\.tmp\.[0-9.]*/manifest\.rfdb", O_WRONLY|O_CREAT' ||
        { cat "$tmp/fsyncs"; fail "the fault did not hit the end of transaction 1's commit"; }
    [ $code -eq 1 ] || { cat "$tmp/fail.err"; fail "commit 1 failed at its end: exit $code, not 1"; }
    grep -q "transaction 1 of 3 (.*f1.txn) failed: its commit did not complete; none is committed" "$tmp/fail.err" ||
        { cat "$tmp/fail.err"; fail "commit 1 failed at its end: the error does not name transaction 1"; }
    grep -q "manifest.rfdb: error: cannot write the manifest: Input/output error" "$tmp/fail.err" ||
        { cat "$tmp/fail.err"; fail "commit 1 failed at its end: the error does not say why"; }
    # transaction 2 ran meanwhile (from the state never committed), then failed for it
    grep -q "note: the commit of the transaction before this one failed: .* this transaction, which started from that state, is not applied" \
        "$tmp/fail.err" || { cat "$tmp/fail.err"; fail "commit 1 failed at its end: no word that transaction 2 is not applied"; }
    # nothing printed, the database as it was, and it takes the next exec
    [ ! -s "$tmp/fail.out" ] && ! grep -q '^exec: transaction ' "$tmp/fail.err" ||
        { cat "$tmp/fail.out"; fail "commit 1 failed at its end: a transaction's outputs or profile printed"; }
    "$redfox" run "$prog" --data "$tmp/fd" --device cpu --format tbl >"$tmp/fgot" 2>"$tmp/err" || { cat "$tmp/err"; fail "run after the failed commit"; }
    cmp -s "$tmp/fgot" "$tmp/fstate.0" || fail "commit 1 failed at its end: the database changed"
    "$redfox" exec "$tmp/fd" "$prog" --device cpu --format tbl >"$tmp/fgot2" 2>"$tmp/err" || { cat "$tmp/err"; fail "exec after the failed commit"; }
    cmp -s "$tmp/fgot2" "$tmp/fstate.0" || fail "after the failed commit: the stored derived predicates disagree"
    # the same batches without the fault: three commits, the first two ending on threads
    cp -r "$tmp/tc" "$tmp/fok"
    "$redfox" exec "$tmp/fok" "$prog" --device "$dev" --each --batch "$tmp/f1.txn" --batch "$tmp/f2.txn" --batch "$tmp/f3.txn" \
        --format tbl --profile >/dev/null 2>"$tmp/fok.err" || { cat "$tmp/fok.err"; fail "f1-f3 without the fault"; }
    [ "$(grep -c '^exec: commit: the columns written; its syncs, manifest and exchange end on a thread while the next' "$tmp/fok.err")" -eq 2 ] ||
        { cat "$tmp/fok.err"; fail "f1-f3: not two commits ending on threads"; }
    [ "$(grep -c '^exec: ran while the last transaction.s commit ended on a thread' "$tmp/fok.err")" -eq 2 ] ||
        { cat "$tmp/fok.err"; fail "f1-f3: not two transactions run while the commit before ended"; }
    echo "ok: a commit failing at its end while the next transaction ran: neither committed nor printed, exit 1"
else
    echo "skipped: a commit failing at its end (strace missing)"
fi

# ---- another process commits between the end of a commit and the next one's ----
# (transaction 2 ran from transaction 1's state while 1's commit ended; strace
# holds transaction 2's taking of the lock (the main thread's second flock)
# for 3 s, in which another exec commits: transaction 2 must be done again
# from the files, its outputs and the database those of all three)
if command -v strace >/dev/null 2>&1; then
    cp -r "$tmp/tc" "$tmp/rd"
    cp -r "$tmp/tc" "$tmp/rdref"
    printf '+edge(90, 91).\n+edge(91, 30).\n' >"$tmp/other.txn"
    $nolsan strace -f -qq -o /dev/null -e trace=flock -e inject=flock:delay_enter=3000000:when=2 "$redfox" exec "$tmp/rd" "$prog" \
        --device "$dev" --each --batch "$tmp/f1.txn" --batch "$tmp/f2.txn" --format tbl --profile >"$tmp/rd.out" 2>"$tmp/rd.err" &
    pid=$!
    sleep 1.5
    "$redfox" exec "$tmp/rd" "$prog" --device cpu --batch "$tmp/other.txn" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "the other exec"; }
    wait $pid || { cat "$tmp/rd.err"; fail "--each with another exec between"; }
    for b in f1 other f2; do
        "$redfox" exec "$tmp/rdref" "$prog" --device cpu --batch "$tmp/$b.txn" >/dev/null 2>&1 || fail "ref $b"
    done
    "$redfox" run "$prog" --data "$tmp/rdref" --device cpu --format tbl >"$tmp/rd.want" || fail "run rdref"
    "$redfox" run "$prog" --data "$tmp/rd" --device cpu --format tbl >"$tmp/rd.got" || fail "run rd"
    cmp -s "$tmp/rd.got" "$tmp/rd.want" || fail "another exec between: the database is not the three transactions'"
    split_out "$tmp/rd.out" "$tmp/rd.each"
    cmp -s "$tmp/rd.each/2" "$tmp/rd.want" ||
        { diff "$tmp/rd.each/2" "$tmp/rd.want" | head; fail "another exec between: transaction 2's outputs miss the other's commit"; }
    grep -q "^exec: done again from the database's files: another process committed between" "$tmp/rd.err" ||
        { cat "$tmp/rd.err"; fail "another exec between: transaction 2 not done again"; }
    echo "ok: another process committed between a commit's end and the next one's: the next one done again from the files"

    # ... and another commits right after the exchange, before that commit's
    # end is over: the exchanged-in folder is not under its lock (that is on
    # the folder exchanged away), so another exec may lock it and commit
    # while the thread still removes the old folder and syncs; strace holds
    # each thread's first renameat2 (the exchange of transaction 1's commit,
    # on its thread) 3 s after it returns. The state transaction 2 checks the
    # database against must be the manifest transaction 1 wrote, not the one
    # the folder holds by then (the other's: transaction 2 would then be
    # committed over it, the other's update lost)
    cp -r "$tmp/tc" "$tmp/rx"
    $nolsan strace -f -qq -o /dev/null -e trace=renameat2 -e inject=renameat2:delay_exit=3000000:when=1 "$redfox" exec "$tmp/rx" \
        "$prog" --device "$dev" --each --batch "$tmp/f1.txn" --batch "$tmp/f2.txn" --format tbl --profile >"$tmp/rx.out" 2>"$tmp/rx.err" &
    pid=$!
    sleep 1.5
    "$redfox" exec "$tmp/rx" "$prog" --device cpu --batch "$tmp/other.txn" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "the other exec (after the exchange)"; }
    wait $pid || { cat "$tmp/rx.err"; fail "--each with another exec after an exchange"; }
    "$redfox" run "$prog" --data "$tmp/rx" --device cpu --format tbl >"$tmp/rx.got" || fail "run rx"
    cmp -s "$tmp/rx.got" "$tmp/rd.want" || fail "another exec after an exchange: its update lost (the database is not the three transactions')"
    grep -q "^exec: done again from the database's files: another process committed between" "$tmp/rx.err" ||
        { cat "$tmp/rx.err"; fail "another exec after an exchange: transaction 2 not done again"; }
    echo "ok: another process committed after a commit's exchange, before its end: the next one done again, nothing lost"

    # ... where transaction 2's batch is standard input, a pipe (read once, in
    # order): done again, it applies what it read the first time, not an
    # empty batch
    cp -r "$tmp/tc" "$tmp/rs"
    cat "$tmp/f2.txn" | $nolsan strace -f -qq -o /dev/null -e trace=flock -e inject=flock:delay_enter=3000000:when=2 "$redfox" exec \
        "$tmp/rs" "$prog" --device "$dev" --each --batch "$tmp/f1.txn" --batch - --format tbl --profile >"$tmp/rs.out" 2>"$tmp/rs.err" &
    pid=$!
    sleep 1.5
    "$redfox" exec "$tmp/rs" "$prog" --device cpu --batch "$tmp/other.txn" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "the other exec (stdin)"; }
    wait $pid || { cat "$tmp/rs.err"; fail "--each from standard input with another exec between"; }
    grep -q "^exec: done again from the database's files: another process committed between" "$tmp/rs.err" ||
        { cat "$tmp/rs.err"; fail "standard input: transaction 2 not done again"; }
    "$redfox" run "$prog" --data "$tmp/rs" --device cpu --format tbl >"$tmp/rs.got" || fail "run rs"
    cmp -s "$tmp/rs.got" "$tmp/rd.want" || fail "standard input done again: its batch lost (the database is not the three transactions')"
    echo "ok: a transaction from standard input done again applies what it read"
fi

# ---- killed at a random moment: the state after some of its transactions -----
# (the commits write the files as before: the relations kept in memory go with
# the process, and the database is one transaction's committed state)
cp -r "$tmp/tc" "$tmp/k0"
printf '+edge(50, 51).\n+edge(51, 52).\n' >"$tmp/k1.txn"
printf -- '-edge(50, 51).\n+edge(52, 53).\n' >"$tmp/k2.txn"
printf '+edge(53, 50).\n+edge(3, 51).\n' >"$tmp/k3.txn"
cp -r "$tmp/k0" "$tmp/kref"
"$redfox" run "$prog" --data "$tmp/kref" --device cpu --format tbl >"$tmp/kstate.0" || fail "run k0"
for i in 1 2 3; do
    "$redfox" exec "$tmp/kref" "$prog" --device cpu --batch "$tmp/k$i.txn" >/dev/null 2>&1 || fail "exec k$i"
    "$redfox" run "$prog" --data "$tmp/kref" --device cpu --format tbl >"$tmp/kstate.$i" || fail "run k$i"
    cmp -s "$tmp/kstate.$i" "$tmp/kstate.$((i - 1))" && fail "k$i changes nothing"
done
r=0
seen=
while [ $r -lt 6 ]; do
    rm -rf "$tmp/kd" "$tmp"/kd.tmp.*
    cp -r "$tmp/k0" "$tmp/kd"
    "$redfox" exec "$tmp/kd" "$prog" --device "$dev" --each --batch "$tmp/k1.txn" --batch "$tmp/k2.txn" --batch "$tmp/k3.txn" \
        >/dev/null 2>&1 &
    pid=$!
    sleep "$(awk -v s=$r 'BEGIN { srand(s + 5); printf "%.3f", rand() * 0.6 }')"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    [ -f "$tmp/kd/manifest.rfdb" ] || fail "kill round $r: no database left at its name"
    "$redfox" run "$prog" --data "$tmp/kd" --device cpu --format tbl >"$tmp/kgot" 2>"$tmp/err" || { cat "$tmp/err"; fail "kill round $r: run"; }
    got=
    for i in 0 1 2 3; do cmp -s "$tmp/kgot" "$tmp/kstate.$i" && got=$i; done
    [ -n "$got" ] || fail "kill round $r: not the state after any number of the transactions"
    # the stored derived predicates agree with the base data
    "$redfox" exec "$tmp/kd" "$prog" --device cpu --format tbl >"$tmp/kgot2" 2>"$tmp/err" || { cat "$tmp/err"; fail "kill round $r: exec"; }
    cmp -s "$tmp/kgot" "$tmp/kgot2" || fail "kill round $r: stored derived predicates disagree with the base data"
    seen="$seen $got"
    r=$((r + 1))
done
# ---- standard output closed or full while a commit ends on its thread ----------
# (transaction K's outputs are printed after transaction K+1 ran, while
# K+1's commit ends on its thread: k4 and k5 delete, copy on write.) A
# reader gone (| head) ends exec as SIGPIPE does, but after that commit's
# end: no folder of it left beside the database, which is the state after
# some of the transactions. A full disk behind standard output: exit 1, and
# the error says how many are committed (2: transaction 2's commit was under
# way), which the database shows.
printf -- '-edge(51, 52).\n' >"$tmp/k4.txn"
printf -- '-edge(52, 53).\n' >"$tmp/k5.txn"
cp -r "$tmp/k0" "$tmp/hrefdb"
n=0
for i in 1 2 4 5 3; do
    n=$((n + 1))
    "$redfox" exec "$tmp/hrefdb" "$prog" --device cpu --batch "$tmp/k$i.txn" >/dev/null 2>&1 || fail "exec k$i"
    "$redfox" run "$prog" --data "$tmp/hrefdb" --device cpu --format tbl >"$tmp/hstate.$n" || fail "run k$i"
done
for r in 1 2 3; do
    rm -rf "$tmp/kd" "$tmp"/kd.tmp.*
    cp -r "$tmp/k0" "$tmp/kd"
    { "$redfox" exec "$tmp/kd" "$prog" --device "$dev" --each --batch "$tmp/k1.txn" --batch "$tmp/k2.txn" --batch "$tmp/k4.txn" \
        --batch "$tmp/k5.txn" --batch "$tmp/k3.txn" --format tbl 2>"$tmp/err"; echo $? >"$tmp/hrc"; } | head -n 1 >/dev/null
    [ "$(cat "$tmp/hrc")" -eq 141 ] || { cat "$tmp/err"; fail "| head: exit $(cat "$tmp/hrc"), not by SIGPIPE"; }
    [ ! -s "$tmp/err" ] || { cat "$tmp/err"; fail "| head: a message"; }
    ! ls -d "$tmp"/kd.tmp.* >/dev/null 2>&1 || fail "| head: a commit's folder left beside the database"
    "$redfox" run "$prog" --data "$tmp/kd" --device cpu --format tbl >"$tmp/kgot" 2>"$tmp/err" || { cat "$tmp/err"; fail "| head: run"; }
    got=
    for i in 1 2 3 4 5; do cmp -s "$tmp/kgot" "$tmp/hstate.$i" && got=$i; done
    [ -n "$got" ] || fail "| head: not the state after some of the transactions"
done
if [ -w /dev/full ]; then
    rm -rf "$tmp/kd"
    cp -r "$tmp/k0" "$tmp/kd"
    "$redfox" exec "$tmp/kd" "$prog" --device "$dev" --each --batch "$tmp/k1.txn" --batch "$tmp/k2.txn" --batch "$tmp/k3.txn" \
        --format tbl >/dev/full 2>"$tmp/err" && fail "standard output full: exit 0"
    grep -q "^redfox exec: the outputs of transaction 1 of 3 (.*k1.txn) could not be written; the first 2 are committed, and those after them are not applied$" \
        "$tmp/err" || { cat "$tmp/err"; fail "standard output full: the error does not say what is committed"; }
    "$redfox" run "$prog" --data "$tmp/kd" --device cpu --format tbl >"$tmp/kgot" || fail "standard output full: run"
    cmp -s "$tmp/kgot" "$tmp/kstate.2" || fail "standard output full: the database is not the 2 transactions' state"
fi
# ---- threads the system cannot start -------------------------------------------
# (pthread_create failing with EAGAIN: the system's limit of threads or
# processes reached, as on a loaded machine.) The read ahead of a batch, the
# CPU's pool of threads and a commit's end on its thread only overlap work:
# where a thread cannot start, the work is done without it. strace fails the
# Nth clone3 of each thread (it counts a thread's calls apart), then every
# one: each exec commits the five transactions (k2, k4, k5 copy on write)
# and prints each one's outputs, those of a run over its state. (Before, each
# of the first thread creations failed the exec with "out of memory", the
# transactions before it committed but not said.) Where the C library makes
# threads by clone, not clone3, nothing is injected and the runs are plain.
if command -v strace >/dev/null 2>&1; then
    for n in 1 2 3 4 5 6 7 8 9 10 11 12 every; do
        when=
        [ "$n" = every ] || when=":when=$n"
        rm -rf "$tmp/td" "$tmp/td.split" "$tmp"/td.tmp.*
        cp -r "$tmp/k0" "$tmp/td"
        $nolsan strace -f -qq -o /dev/null -e trace=clone3 -e inject=clone3:error=EAGAIN$when "$redfox" exec "$tmp/td" \
            "$prog" --device "$dev" --each --batch "$tmp/k1.txn" --batch "$tmp/k2.txn" --batch "$tmp/k4.txn" \
            --batch "$tmp/k5.txn" --batch "$tmp/k3.txn" --format tbl >"$tmp/td.out" 2>"$tmp/td.err" ||
            { cat "$tmp/td.err"; fail "no thread ($n): the exec failed"; }
        split_out "$tmp/td.out" "$tmp/td.split"
        for i in 1 2 3 4 5; do
            cmp -s "$tmp/td.split/$i" "$tmp/hstate.$i" || fail "no thread ($n): transaction $i's outputs are not a run's over its state"
        done
        ! ls -d "$tmp"/td.tmp.* >/dev/null 2>&1 || fail "no thread ($n): a commit's folder left beside the database"
    done
    echo "ok: threads that cannot start (the Nth, N = 1..12, and every one): the five transactions committed, as runs"
else
    echo "skipped: threads that cannot start (strace missing)"
fi
echo "ok: --each on $mode: 7 bank transactions (6 by diffs, 1 recomputed) and 4 closure ones, each equal to a run; a bad one stops there;"
echo "    killed 6 times, each time the state after this many of its 3 transactions:$seen"
