#!/bin/sh
# tests/run_gpu_devcache.sh REDFOX SF001_DIR: on the emulated GPU, `tpch run`
# keeps the input columns it copied to the device, and the dictionary's
# device copy, across its queries (runtime/gpu/rt_gpu_cache.c):
# - q06 after q01 (both read lineitem's l_shipdate, l_discount, l_quantity,
#   l_extendedprice) finds its 4 columns on the device and copies none (its
#   --profile: "N columns found ..., 0 copied (0 bytes)", and almost no bytes
#   to the device); q14 after q13 copies only the dictionary's new strings
#   (part's), not the whole dictionary again (from a database, no more than
#   q14 alone copies);
# - the same from a database (`tpch gen --format db`);
# - under a tight --gpu-memory cap, cached columns are evicted for room
#   ("E evicted for room", E > 0) and every query still runs on the GPU;
# every answer the CPU's, byte for byte.
set -u
redfox=$1 data=$2
[ -f "$data/lineitem.tbl" ] || { echo "skipped: no TPC-H data in $data"; exit 77; }
tmp=${TMPDIR:-/tmp}/rf_devcache.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
qs=1,3,6,13,14

# block Q FILE: query Q's --profile text in FILE (from "qQ profile" to the next query's)
block() {
    awk -v q="$1" '/^q[0-9][0-9] profile/ { on = ($1 == q) } on' "$2"
}
# field Q FILE SED: a number from query Q's profile
field() {
    block "$1" "$2" | sed -n "$3" | head -n 1
}

# same LABEL DIR: DIR's answers are the CPU's
same() {
    for f in "$tmp"/cpu/*.csv; do
        cmp -s "$f" "$2/$(basename "$f")" || { echo "FAIL: $1: $(basename "$f") differs from the CPU's"; fail=1; }
    done
}

"$redfox" tpch run --data "$data" --queries $qs --device cpu --threads 2 --out "$tmp/cpu" >/dev/null 2>&1 ||
    { echo "FAIL: cpu run"; exit 1; }

export RF_GPU_EMULATE=1

# keeps LABEL ERRFILE: q06 copied nothing, q14 only the new strings
keeps() {
    hits=$(field q06 "$2" 's/^gpu input cache: \([0-9]*\) columns found.*/\1/p')
    copied=$(field q06 "$2" 's/^gpu input cache: .* found on the device ([0-9]* bytes, not copied), \([0-9]*\) copied (\([0-9]*\) bytes).*/\1 \2/p')
    h2d=$(field q06 "$2" 's/.*copy [0-9.]* ms (\([0-9]*\) bytes to the device.*/\1/p')
    echo "$1: q06: ${hits:-?} columns found on the device, copied: ${copied:-?} (columns bytes); ${h2d:-?} bytes to the device"
    if [ -z "$hits" ] || [ "$hits" -lt 4 ] || [ "$copied" != "0 0" ] || [ -z "$h2d" ] || [ "$h2d" -ge 4096 ]; then
        echo "FAIL: $1: q06 copied lineitem's columns again"; fail=1
    fi
    d13=$(field q13 "$2" 's/^gpu dictionary: \([0-9]*\) bytes copied.*/\1/p')
    d14=$(field q14 "$2" 's/^gpu dictionary: \([0-9]*\) bytes copied.*/\1/p')
    echo "$1: dictionary bytes to the device: q13 ${d13:-?}, q14 ${d14:-?}"
    # (from a database, q13 reads o_comment as LIKE classes, a few strings
    # (runtime/rt_db_like.c): then q14 must copy no more than a run of q14
    # alone copies, $3 bytes, not q13's strings again)
    if [ -z "$d13" ] || [ -z "$d14" ] || [ "$d13" -le 0 ] ||
        { [ -z "${3:-}" ] && [ $((d14 * 4)) -ge "$d13" ]; } || { [ -n "${3:-}" ] && [ "$d14" -gt "$3" ]; }; then
        echo "FAIL: $1: q14 copied the dictionary again"; fail=1
    fi
}

"$redfox" tpch run --data "$data" --queries $qs --device gpu --threads 2 --profile --out "$tmp/gpu" \
    >"$tmp/gpu.out" 2>"$tmp/gpu.err" || { echo "FAIL: gpu run"; cat "$tmp/gpu.err"; exit 1; }
same "text" "$tmp/gpu"
keeps "text" "$tmp/gpu.err"

"$redfox" tpch gen --sf 0.01 --out "$tmp/db" --format db >/dev/null 2>&1 || { echo "FAIL: tpch gen --format db"; exit 1; }
"$redfox" tpch run --data "$tmp/db" --queries $qs --device gpu --threads 2 --profile --out "$tmp/gpudb" \
    >"$tmp/db.out" 2>"$tmp/db.err" || { echo "FAIL: gpu run (database)"; cat "$tmp/db.err"; exit 1; }
same "database" "$tmp/gpudb"
"$redfox" tpch run --data "$tmp/db" --queries 14 --device gpu --threads 2 --profile >/dev/null 2>"$tmp/db14.err" ||
    { echo "FAIL: gpu run of q14 (database)"; cat "$tmp/db14.err"; exit 1; }
d14alone=$(field q14 "$tmp/db14.err" 's/^gpu dictionary: \([0-9]*\) bytes copied.*/\1/p')
keeps "database" "$tmp/db.err" "${d14alone:-0}"

# a cap below what the queries' columns take together: evictions, same answers, all on the GPU
"$redfox" tpch run --data "$data" --queries $qs --device gpu --threads 2 --profile --gpu-memory 6M \
    --out "$tmp/gpucap" >"$tmp/cap.out" 2>"$tmp/cap.err" || { echo "FAIL: gpu run under the cap"; cat "$tmp/cap.err"; exit 1; }
same "cap" "$tmp/gpucap"
ev=$(sed -n 's/^gpu input cache: .* \([0-9]*\) evicted for room.*/\1/p' "$tmp/cap.err" | awk '{ s += $1 } END { print s + 0 }')
echo "cap: $ev cached columns evicted for room"
[ "$ev" -gt 0 ] || { echo "FAIL: cap: no cached column evicted"; fail=1; }
if grep -q "running on the CPU" "$tmp/cap.err"; then
    echo "FAIL: cap: a query left the GPU"; grep "running on the CPU" "$tmp/cap.err"; fail=1
fi

[ $fail = 0 ] && echo "PASS: the device keeps the inputs' columns and the dictionary across tpch run's queries"
exit $fail
