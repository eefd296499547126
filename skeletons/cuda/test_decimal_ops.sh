#!/bin/sh
# skeletons/cuda/test_decimal_ops.sh: builds test_decimal_ops.cpp with the
# emulator's C++ compiler ($RF_GPU_EMU_CXX or c++) and runs it; 77 (skipped)
# where there is no C++ compiler.
# usage: test_decimal_ops.sh SRCDIR WORKDIR
set -eu
src=$1
work=$2
cxx=${RF_GPU_EMU_CXX:-c++}
command -v "$cxx" >/dev/null 2>&1 || { echo "no C++ compiler ($cxx): skipped"; exit 77; }
mkdir -p "$work"
"$cxx" -std=c++17 -O2 -w -I"$src" -o "$work/test_decimal_ops" "$src/test_decimal_ops.cpp"
exec "$work/test_decimal_ops"
