#!/bin/sh
# bench/gpu/q01_kernel.sh: TPC-H q01's fused kernel of grouped totals on the
# GPU (issue 21: q01 at SF 10 in <= 3 ms, <= 3 GB moved).
#
# usage: bench/gpu/q01_kernel.sh REDFOX DATA [--repeat N] [--no-fuse] [--ncu]
#
# Runs q01 (tpch/queries/schema.logic and q01.logic beside this script) on
# DATA (a redfox database or a folder of .tbl files, SF 10 for the issue's
# target) with `--device gpu --repeat N --profile` (N = 5 unless given), and
# prints: each run's time, then from the profile of the last run the fused
# kernel's time and bytes moved (its line "k0 map fused": map, group and
# reduce in one kernel, rfg0), the run's phases and its peak device memory.
# The output is checked against the CPU's (`--device cpu`): identical, or
# the script fails. --no-fuse runs the same without the Kernel Weaver (the
# kernels one by one), for comparison. --ncu (where Nsight Compute is
# installed) also runs the fused kernel rfg0_total_smem under
# `ncu --clock-control none`: its GPU time alone (without the run's copies
# and launches), registers per thread, achieved occupancy, instructions and
# DRAM bytes, from the second of two runs.
#
# Without a GPU, RF_GPU_EMULATE=1 runs it through the emulator (the ctest
# bench_q01_kernel_emulated does so, on SF 0.01).
set -eu
if [ $# -lt 2 ]; then
    sed -n '5p' "$0" | sed 's/^# //' >&2
    exit 2
fi
redfox=$1
data=$2
shift 2
repeat=5
fuse=""
ncu=0
while [ $# -gt 0 ]; do
    case $1 in
    --repeat) repeat=$2; shift 2 ;;
    --no-fuse) fuse=--no-fuse; shift ;;
    --ncu) ncu=1; shift ;;
    *) echo "q01_kernel.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
q=$(cd "$(dirname "$0")/../../tpch/queries" && pwd)
[ -x "$redfox" ] || { echo "q01_kernel.sh: $redfox: not an executable" >&2; exit 2; }
[ -e "$data" ] || { echo "q01_kernel.sh: $data: no such database or folder" >&2; exit 2; }
if [ $ncu = 1 ] && ! command -v ncu >/dev/null 2>&1; then echo "q01_kernel.sh: --ncu: no ncu on the PATH" >&2; exit 2; fi
tmp=${TMPDIR:-/tmp}/q01_kernel.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086
"$redfox" run "$q/schema.logic" "$q/q01.logic" --data "$data" --device gpu --format csv --repeat "$repeat" \
    --profile $fuse >"$tmp/gpu.csv" 2>"$tmp/gpu.err" || { cat "$tmp/gpu.err" >&2; echo "q01_kernel.sh: GPU run failed" >&2; exit 1; }
"$redfox" run "$q/schema.logic" "$q/q01.logic" --data "$data" --device cpu --format csv >"$tmp/cpu.csv" 2>"$tmp/cpu.err" ||
    { cat "$tmp/cpu.err" >&2; echo "q01_kernel.sh: CPU run failed" >&2; exit 1; }

echo "q01 on $data, ${fuse:-fused}, $repeat runs in one process (the first one's load includes the CUDA start):"
grep '^run [0-9]* of ' "$tmp/gpu.err" | sed 's/^/  /'
awk '/^run [0-9]* of / { for (i = 1; i <= NF; i++) if ($i == "run" && i > 1) { v = $(i + 1); sub(/s$/, "", v); t[n++] = v } }
     END { if (n > 1) { m = t[1]; for (i = 2; i < n; i++) if (t[i] < m) m = t[i]
                        printf "  runs 2..%d: fastest %.3f ms\n", n, m * 1e3 } }' "$tmp/gpu.err"
echo "profile of the last run (ms: device time from launch to done; bytes: as --profile counts them):"
sed -n '/^kernel kind/,/^phases:/p' "$tmp/gpu.err" | sed 's/^/  /'
grep -E '^gpu: [0-9]+ fused kernel runs' "$tmp/gpu.err" | sed 's/^/  /' || true
line=$(grep -E '^k0 +map +fused ' "$tmp/gpu.err" || true)
if [ -n "$line" ]; then
    echo "$line" | awk '{ printf "fused kernel (rfg0: map, group, reduce): %s ms, %.3f GB moved, %d rows (%.1f B a row)\n",
                          $5, $NF / 1e9, $6, ($6 > 0 ? $NF / $6 : 0) }'
elif [ -z "$fuse" ]; then
    echo "q01_kernel.sh: no fused kernel ran (no line 'k0 map fused' in the profile)" >&2
    exit 1
fi
if cmp -s "$tmp/gpu.csv" "$tmp/cpu.csv"; then
    echo "output: identical to the CPU's ($(($(wc -l <"$tmp/cpu.csv") - 1)) groups)"
else
    diff "$tmp/cpu.csv" "$tmp/gpu.csv" | head >&2
    echo "q01_kernel.sh: FAIL: the GPU's output differs from the CPU's" >&2
    exit 1
fi

if [ $ncu = 1 ]; then
    # one line per launch of the kernel and metric: "ID",...,"Metric Name","Metric Unit","Value"
    # shellcheck disable=SC2086
    ncu --clock-control none --kernel-name rfg0_total_smem --csv \
        --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes_read.sum \
        "$redfox" run "$q/schema.logic" "$q/q01.logic" --data "$data" --device gpu --repeat 2 $fuse >"$tmp/ncu.csv" 2>/dev/null || true
    echo "ncu, rfg0_total_smem, the second run's launch:"
    grep '^"[0-9]' "$tmp/ncu.csv" | awk -F'","' '{ v = $NF; gsub(/"/, "", v); m = $(NF - 2); u = $(NF - 1); last[m] = v " " u }
        END { n = 0; for (m in last) { printf "  %s: %s\n", m, last[m]; n++ } if (!n) print "  (no lines: is rfg0_total_smem the kernel that ran?)" }'
fi
