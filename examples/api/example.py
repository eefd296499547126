"""examples/api/example.py: redfox from Python (import redfox).

Transitive closure over edges given from memory, then, when given a TPC-H
data folder and query files, a TPC-H query over that folder; prints each
output as CSV, as `redfox run --format csv` does.

    python3 example.py examples/api [DATA_DIR SCHEMA.logic QUERY.logic]
"""
import os
import sys

import redfox

api_dir = sys.argv[1]
# 1. Transitive closure: the rows of edge.csv, given from memory.
tc = redfox.compile_files(os.path.join(api_dir, "tc.logic"))
with redfox.Database() as mem:
    mem.put("edge", [(1, 2), (2, 3), (3, 4), (4, 2), (5, 6)], ["int", "int"])
    reach = mem.run(tc, device="cpu")["reach"]
    print(",".join(reach.columns))
    for a, b in reach.rows():
        print("%d,%d" % (a, b))

# 2. A TPC-H query over a folder of .tbl files, each output as CSV text.
if len(sys.argv) == 5:
    query = redfox.compile_files(sys.argv[3], sys.argv[4])
    with redfox.Database(sys.argv[2]) as db:
        for rel in db.run(query, device="cpu"):
            sys.stdout.write("\n" + rel.text("csv"))
