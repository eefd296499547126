#!/bin/sh
# tests/run_gpu_cap_recdiff.sh REDFOX DIR: DIR/prog.logic (a random program,
# tests/random/randprog.py seed 48 with RANDPROG_BIGDATA=1) whose recursive
# nullary relation p1() gets 1293 candidate rows a round, all one row: the
# difference against its set did not fit under caps of 16 to 24 KiB, and a
# set partitioned by row hash cannot split rows that are all equal, so the
# run left the GPU with a warning that named no part which does not split.
# Now that difference runs in ranges of its candidates: under each cap the
# run must stay on the GPU (no warning) and give the CPU's output
# (lib_device.sh's caps_stay_on_gpu).
set -u
redfox=$1 dir=$2
tmp=${TMPDIR:-/tmp}/rf_gpurecdiff.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_device.sh"
use_device 0 "$redfox" "$tmp"
caps_stay_on_gpu "$redfox" "$dir/prog.logic" "$dir" "$tmp" 'row ranges' "" 16K 20K 24K
