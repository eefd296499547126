#!/usr/bin/env python3
# Owns: the expected output of tests/e2e/wide_topk.logic, computed here with
# Python's integers (millionths; decimal products round half away from zero),
# never stored. usage: wide_topk.ref.py DATA_DIR (unused: the program makes
# its own rows)
from decimal_ref import M, mul, text

rows = []
for x in range(20000):
    t = mul(x * M, 400000000250000)
    w = mul(mul(t, t), ((x % 3) - 1) * M) + (x % 7) * M
    rows.append((w, x))
print("top (10 rows)")
print("w|x")
for w, x in sorted(rows, key=lambda r: (-r[0], r[1]))[:10]:
    print("%s|%d" % (text(w), x))
print()
print("bottom (10 rows)")
print("w|x")
for w, x in sorted(rows)[:10]:
    print("%s|%d" % (text(w), x))
