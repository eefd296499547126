#!/bin/sh
# tests/run_mpi_rankkeep.sh REDFOX TESTS_DIR WORK_DIR: on several ranks the
# inputs stay where the first run put them across the runs of one process
# (issue 22; runtime/rt_inputs.c, a rank's share named by stamps of its own):
#   - `tpch run --gpus 2 --repeat 3 --profile` (emulated GPUs) from a
#     database at SF 0.1 on q06 (a range filter: block skipping's path), q10
#     (orders, which declares a key; strings) and q13 (strings read as LIKE
#     classes): the --out files one process's; per the profile's per-run
#     lines, on every rank run 1 copies its share's columns with the narrow
#     ones sent as stored (bytes sent below bytes to the device) and runs 2
#     and 3 copy nothing (0 bytes to the device, their bytes found there);
#   - `redfox run --gpus 2 --repeat 3` of a program whose input declares a
#     key that the database's import did not check, with a range filter that
#     skips blocks: the outputs one process's, the key checked over all
#     ranks in run 1 alone (its rows exchanged: bytes sent through host
#     memory in run 1, none after), copies in run 1 alone;
#   - the same key broken by a duplicate: refused with one process's message.
# Skipped (77) where mpirun is missing or redfox was built without MPI.
set -u
redfox=$1
tests=$2
work=$3
mkdir -p "$work"
tmp=$work/tmp.$$
. "$tests/mpi_env.sh"

# copies LABEL FILE QUERIES: per query and rank, run 1 copied (sent < to the
# device) and runs 2 and 3 copied nothing, from FILE's per-run rank lines
# ("PREFIX run R of 3: rank K of 2: ... inputs: H bytes to the device (W bytes
# sent), F bytes found on the device"; PREFIX the query, or none)
copies() {
    lines=$(sed -n 's/^\(q[0-9][0-9] \)\{0,1\}run \([0-9]\) of 3: rank \([0-9]\) of 2: .* inputs: \([0-9]*\) bytes to the device (\([0-9]*\) bytes sent), \([0-9]*\) bytes found on the device.*/\1\2 \3 \4 \5 \6/p' "$2")
    for q in $3; do
        for r in 1 2 3; do
            for k in 0 1; do
                pat="^$q $r $k "
                [ "$q" = - ] && pat="^$r $k "
                l=$(printf '%s\n' "$lines" | grep "$pat" | head -n 1)
                [ -n "$l" ] || { fail "$1: $q: no profile line for run $r, rank $k"; continue; }
                [ "$q" = - ] || l=${l#* } # (the query)
                h=$(echo "$l" | cut -d' ' -f3) w=$(echo "$l" | cut -d' ' -f4) f=$(echo "$l" | cut -d' ' -f5)
                if [ "$r" = 1 ]; then
                    [ "$h" -gt 0 ] && [ "$w" -gt 0 ] && [ "$w" -lt "$h" ] ||
                        fail "$1: $q run 1 rank $k: $h bytes to the device, $w sent: not copied, or not sent narrow"
                else
                    [ "$h" = 0 ] && [ "$w" = 0 ] && [ "$f" -gt 0 ] ||
                        fail "$1: $q run $r rank $k: $h bytes to the device ($w sent), $f found: the inputs were copied again"
                fi
            done
        done
    done
}

# TPC-H from a database: lineitem's and orders' blocks split between the ranks
"$redfox" tpch gen --sf 0.1 --format db --out "$tmp/db" >/dev/null 2>&1 || { fail "tpch gen"; exit 1; }
"$redfox" tpch run --data "$tmp/db" --queries 6,10,13 --device cpu --out "$tmp/one" >/dev/null 2>"$tmp/one.err" ||
    { fail "one process"; cat "$tmp/one.err"; exit 1; }
RF_GPU_EMULATE=1 "$redfox" tpch run --data "$tmp/db" --gpus 2 --queries 6,10,13 --repeat 3 --profile --out "$tmp/gpu2" \
    --set rank_timeout_s=120 >"$tmp/gpu2.txt" 2>"$tmp/gpu2.err" || { fail "--gpus 2 --repeat 3"; cat "$tmp/gpu2.err"; }
for f in "$tmp"/one/q*.csv; do
    cmp -s "$f" "$tmp/gpu2/$(basename "$f")" || fail "--gpus 2: $(basename "$f") differs from one process"
done
[ "$(grep -c ' gpu ' "$tmp/gpu2.txt")" = 3 ] || fail "--gpus 2: not every query ran on the GPU"
copies "tpch run" "$tmp/gpu2.err" "q06 q10 q13"
grep '^q06 run [0-9] of 3: rank' "$tmp/gpu2.err" | sed 's/.*\(run [0-9] of 3: rank [0-9]\).*\(inputs: .*\)/q06 \1: \2/'

# a key the import did not check, and a range filter that skips blocks
mkdir -p "$tmp/d"
awk 'BEGIN { for (i = 1; i <= 200000; i++) printf "%d|n%d|%d.%02d\n", i, i % 97, i % 50, i % 100 }' >"$tmp/d/rows.tbl"
cat >"$tmp/imp.logic" <<'EOF'
row(id, name, amount) -> int(id), string(name), decimal(amount).
lang:input[`row] = "rows.tbl".
lang:output[`row] = "row".
EOF
cat >"$tmp/key.logic" <<'EOF'
row(id, name, amount) -> int(id), string(name), decimal(amount).
lang:input[`row] = "rows.tbl".
lang:input:key[`row] = "id".
low(id, name, amount) <- row(id, name, amount), id >= 60000, id < 140000.
lang:output[`low] = "low".
EOF
"$redfox" import "$tmp/imp.logic" --data "$tmp/d" --out "$tmp/kdb" --block-rows 16384 >/dev/null 2>&1 ||
    { fail "import"; exit 1; }
"$redfox" run "$tmp/key.logic" --data "$tmp/kdb" --device cpu --format tbl >"$tmp/key.1" 2>"$tmp/key.1.err" ||
    { fail "key: one process"; cat "$tmp/key.1.err"; }
RF_GPU_EMULATE=1 "$redfox" run "$tmp/key.logic" --data "$tmp/kdb" --gpus 2 --repeat 3 --profile --format tbl \
    --set rank_timeout_s=120 >"$tmp/key.2" 2>"$tmp/key.2.err" || { fail "key: --gpus 2 --repeat 3"; cat "$tmp/key.2.err"; }
cmp -s "$tmp/key.1" "$tmp/key.2" || fail "key: --gpus 2's output differs from one process"
grep -q '^database: [1-9][0-9]* of [0-9]* blocks skipped' "$tmp/key.2.err" || fail "key: no block skipped"
copies "key" "$tmp/key.2.err" "-"
# the key's check: rows exchanged through host memory in run 1 alone
sent() { sed -n "s/^run $1 of 3: rank $2 of 2: run .* waiting for other ranks), \([0-9]*\) bytes sent.*/\1/p" "$tmp/key.2.err"; }
for k in 0 1; do
    s1=$(sent 1 $k) s2=$(sent 2 $k) s3=$(sent 3 $k)
    echo "key: rank $k: bytes sent through host memory in runs 1, 2, 3: ${s1:-?} ${s2:-?} ${s3:-?}"
    [ -n "$s1" ] && [ "$s1" -gt 0 ] || fail "key: rank $k: run 1 sent no rows (the key not checked over the ranks)"
    [ "${s2:-x}" = 0 ] && [ "${s3:-x}" = 0 ] || fail "key: rank $k: runs 2 and 3 checked the key again"
done

# the key broken (a duplicate in the second rank's share): refused as one process refuses it
echo "150000|dup|1.00" >>"$tmp/d/rows.tbl"
"$redfox" import "$tmp/imp.logic" --data "$tmp/d" --out "$tmp/bdb" --block-rows 16384 >/dev/null 2>&1 ||
    { fail "import (duplicate)"; exit 1; }
"$redfox" run "$tmp/key.logic" --data "$tmp/bdb" --device cpu >/dev/null 2>"$tmp/bad.1.err" &&
    fail "duplicate: one process accepted it"
RF_GPU_EMULATE=1 "$redfox" run "$tmp/key.logic" --data "$tmp/bdb" --gpus 2 --repeat 3 --set rank_timeout_s=120 \
    >/dev/null 2>"$tmp/bad.2.err" && fail "duplicate: --gpus 2 accepted it"
want=$(grep -m 1 'error' "$tmp/bad.1.err")
grep -qF "$want" "$tmp/bad.2.err" || { fail "duplicate: not one process's message"; cat "$tmp/bad.1.err" "$tmp/bad.2.err"; }

[ $fails = 0 ] || exit 1
echo "mpi_rankkeep: all passed"
