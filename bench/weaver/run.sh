#!/bin/sh
# bench/weaver/run.sh: the Kernel Weaver benchmark (issue 6, thesis Figure 24).
#
# usage: bench/weaver/run.sh BUILD OUT [--sf "0.1 1"] [--repeat N] [--bandwidth GBPS]
#                            [--tpch-data DIR --tpch-sf X] [--device gpu|cpu] [--ncu]
#                            [--set NAME=VALUE]...
#
# For each scale factor, generates TPC-H data (redfox tpch gen; lineitem is
# about 75 MB of columns at SF 0.1 and 750 MB at SF 1, the 64 MB .. 1 GB of
# the issue) unless OUT/data-sfX exists, compiles the five pattern programs
# (bench/weaver/p*.logic with tpch/queries/schema.logic) and runs each with
# Kernel Weaver fusion and with --no-fuse: REPEAT timed runs in one process
# after an untimed first one (redfox run --repeat), then one with --profile
# for the bytes moved and the peak memory. Prints
# and writes OUT/weaver.csv: pattern, sf, mode, median run ms, fused kernel
# runs, peak GPU memory (MB), bytes moved (MB: read + written by the kernels,
# as --profile counts them), the bandwidth floor (ms at GBPS) and the ratio.
# With --tpch-data, also `redfox tpch bench` on that data with and without
# fusion (OUT/tpch-fused.json, OUT/tpch-nofuse.json) and a per-query table.
# Every result is checked: fused and unfused outputs must be identical.
# With --ncu (on the GPU machine, where Nsight Compute is installed), each
# fused pattern also runs under `ncu --clock-control none` (two runs in one
# process; the second's kernels count): the sum of its kernels' GPU times
# against the floor, without the host's part of a run (OUT/weaver-kernels.csv).
#
# Without a GPU, RF_GPU_EMULATE=1 runs it through the emulator (tiny sizes:
# --sf 0.01; the ctest bench_weaver_emulated does so).
set -eu
if [ $# -lt 2 ]; then
    sed -n '4,7p' "$0" | sed 's/^# //' >&2
    exit 2
fi
build=$1
out=$2
shift 2
sfs="0.1 1"
repeat=3
bw=4300
tpch_data=""
tpch_sf=""
device=gpu
ncu=0
sets=""
while [ $# -gt 0 ]; do
    case $1 in
    --sf) sfs=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --bandwidth) bw=$2; shift 2 ;;
    --tpch-data) tpch_data=$2; shift 2 ;;
    --tpch-sf) tpch_sf=$2; shift 2 ;;
    --device) device=$2; shift 2 ;;
    --ncu) ncu=1; shift ;;
    --set) sets="$sets --set $2"; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
redfox=$build/tools/redfox
[ -x "$redfox" ] || { echo "run.sh: no $redfox (build first)" >&2; exit 2; }
if [ $ncu = 1 ] && ! command -v ncu >/dev/null 2>&1; then echo "run.sh: --ncu: no ncu on the PATH" >&2; exit 2; fi
mkdir -p "$out"
csv=$out/weaver.csv
kcsv=$out/weaver-kernels.csv
[ $ncu = 1 ] && echo "pattern,sf,kernels,kernel_ms,floor_ms,ratio" >"$kcsv"
echo "pattern,sf,mode,median_ms,fused_runs,peak_mb,moved_mb,floor_ms,ratio" >"$csv"

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for sf in $sfs; do
    data=$out/data-sf$sf
    if [ ! -f "$data/lineitem.tbl" ]; then
        echo "== generating TPC-H SF $sf into $data"
        "$redfox" tpch gen --sf "$sf" --out "$data" >/dev/null
    fi
    for p in p1_selects p2_joins p3_join3 p4_shared p5_arith; do
        rfx=$out/$p.rfx
        "$redfox" compile "$src/tpch/queries/schema.logic" "$here/$p.logic" -o "$rfx" 2>"$out/$p.compile.err" ||
            { cat "$out/$p.compile.err" >&2; exit 1; }
        "$redfox" dump --fused "$rfx" >"$out/$p.fused.txt"
        for mode in fused nofuse; do
            flag=""
            [ $mode = nofuse ] && flag="--no-fuse"
            # times: REPEAT runs in one process after a first one, which also
            # pays for starting the GPU's kernels (not timed), without --profile
            # (its per-kernel marks wait for the GPU after every kernel)
            # shellcheck disable=SC2086
            "$redfox" run "$rfx" --data "$data" --device "$device" --repeat $((repeat + 1)) --format csv $flag $sets \
                >"$out/$p.$sf.$mode.out" 2>"$out/$p.$sf.$mode.times.err" ||
                { echo "run.sh: $p $mode failed:" >&2; cat "$out/$p.$sf.$mode.times.err" >&2; exit 1; }
            sed -n 's/^run \([0-9]*\) of [0-9]* (device [a-z]*): load [0-9.]* s, run \([0-9.]*\) s$/\1 \2/p' \
                "$out/$p.$sf.$mode.times.err" | awk '$1 > 1 { printf "%.6f\n", $2 * 1000 }' >"$out/$p.$sf.$mode.times"
            # bytes moved, peak memory and fused kernels: one profiled run
            # shellcheck disable=SC2086
            "$redfox" run "$rfx" --data "$data" --device "$device" --profile --format csv $flag $sets \
                >"$out/$p.$sf.$mode.out2" 2>"$out/$p.$sf.$mode.err" ||
                { echo "run.sh: $p $mode failed:" >&2; cat "$out/$p.$sf.$mode.err" >&2; exit 1; }
            cmp -s "$out/$p.$sf.$mode.out" "$out/$p.$sf.$mode.out2" ||
                { echo "run.sh: FAIL: $p $mode: the profiled run's output differs" >&2; exit 1; }
            ms=$(median <"$out/$p.$sf.$mode.times")
            line=$(grep '^gpu: ' "$out/$p.$sf.$mode.err" || true)
            fused=$(echo "$line" | sed -n 's/^gpu: \([0-9]*\) fused kernel runs.*/\1/p')
            peak=$(echo "$line" | sed -n 's/.*peak device memory \([0-9]*\) bytes.*/\1/p')
            moved=$(echo "$line" | sed -n 's/.*, \([0-9]*\) bytes moved$/\1/p')
            if [ -z "$line" ]; then
                # the CPU: bytes from the profile table's last column
                moved=$(awk '/^k[0-9]/ { s += $NF } END { print s + 0 }' "$out/$p.$sf.$mode.err")
                fused=0 peak=0
            fi
            if [ $ncu = 1 ] && [ $mode = fused ]; then
                # one line per kernel: "ID",...,"gpu__time_duration.sum","ns","12,345"
                # shellcheck disable=SC2086
                ncu --clock-control none --metrics gpu__time_duration.sum --csv "$redfox" run "$rfx" --data "$data" \
                    --device "$device" --repeat 2 $flag $sets 2>/dev/null | grep '^"[0-9]' >"$out/$p.$sf.ncu.csv" || true
                awk -F'","' -v p="$p" -v sf="$sf" -v mv="${moved:-0}" -v bw="$bw" '
                    { v = $NF; gsub(/[",]/, "", v); t[NR] = v }
                    END { s = 0; for (i = int(NR / 2) + 1; i <= NR; i++) s += t[i]
                          ms = s / 1e6; fl = mv / (bw * 1e9) * 1e3
                          printf "%s,%s,%d,%.4f,%.4f,%.2f\n", p, sf, NR - int(NR / 2), ms, fl, (fl > 0 ? ms / fl : 0) }' \
                    "$out/$p.$sf.ncu.csv" >>"$kcsv"
            fi
            awk -v p="$p" -v sf="$sf" -v m="$mode" -v ms="$ms" -v f="${fused:-0}" -v pk="${peak:-0}" \
                -v mv="${moved:-0}" -v bw="$bw" 'BEGIN {
                    fl = mv / (bw * 1e9) * 1e3
                    printf "%s,%s,%s,%.3f,%d,%.1f,%.1f,%.4f,%.1f\n", p, sf, m, ms, f, pk / 1e6, mv / 1e6, fl,
                           (fl > 0 ? ms / fl : 0) }' >>"$csv"
        done
        if ! cmp -s "$out/$p.$sf.fused.out" "$out/$p.$sf.nofuse.out"; then
            echo "run.sh: FAIL: $p at SF $sf: fused and unfused outputs differ" >&2
            diff "$out/$p.$sf.fused.out" "$out/$p.$sf.nofuse.out" >&2 || true
            exit 1
        fi
    done
done

echo "Kernel Weaver patterns (thesis Figure 24), device $device, median of $repeat runs, floor at $bw GB/s"
awk -F, 'NR == 1 { printf "%-11s %6s %-7s %10s %6s %9s %9s %9s %7s\n", "pattern", "sf", "mode", "ms", "fused", "peak MB",
                   "moved MB", "floor ms", "ratio"; next }
         { printf "%-11s %6s %-7s %10.3f %6d %9.1f %9.1f %9.4f %7.1f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }' "$csv"
echo "(written to $csv; which kernels fused: $out/p*.fused.txt)"
if [ $ncu = 1 ]; then
    echo "Fused runs' kernels alone (ncu, GPU time of the second of two runs), floor at $bw GB/s"
    awk -F, 'NR == 1 { printf "%-11s %6s %8s %10s %9s %7s\n", "pattern", "sf", "kernels", "kernel ms", "floor ms", "ratio"; next }
             { printf "%-11s %6s %8d %10.4f %9.4f %7.2f\n", $1, $2, $3, $4, $5, $6 }' "$kcsv"
    echo "(written to $kcsv)"
fi

if [ -n "$tpch_data" ]; then
    [ -n "$tpch_sf" ] || { echo "run.sh: --tpch-data needs --tpch-sf" >&2; exit 2; }
    echo
    echo "== TPC-H SF $tpch_sf, fused and --no-fuse"
    "$redfox" tpch bench --data "$tpch_data" --sf "$tpch_sf" --device "$device" --repeat "$repeat" $sets \
        --json "$out/tpch-fused.json" >"$out/tpch-fused.txt"
    "$redfox" tpch bench --data "$tpch_data" --sf "$tpch_sf" --device "$device" --repeat "$repeat" $sets --no-fuse \
        --json "$out/tpch-nofuse.json" >"$out/tpch-nofuse.txt"
    # one query per line in the JSON: {"q": N, "median_ms": X, ..., "bytes": B, ...}
    q_ms() { sed -n 's/.*{"q": \([0-9]*\), "median_ms": \([0-9.eE+-]*\|null\), .*"bytes": \([0-9]*\|null\), .*"gpu_peak_bytes": \([0-9.eE+-]*\|null\), "fused_kernels": \([0-9]*\).*/\1 \2 \3 \4 \5/p' "$1"; }
    q_ms "$out/tpch-fused.json" | sort -n >"$out/tpch-fused.cols"
    q_ms "$out/tpch-nofuse.json" | sort -n >"$out/tpch-nofuse.cols"
    printf "%-5s %12s %12s %8s %12s %12s %8s\n" query "fused ms" "no-fuse ms" speedup "fused MB" "no-fuse MB" fused
    awk 'NR == FNR { f[$1] = $0; next }
         ($1 in f) { split(f[$1], a, " ")
                     printf "q%02d   %12.2f %12.2f %7.2fx %12.1f %12.1f %8d\n", $1, a[2], $2, (a[2] > 0 ? $2 / a[2] : 0),
                            a[3] / 1e6, $3 / 1e6, a[5] }' "$out/tpch-fused.cols" "$out/tpch-nofuse.cols"
fi
