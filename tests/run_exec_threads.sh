#!/bin/sh
# tests/run_exec_threads.sh BUILD SRC MODE: a transaction's results do not
# depend on its thread count. The TPC-B bank (bench/txn/tpcb/tpcb.logic)
# takes, in one `exec --each`, insert-only batches of new ids (parsed in
# chunks, resolved by key with the history met by binary search, the
# history's files kept and appended to by a copy-on-write commit, the
# derived tables' columns written one a thread) and a batch deleting and
# re-inserting part of the history (resolution's other path, DRed or diffs,
# every table written); then a batch with a key violation. With --threads 1
# and --threads 3: every transaction's outputs, the error, and every file
# of the database (manifest included) byte for byte the same; the outputs
# equal a from-scratch run. MODE cpu or emu (the GPU emulator).
set -u
build=$1
src=$2
mode=$3
redfox=$build/tools/redfox
prog=$src/bench/txn/tpcb/tpcb.logic
tmp=${TMPDIR:-/tmp}/rf_exec_threads.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dev=cpu
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
fi
# batches of 40000: the parse cut into many chunks, the commit's columns
# over a megabyte (written in parallel)
n=40000
"$build/bench/tpcb_gen" "$tmp/gen" 2 5000 $n 1 3 >/dev/null || fail "tpcb_gen"
# batch 4: the first 3000 transactions of batch 1 deleted, 1000 of them put back
awk 'NR <= 3000 { sub(/^\+/, "-"); print }' "$tmp/gen/batch_1.txn" >"$tmp/del.txn"
awk 'NR <= 1000' "$tmp/gen/batch_1.txn" >>"$tmp/del.txn"
# batch 5: a new transaction, then one whose id batch 2 holds (a key violation)
last=$(tail -n 1 "$tmp/gen/batch_3.txn" | sed 's/^+txn(\([0-9]*\),.*/\1/')
printf '+txn(%d, 1, 1, 1, 5).\n' $((last + 1)) >"$tmp/bad.txn"
head -n 1 "$tmp/gen/batch_2.txn" | sed 's/, [-0-9]*)\.$/, 7)./' >>"$tmp/bad.txn"
"$redfox" import "$prog" --data "$tmp/gen/data" --out "$tmp/db0" >/dev/null || fail "import"
"$redfox" exec "$tmp/db0" "$prog" --device "$dev" --format tbl >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }
for th in 1 3; do
    cp -r "$tmp/db0" "$tmp/db$th"
    "$redfox" exec "$tmp/db$th" "$prog" --device "$dev" --threads $th --format tbl --each --profile \
        --batch "$tmp/gen/batch_1.txn" --batch "$tmp/gen/batch_2.txn" --batch "$tmp/gen/batch_3.txn" \
        --batch "$tmp/del.txn" >"$tmp/out$th" 2>"$tmp/prof$th" || { cat "$tmp/prof$th"; fail "exec --threads $th"; }
    grep -q "commit: copy on write; .*: [1-9][0-9]* bytes kept in their files" "$tmp/prof$th" ||
        { grep commit "$tmp/prof$th"; fail "--threads $th: the history's files not kept"; }
    grep -q "MB written, $th thread" "$tmp/prof$th" || { grep commit "$tmp/prof$th"; fail "--threads $th: the commit's threads"; }
    "$redfox" exec "$tmp/db$th" "$prog" --device "$dev" --threads $th --format tbl --batch "$tmp/bad.txn" \
        >/dev/null 2>"$tmp/bad$th" && fail "--threads $th: a key violation committed"
    grep -q "bad.txn:2:1: error: key violation" "$tmp/bad$th" || { cat "$tmp/bad$th"; fail "--threads $th: the violation's message"; }
done
cmp -s "$tmp/out1" "$tmp/out3" || { diff "$tmp/out1" "$tmp/out3" | head; fail "outputs differ between 1 and 3 threads"; }
cmp -s "$tmp/bad1" "$tmp/bad3" || fail "errors differ between 1 and 3 threads"
files=0
for f in "$tmp/db1"/*; do
    cmp -s "$f" "$tmp/db3/${f##*/}" || fail "${f##*/} differs between 1 and 3 threads"
    files=$((files + 1))
done
[ "$files" -eq "$(ls "$tmp/db3" | wc -l)" ] || fail "the databases have different files"
# the state after the last transaction equals a from-scratch run
awk '/^-- transaction 4 of 4: / { keep = 1; next } keep' "$tmp/out1" | sed '/./,$!d' >"$tmp/last"
"$redfox" run "$prog" --data "$tmp/db1" --device "$dev" --format tbl | sed '/./,$!d' >"$tmp/scratch" || fail "run"
cmp -s "$tmp/last" "$tmp/scratch" || { diff "$tmp/last" "$tmp/scratch" | head; fail "the last state differs from a from-scratch run"; }
[ -s "$tmp/last" ] || fail "no outputs after the last transaction"
grep -q "exec: batch: [0-9]* rows inserted, [1-9][0-9]* deleted" "$tmp/prof1" || fail "the deleting batch deleted nothing"
echo "ok: 1 and 3 threads give the same outputs and the same $files files"
