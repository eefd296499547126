#!/usr/bin/env python3
# Owns: the expected output of tests/e2e/fused_groups_big.logic, computed
# here from its data (tests/e2e/data/fg_big.tbl) with Python's integers,
# never stored: by_four(g, n, t), g = (id % 8) / 2, n the rows of g, t the
# exact total of their amounts (beyond decimal's 64 bits), as `redfox run
# --format tbl` prints a lone output. usage: fused_groups_big.ref.py DATA_DIR
import os
import sys

from decimal_ref import millionths, text as decimal_text

groups = {}
with open(os.path.join(sys.argv[1], "fg_big.tbl")) as f:
    for line in f:
        fields = line.rstrip("\n").split("|")
        if len(fields) < 2 or not fields[0]:
            continue
        g = (int(fields[0]) % 8) // 2
        n, t = groups.get(g, (0, 0))
        groups[g] = (n + 1, t + millionths(fields[1]))
print("g|n|t")
for g in sorted(groups):
    n, t = groups[g]
    print("%d|%d|%s" % (g, n, decimal_text(t)))
