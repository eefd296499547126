#!/bin/sh
# skeletons/cuda/test_decimal_ops.sh: builds test_decimal_ops.cpp with the
# emulator's C++ compiler ($RF_GPU_EMU_CXX or c++) and runs it; 77 (skipped)
# where there is no C++ compiler.
# The wide decimal's helpers are checked against common/rf_value.c itself:
# COMMONDIR its headers, VALUELIB and COMMONLIB its built libraries.
# SANFLAGS: the sanitizer flags those libraries were built with ("" for
# none), which the test must be compiled and linked with too.
# usage: test_decimal_ops.sh SRCDIR WORKDIR COMMONDIR VALUELIB COMMONLIB [SANFLAGS]
set -eu
src=$1
work=$2
common=$3
valuelib=$4
commonlib=$5
sanflags=${6:-}
cxx=${RF_GPU_EMU_CXX:-c++}
command -v "$cxx" >/dev/null 2>&1 || { echo "no C++ compiler ($cxx): skipped"; exit 77; }
mkdir -p "$work"
# shellcheck disable=SC2086 # (several flags)
"$cxx" -std=c++17 -O2 -w $sanflags -I"$src" -I"$common" -o "$work/test_decimal_ops" "$src/test_decimal_ops.cpp" \
    "$valuelib" "$commonlib" -lm -lpthread
exec "$work/test_decimal_ops"
