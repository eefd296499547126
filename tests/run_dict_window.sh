#!/bin/sh
# tests/run_dict_window.sh REDFOX SRC: in one process (`tpch run`, TPC-H SF
# 0.2 from a database), q10 interns 120,000 customer strings that no kernel
# reads on the GPU (more than RF_GPU_DICT_WINDOW_MIN, 65,536, below which
# they would be copied anyway), then q13's LIKE reads the 2 class representatives
# of o_comment (runtime/rt_db_like.c), whose codes lie above them: the GPU's
# dictionary copy must not move q10's strings for them (runtime/gpu/
# rt_gpu_str.c, a window of the codes read; rt_gpu_exec.c, no copy up front
# of strings earlier runs interned). q20 and q22 read codes spread over
# that range too. In the emulator, once and with --repeat 2: the outputs
# byte for byte the CPU's, and q13's dictionary bytes at most 2 comments
# (79 bytes each at most) and their offsets, not q10's strings (5 MB).
# Then one run that outputs customers' strings and sorts 300,000 orders by
# o_clerk, on the device (string ranks): the sort's codes lie above the
# 90,000 customer strings, so it copies its 200 clerks alone and the run's
# copy holds none.
set -u
redfox=$1
src=$2
tmp=${TMPDIR:-/tmp}/rf_dict_window.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
"$redfox" tpch gen --sf 0.2 --format db --out "$tmp/db" >/dev/null 2>"$tmp/gen.err" || {
    echo "FAIL: tpch gen failed"; cat "$tmp/gen.err"; exit 1; }
qs=10,13,20,22
"$redfox" tpch run --data "$tmp/db" --queries $qs --device cpu --out "$tmp/cpu" >/dev/null 2>"$tmp/cpu.err" || {
    echo "FAIL: the CPU run failed"; cat "$tmp/cpu.err"; exit 1; }
for rep in 1 2; do
    RF_GPU_EMULATE=1 "$redfox" tpch run --data "$tmp/db" --queries $qs --device gpu --repeat $rep --profile \
        --out "$tmp/emu$rep" >/dev/null 2>"$tmp/emu$rep.err" || {
        echo "FAIL: the emulated run failed (--repeat $rep)"; cat "$tmp/emu$rep.err"; exit 1; }
    for f in "$tmp"/cpu/*.csv; do
        if ! cmp -s "$f" "$tmp/emu$rep/${f##*/}"; then
            echo "FAIL: ${f##*/} differs from the CPU's (--repeat $rep)"; diff "$f" "$tmp/emu$rep/${f##*/}" | head; exit 1; fi
    done
    n=$(awk '/^q[0-9][0-9] profile/ { q = $1 } q == "q13" && /^gpu dictionary:/ { print $3; exit }' "$tmp/emu$rep.err")
    if [ -z "$n" ]; then echo "FAIL: no dictionary line in q13's profile"; cat "$tmp/emu$rep.err"; exit 1; fi
    if [ "$n" -gt 200 ]; then
        echo "FAIL: q13 copied $n bytes of dictionary for its 2 strings (--repeat $rep): the other queries' strings went too"
        exit 1
    fi
done
cat >"$tmp/sort.logic" <<'PROG'
c(k, n, a, cm) <- customer(k, n, a, _, _, _, _, cm).
o(k, cl) <- orders(k, _, _, _, _, _, cl, _, _).
lang:output[`c] = "c".
lang:output[`o] = "o".
lang:output:orderBy[`o] = "2, 1".
PROG
"$redfox" compile "$src/tpch/queries/schema.logic" "$tmp/sort.logic" -o "$tmp/sort.rfx" 2>"$tmp/compile.err" || {
    echo "FAIL: compiling the sort failed"; cat "$tmp/compile.err"; exit 1; }
"$redfox" run "$tmp/sort.rfx" --data "$tmp/db" --device cpu --out "$tmp/scpu" >/dev/null 2>"$tmp/scpu.err" || {
    echo "FAIL: the CPU sort failed"; cat "$tmp/scpu.err"; exit 1; }
RF_GPU_EMULATE=1 "$redfox" run "$tmp/sort.rfx" --data "$tmp/db" --device gpu --profile --out "$tmp/semu" >/dev/null \
    2>"$tmp/semu.err" || { echo "FAIL: the emulated sort failed"; cat "$tmp/semu.err"; exit 1; }
for f in c.csv o.csv; do
    if ! cmp -s "$tmp/scpu/$f" "$tmp/semu/$f"; then
        echo "FAIL: the sort's $f differs from the CPU's"; diff "$tmp/scpu/$f" "$tmp/semu/$f" | head; exit 1; fi
done
if ! grep -q '^k[0-9]* *sort *gpu ' "$tmp/semu.err"; then echo "FAIL: the sort did not run on the device"; cat "$tmp/semu.err"; exit 1; fi
h=$(sed -n 's/^gpu dictionary: .* it holds \([0-9]*\) strings$/\1/p' "$tmp/semu.err")
if [ "$h" != 0 ]; then
    echo "FAIL: the device's dictionary copy holds ${h:-?} strings: the customers' strings went with the clerks"; exit 1; fi
echo ok
