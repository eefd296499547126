#!/bin/sh
# tests/run_gpu_cap_strings.sh REDFOX: a join that compares strings, in a
# program whose concatenations grow the strings' copy past the cap, on the
# emulated GPU under caps of 256K and 128K. Each run gives the CPU's output
# (exit 0); where it leaves the GPU, its warning must name the strings'
# copy, which the join map reads whole, as the part that does not split:
# it once said "one row, which does not split" (the copy's growth failed in
# every range, down to one row), which sent a reader looking for a huge row.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_gpucapstr.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
export RF_GPU_EMULATE=1
awk 'BEGIN { for (i = 0; i < 400; i++) { s = ""; n = 50 + (i * 37) % 250
             for (j = 0; j < n; j++) s = s sprintf("%c", 97 + (i * j * 7 + j + i) % 26)
             printf "%d|%d|%s\n", i, i % 23, s } }' >"$tmp/ls.tbl"
cat >"$tmp/strs.logic" <<'P'
ls(i, k, txt) -> int(i), int(k), string(txt).
lang:input[`ls] = "ls.tbl".
cat(i, c) <- ls(i, k, txt), k < 5, c = txt + "|" + txt.
same(a, b) <- ls(a, k, x), ls(b, k, y), a < b, x < y.
lang:output[`cat] = "cat".
lang:output[`same] = "same".
P
"$redfox" run "$tmp/strs.logic" --data "$tmp" --device cpu --format csv >"$tmp/cpu" 2>"$tmp/cpu.err" ||
    { echo "FAIL: the CPU run"; cat "$tmp/cpu.err"; exit 1; }
fail=0
for cap in 256K 128K; do
    "$redfox" run "$tmp/strs.logic" --data "$tmp" --device gpu --format csv --gpu-memory $cap >"$tmp/gpu" 2>"$tmp/gpu.err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL: exit $rc under the cap $cap"; head -3 "$tmp/gpu.err"; fail=1
    elif ! cmp -s "$tmp/cpu" "$tmp/gpu"; then echo "FAIL: another output under the cap $cap"; fail=1
    elif grep -q 'running on the CPU' "$tmp/gpu.err" && ! grep -q "the strings' copy, which does not split" "$tmp/gpu.err"; then
        echo "FAIL: under the cap $cap the warning does not name the strings' copy"; head -3 "$tmp/gpu.err"; fail=1
    fi
done
[ $fail = 0 ] && echo "ok: under caps the strings' copy is named as what does not fit"
exit $fail
