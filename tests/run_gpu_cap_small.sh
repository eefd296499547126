#!/bin/sh
# tests/run_gpu_cap_small.sh REDFOX TESTS: programs under GPU memory caps of a
# few KiB, in the emulator, that once left the GPU with the pool's warning
# ("N bytes wanted, M bytes in use under the cap ...: running on the CPU
# instead"), which named no part that does not split: most of the memory in
# use was not the kernel's. Under each cap the run must now stay on the GPU
# (no warning, no CPU profile) and give the CPU's output byte for byte
# (lib_device.sh's caps_stay_on_gpu); under smaller caps two of them leave
# the GPU with a warning that names the part that does not split, or what
# holds the memory in use (its bytes adding up). The programs are random ones
# (tests/random/randprog.py, RANDPROG_BIGDATA=1, the seed in the folder's name)
# and tests/e2e/self_cross.logic; what held the memory:
#   - seeds 48 and 96 under 8K: the strings' copy, 6400 of its bytes the
#     slack kept for strings interned later (256 codes, 4 KiB of bytes) for a
#     dictionary of a few dozen bytes;
#   - seed 72 under 8K: a cross product's other side, brought to the device
#     though the join reads no column of it, and its pairs of one left row; then
#     a unique of 662 copies of one row, "one key, which does not split";
#   - seed 88 under 4K: the fused kernels' deferred error words, 2 KiB;
#   - seed 34 under 4K: no holder, a unique in key partitions whose
#     partition of two rows (39 copies each) did not fit: the partitions
#     doubled over all rows up to a million (two keys' hashes agreed in
#     their low 21 bits), then the pool's warning;
#   - seed 317 under 700 bytes (--no-fuse): the strings' copy, 512 bytes, alone
#     in use, no room for one allocation beside it: the pool's warning now
#     says it does not split;
#   - self_cross under 16K and 32K: a cross product of a relation with
#     itself, which no range or key splits ("which does not split").
set -u
redfox=$1 tests=$2
tmp=${TMPDIR:-/tmp}/rf_gpucapsmall.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_device.sh"
use_device 0 "$redfox" "$tmp"
forced="--no-partagg --set gpu_runs_min=1 --set gpu_ordered_min=1"
fail=0
check() {
    echo "$1:"
    caps_stay_on_gpu "$redfox" "$2/prog.logic" "$2" "$tmp" 'gpu memory cap' "$3" $4 || fail=1
}
check 'seed 48 (the strings copy)' "$tests/gpu_cap_recdiff" "$forced" 8K
check 'seed 96 (the strings copy)' "$tests/gpu_cap_small/seed96" "$forced" 8K
check 'seed 72 (a cross product, a unique of one row)' "$tests/gpu_cap_small/seed72" "$forced" 8K
check 'seed 88 (the error words)' "$tests/gpu_cap_small/seed88" "" 4K
check 'seed 34 (a unique partition of two keys)' "$tests/gpu_cap_small/seed34" "" 4K
# Under smaller caps these leave the GPU, the CPU's output, with a warning
# that names the part or what holds the memory: PATTERN (grep -E) must match
# it; a warning of the pool's must list holders whose bytes add up to the
# bytes it says are in use.
leaves() {
    echo "$1 under $4:"
    # shellcheck disable=SC2086
    "$redfox" run "$2/prog.logic" --data "$2" --device gpu --format tbl --gpu-memory "$4" $3 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    "$redfox" run "$2/prog.logic" --data "$2" --device cpu --format tbl >"$tmp/cpu" 2>/dev/null
    if [ $rc -ne 0 ]; then echo "FAIL: exit $rc"; cat "$tmp/err"; fail=1; return; fi
    cmp -s "$tmp/cpu" "$tmp/out" || { echo "FAIL: output differs from the CPU's"; fail=1; }
    w=$(grep 'warning: .*running on the CPU instead' "$tmp/err")
    echo "$w" | grep -Eq "$5" || { echo "FAIL: not the warning wanted ($5): $w"; fail=1; return; }
    case $w in
    *'bytes in use under the cap'*)
        used=$(echo "$w" | sed -n 's/.* \([0-9]*\) bytes in use under the cap.*/\1/p')
        sum=$(echo "$w" | sed -n 's/.*bytes (\(.*\)): running.*/\1/p' | tr ',' '\n' | awk '{ s += $NF } END { print s + 0 }')
        [ "$used" = "$sum" ] || { echo "FAIL: the holders add up to $sum bytes, not the $used in use: $w"; fail=1; } ;;
    esac
    echo "$w"
}
leaves 'seed 88 (an insert of one row)' "$tests/gpu_cap_small/seed88" "" 2K \
    'kernel k[0-9]+ \(insert\): out of GPU memory: one row, which does not split, does not fit under the cap \(--gpu-memory\) of 2048 bytes'
leaves 'seed 96 (a unique in place: its values)' "$tests/gpu_cap_small/seed96" "" 2K \
    "kernel k[0-9]+ \(unique\): out of GPU memory: [0-9]+ bytes wanted, [0-9]+ bytes in use under the cap \(--gpu-memory\) of 2048 bytes \(the kernel's values [0-9]+, its work [0-9]+, the strings' copy [0-9]+\)"
# the strings' copy alone in use, 512 bytes of a 700-byte cap, so no 256-byte
# allocation fits beside it: the pool's warning says it does not split
leaves "seed 317 (the strings' copy alone)" "$tests/gpu_cap_small/seed317" "--no-fuse" 700 \
    "kernel k[0-9]+ \(group\): out of GPU memory: [0-9]+ bytes wanted, [0-9]+ bytes in use under the cap \(--gpu-memory\) of 700 bytes \(the kernel's values 0, its work 0, the strings' copy [0-9]+, which does not split\)"
echo "self_cross (a cross product of a relation with itself):"
caps_stay_on_gpu "$redfox" "$tests/e2e/self_cross.logic" "$tests/e2e/data" "$tmp" 'gpu memory cap' "" 16K 32K || fail=1
exit $fail
