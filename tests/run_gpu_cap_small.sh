#!/bin/sh
# tests/run_gpu_cap_small.sh REDFOX TESTS: programs under GPU memory caps of a
# few KiB, in the emulator, that once left the GPU with the pool's warning
# ("N bytes wanted, M bytes in use under the cap ...: running on the CPU
# instead"), which named no part that does not split: most of the memory in
# use was not the kernel's. Under each cap the run must now stay on the GPU
# (no warning, no CPU profile) and give the CPU's output byte for byte
# (lib_device.sh's caps_stay_on_gpu). The programs are random ones
# (tests/random/randprog.py, RANDPROG_BIGDATA=1, the seed in the folder's
# name) and tests/e2e/self_cross.logic; what held the memory:
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
echo "self_cross (a cross product of a relation with itself):"
caps_stay_on_gpu "$redfox" "$tests/e2e/self_cross.logic" "$tests/e2e/data" "$tmp" 'gpu memory cap' "" 16K 32K || fail=1
exit $fail
