#!/bin/sh
# bench/compile/many_rules.sh N OUT.logic: a program of 3 x N rules with GPU
# kernels of their own (N filters, N joins with a string lookup, N counts over
# a recursive closure, each an output), the shape tests/run_nvrtc_units.sh
# checks, for timing `redfox compile --no-cache` of large programs:
#     sh bench/compile/many_rules.sh 300 /tmp/m300.logic
#     /usr/bin/time -f '%e s %M KB' redfox compile /tmp/m300.logic -o /tmp/m.rfx --no-cache
set -eu
n=$1
{
    printf 'e(x, y) -> int(x), int(y).\nname(x, s) -> int(x), string(s).\n'
    i=1
    while [ $i -le 12 ]; do
        printf 'e(%d, %d). e(%d, %d). name(%d, "n%d").\n' $i $((i % 12 + 1)) $i $(((i * 5) % 12 + 1)) $i $i
        i=$((i + 1))
    done
    printf 'path(x, y) <- e(x, y).\npath(x, z) <- path(x, y), e(y, z).\n'
    i=0
    while [ $i -lt "$n" ]; do
        printf 'f%d(x, y) <- e(x, y), x < %d, y != %d.\n' $i $i $((i + 1))
        printf 'j%d(x, s) <- e(x, y), name(y, s), x + y > %d.\n' $i $i
        printf 'c%d[x] = n <- agg<<n = count()>> path(x, y), y > %d.\n' $i $i
        printf 'lang:output[`f%d] = "f%d".\nlang:output[`j%d] = "j%d".\nlang:output[`c%d] = "c%d".\n' \
            $i $i $i $i $i $i
        i=$((i + 1))
    done
} >"$2"
