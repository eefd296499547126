#!/bin/sh
# skeletons/cuda/test_gt_cache.sh: builds test_gt_cache.cpp with the
# emulator's C++ compiler ($RF_GPU_EMU_CXX or c++) and runs it; 77 (skipped)
# where there is no C++ compiler.
# usage: test_gt_cache.sh SRCDIR WORKDIR
set -eu
src=$1
work=$2
cxx=${RF_GPU_EMU_CXX:-c++}
command -v "$cxx" >/dev/null 2>&1 || { echo "no C++ compiler ($cxx): skipped"; exit 77; }
mkdir -p "$work"
"$cxx" -std=c++17 -O2 -w -I"$src" -o "$work/test_gt_cache" "$src/test_gt_cache.cpp"
exec "$work/test_gt_cache"
