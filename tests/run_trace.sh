#!/bin/sh
# tests/run_trace.sh REDFOX PROGRAM DATA: `redfox run --trace FILE` writes
# Chrome trace-event JSON: well formed, every span with a start and a
# non-negative length, the compile / run / output phases, one load per input,
# as many kernel spans as --profile counts kernel runs, and, on the emulated
# GPU, the device operations (launches, copies). An unwritable path is an
# error (exit 1) naming it.
set -eu
redfox=$1 prog=$2 data=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
check() { # DEVICE EXTRA_CATEGORY
    "$redfox" run "$prog" --data "$data" --device "$1" --profile --trace "$tmp/t.json" > /dev/null 2> "$tmp/profile"
    calls=$(awk '$1 ~ /^k[0-9]+$/ && $4 ~ /^[0-9]+$/ {n += $4} END {print n + 0}' "$tmp/profile")
    python3 - "$tmp/t.json" "$calls" "$2" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
spans = [e for e in t["traceEvents"] if e["ph"] == "X"]
assert spans, "no spans"
for e in spans:
    assert e["ts"] >= 0 and e["dur"] >= 0 and e["name"] and e["cat"], e
phases = [e["name"] for e in spans if e["cat"] == "phase"]
assert phases == ["compile", "run", "output"], phases
assert any(e["cat"] == "load" for e in spans), "no input load"
kernels = sum(1 for e in spans if e["cat"] == "kernel")
want = int(sys.argv[2])
# the CPU: one span per kernel run, as --profile counts them; the GPU: a span per kernel issued
assert (kernels == want) if sys.argv[3] == "-" else kernels > 0, (kernels, want)
if sys.argv[3] != "-":
    ops = [e["name"] for e in spans if e["cat"] == sys.argv[3]]
    assert any(o.startswith("launch") for o in ops) and any(o == "h2d" for o in ops), ops[:10]
names = [e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"]
assert len(names) == 3, names
print("ok: %d spans, %d kernels" % (len(spans), kernels))
PY
}
check cpu -
RF_GPU_EMULATE=1 check gpu gpu
if "$redfox" run "$prog" --data "$data" --device cpu --trace "$tmp/no/such/dir/t.json" > /dev/null 2> "$tmp/err"; then
    echo "an unwritable trace path succeeded"; exit 1
fi
grep -q "$tmp/no/such/dir/t.json: error: cannot write" "$tmp/err" || { cat "$tmp/err"; exit 1; }
echo "ok: unwritable path refused"
