#!/usr/bin/env python3
# Owns: the expected output of tests/e2e/wide_total_near.logic, computed here
# from its data (tests/e2e/data/fg_big.tbl) with Python's integers, never
# stored: twice[g] = 2 * (s * s * 3), s the total of group g (id % 2), in
# millionths, decimal multiplication rounding half away from zero.
# usage: wide_total_near.ref.py DATA_DIR
import os
import sys

def millionths(text):
    sign = -1 if text.startswith("-") else 1
    whole, _, frac = text.lstrip("+-").partition(".")
    return sign * (int(whole or "0") * 10**6 + int((frac + "000000")[:6]))

def mul(a, b):  # millionths times millionths, rounded half away from zero
    p = a * b
    q, r = divmod(abs(p), 10**6)
    if 2 * r >= 10**6:
        q += 1
    return q if p >= 0 else -q

def decimal_text(m):
    sign = "-" if m < 0 else ""
    whole, frac = divmod(abs(m), 10**6)
    f = ("%06d" % frac).rstrip("0")
    return "%s%d.%s" % (sign, whole, f.ljust(2, "0"))

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
