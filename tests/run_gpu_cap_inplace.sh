#!/bin/sh
# tests/run_gpu_cap_inplace.sh REDFOX: a recursive min (a shortest path by a
# disjunction) on the emulated GPU under caps of a few KiB. Its round keeps
# the keys that did not improve with `dist = gather_map(dist, dist.sel)`, a
# map whose output replaces its own side; under a cap that runs it in row
# ranges, the first range's output freed the side the next range read
# (a crash, SIGSEGV, under 4K and 3K). Each cap must give the CPU's output
# byte for byte, exit 0, with that map on the GPU in ranges (the run may
# leave the GPU only for another kernel, with a warning).
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_gpucapinplace.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
export RF_GPU_EMULATE=1
awk 'BEGIN { for (i = 1; i <= 80; i++) for (j = 0; j < 3; j++) {
        b = (i * (j + 3) * 7 + j * 11) % 80 + 1; w = (i + j) % 7 == 0 ? 5000000000 : 1 + (i * j) % 3
        printf "%d|%d|%d\n", i, b, w } }' >"$tmp/w.tbl"
cat >"$tmp/wide.logic" <<'P'
w(a, b, c) -> int(a), int(b), int(c).
lang:input[`w] = "w.tbl".
dist[y] = m <- agg<<m = min(c)>> (y = 1, c = 0 ; dist[x] = d, w(x, y, k), c = d + k).
lang:output[`dist] = "dist".
P
"$redfox" run "$tmp/wide.logic" --data "$tmp" --device cpu --format csv >"$tmp/cpu" 2>"$tmp/cpu.err" ||
    { echo "FAIL: the CPU run"; cat "$tmp/cpu.err"; exit 1; }
[ "$(wc -l <"$tmp/cpu")" -gt 40 ] || { echo "FAIL: too few rows on the CPU"; exit 1; }
fail=0
for cap in 8K 6K 5K 4K 3K 2K; do
    "$redfox" run "$tmp/wide.logic" --data "$tmp" --device gpu --format csv --gpu-memory $cap >"$tmp/gpu" 2>"$tmp/gpu.err"
    rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL: exit $rc under the cap $cap"; head -3 "$tmp/gpu.err"; fail=1
    elif ! cmp -s "$tmp/cpu" "$tmp/gpu"; then echo "FAIL: another output under the cap $cap"; fail=1
    elif grep -q '(gather_map): out of GPU memory' "$tmp/gpu.err"; then
        echo "FAIL: the gather map left the GPU under the cap $cap"; head -3 "$tmp/gpu.err"; fail=1
    fi
done
[ $fail = 0 ] && echo "ok: the recursive min under caps of 8K to 2K gives the CPU's output, its kept keys in ranges"
exit $fail
