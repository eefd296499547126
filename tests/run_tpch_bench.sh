#!/bin/sh
# tests/run_tpch_bench.sh REDFOX DATA_DIR: `redfox tpch bench` on the CPU at
# SF 0.01: two queries, one timed run each, and the --json file it writes has
# the documented keys; bad usage exits 2, an --sf the data does not have
# included (without --sf, the data's own). Skipped (77) without the data.
r=$1
data=$2
[ -f "$data/lineitem.tbl" ] || { echo "skip: no TPC-H data in $data"; exit 77; }
tmp=${TMPDIR:-/tmp}/rf_tpch_bench.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
usage() { # description command...
    what=$1; shift
    "$@" >/dev/null 2>"$tmp/err"
    got=$?
    if [ "$got" -ne 2 ]; then echo "FAIL: $what: exit $got, expected 2"; cat "$tmp/err"; fail=1; fi
}
usage "no --data" "$r" tpch bench --sf 0.01
usage "an --sf the data does not have" "$r" tpch bench --data "$data" --sf 1 --queries 6
# --duckdb naming a folder: said so (it said 'Input/output error')
"$r" tpch bench --data "$data" --queries 6 --repeat 1 --device cpu --duckdb "$tmp" >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "cannot read $tmp: it is a folder" "$tmp/err"; then
    echo "FAIL: --duckdb a folder: exit $rc"; cat "$tmp/err"; fail=1
fi
# --duckdb naming a named pipe or /dev/zero: refused at once (it waited, or read, for ever)
mkfifo "$tmp/duck.fifo" 2>/dev/null
for f in "$tmp/duck.fifo" /dev/zero; do
    [ -e "$f" ] || continue
    timeout 60 "$r" tpch bench --data "$data" --queries 6 --repeat 1 --device cpu --duckdb "$f" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 1 ] || ! grep -q "cannot read $f: not a regular file" "$tmp/err"; then
        echo "FAIL: --duckdb $f: exit $rc"; cat "$tmp/err"; fail=1
    fi
done
rm -f "$tmp/duck.fifo"
usage "an --sf the data does not have" "$r" tpch bench --data "$data" --sf 0.011 --queries 6
usage "--sf in hexadecimal" "$r" tpch bench --data "$data" --sf 0x10 --queries 6
# a database's scale factor from its manifest (supplier's rows)
if "$r" tpch gen --sf 0.02 --format db --tables supplier --out "$tmp/db" >/dev/null 2>&1; then
    usage "an --sf the database does not have" "$r" tpch bench --data "$tmp/db" --sf 0.01 --queries 6
    grep -q "is of scale factor 0.02 (supplier has 200 rows" "$tmp/err" || { echo "FAIL: the database's SF: $(cat "$tmp/err")"; fail=1; }
    # a damaged manifest is that error (exit 1), not "no supplier table: give --sf" (exit 2)
    printf 'garbage' | dd of="$tmp/db/manifest.rfdb" bs=1 seek=100 conv=notrunc 2>/dev/null
    "$r" tpch bench --data "$tmp/db" --queries 6 --repeat 1 --device cpu >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 1 ] || ! grep -q "manifest.rfdb: error: the manifest is corrupted" "$tmp/err"; then
        echo "FAIL: bench on a damaged database: exit $rc"; cat "$tmp/err"; fail=1
    fi
fi
usage "bad --sf" "$r" tpch bench --data "$data" --sf zero
usage "bad --repeat" "$r" tpch bench --data "$data" --sf 0.01 --repeat 0
usage "bad --queries" "$r" tpch bench --data "$data" --sf 0.01 --queries 23
usage "bad --device" "$r" tpch bench --data "$data" --sf 0.01 --device tpu
usage "bad --bandwidth" "$r" tpch bench --data "$data" --sf 0.01 --bandwidth -1
usage "unknown option" "$r" tpch bench --data "$data" --sf 0.01 --frobnicate
"$r" tpch bench --help >/dev/null || { echo "FAIL: --help"; fail=1; }

printf 'load 0.1 s\nq01 12.5 ms\nq06 1.0 ms\ntotal 13 ms, geometric mean 3.5 ms\n' >"$tmp/duckdb.txt"
if ! "$r" tpch bench --data "$data" --sf 0.01 --device cpu --threads 2 --repeat 1 --queries 1,6 \
        --duckdb "$tmp/duckdb.txt" --json "$tmp/bench.json" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: tpch bench exited $?"; cat "$tmp/out" "$tmp/err"; exit 1
fi
grep -q '^q01 ' "$tmp/out" && grep -q '^q06 ' "$tmp/out" && grep -q 'geometric mean' "$tmp/out" ||
    { echo "FAIL: the table lacks q01, q06 or the summary"; cat "$tmp/out"; fail=1; }
python3 - "$tmp/bench.json" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("device", "sf", "date", "queries", "total_ms", "geomean_ms", "power"):
    assert k in d, "missing key %s" % k
assert d["device"] == "cpu" and d["sf"] == 0.01 and d["power"] is None, d
qs = d["queries"]
assert [q["q"] for q in qs] == [1, 6], qs
for q in qs:
    for k in ("q", "median_ms", "cold_ms", "bytes", "floor_ms", "ratio", "duckdb_ms"):
        assert k in q, "missing key %s in %r" % (k, q)
    assert q["median_ms"] > 0 and q["cold_ms"] > 0 and q["bytes"] > 0 and q["floor_ms"] > 0, q
    # the cold run's phases and copies (none on the CPU)
    ph = q["cold_phases_ms"]
    assert set(ph) == {"device", "program", "read", "copy", "run", "output"}, ph
    assert ph["read"] > 0 and ph["run"] > 0 and q["h2d_bytes"] == 0 and q["d2h_bytes"] == 0, q
assert qs[0]["duckdb_ms"] == 12.5 and qs[1]["duckdb_ms"] == 1.0, qs
assert abs(d["total_ms"] - sum(q["median_ms"] for q in qs)) < 1e-3 * d["total_ms"] + 1e-6, d
PY
# the GPU (emulated): the cold run's copies each way, its peak device memory
# and its phases, in the table and the JSON (no --sf: the data's, 0.01)
if ! RF_GPU_EMULATE=1 "$r" tpch bench --data "$data" --device gpu --threads 2 --repeat 1 --queries 6 \
        --json "$tmp/gpu.json" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: tpch bench --device gpu (emulated) exited $?"; cat "$tmp/out" "$tmp/err"; exit 1
fi
grep -q '^cold runs: q06 ' "$tmp/out" || { echo "FAIL: no cold-run line for q06"; cat "$tmp/out"; fail=1; }
python3 - "$tmp/gpu.json" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["sf"] == 0.01, doc["sf"]
q = doc["queries"][0]
# q06 reads 4 of lineitem's 16 columns: 60,175 rows of 28 bytes (no more than 2 MB)
assert 60175 * 28 <= q["h2d_bytes"] < 2000000, q
assert 0 < q["d2h_bytes"] < 4096 and q["gpu_peak_bytes"] >= q["h2d_bytes"] - 4096, q
assert q["cold_phases_ms"]["copy"] > 0 and q["cold_phases_ms"]["read"] > 0, q
assert "gpu_memory_cap" not in q, q
PY
# under a cap below q06's peak (about 1.69 MB): the peak stays under it, and
# the profiled run ran a kernel in ranges (q06's fused kernel, its input
# waiting in host memory from the load on: no value needs moving there)
if ! RF_GPU_EMULATE=1 "$r" tpch bench --data "$data" --sf 0.01 --device gpu --threads 2 --repeat 1 --queries 6 \
        --gpu-memory 1500000 --json "$tmp/cap.json" >"$tmp/out" 2>"$tmp/err"; then
    echo "FAIL: tpch bench --gpu-memory (emulated) exited $?"; cat "$tmp/out" "$tmp/err"; exit 1
fi
grep -q 'running on the CPU' "$tmp/err" && { echo "FAIL: q06 fell back to the CPU under the cap"; cat "$tmp/err"; fail=1; }
python3 - "$tmp/cap.json" <<'PY' || fail=1
import json, sys
q = json.load(open(sys.argv[1]))["queries"][0]
assert q["gpu_memory_cap"] == 1500000 and 0 < q["gpu_peak_bytes"] <= 1500000, q
assert q["gpu_values_moved"] >= 0 and q["gpu_kernels_in_ranges"] > 0, q
PY
exit $fail
