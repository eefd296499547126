#!/usr/bin/env python3
# Owns: the expected output of tests/e2e/wide_total_near.logic, computed here
# from its data (tests/e2e/data/fg_big.tbl) with Python's integers, never
# stored: twice[g] = 2 * (s * s * 3), s the total of group g (id % 2), in
# millionths, decimal multiplication rounding half away from zero.
# usage: wide_total_near.ref.py DATA_DIR
import os
import sys

from decimal_ref import millionths, mul, text as decimal_text

tot = {}
with open(os.path.join(sys.argv[1], "fg_big.tbl")) as f:
    for line in f:
        fields = line.rstrip("\n").split("|")
        if len(fields) < 2 or not fields[0]:
            continue
        g = int(fields[0]) % 2
        tot[g] = tot.get(g, 0) + millionths(fields[1])
print("g|z")
for g in sorted(tot):
    v = mul(mul(tot[g], tot[g]), 3 * 10**6)
    print("%d|%s" % (g, decimal_text(2 * v)))
