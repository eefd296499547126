#!/bin/sh
# one-off: GPU baseline profile at SF 10 and SF 1 (not committed)
B=build-gpu; R=$B/tools/redfox; D=/tmp/d; mkdir -p $D
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee $OUT/gpu.txt
( time $R tpch gen --sf 10 --out $D/sf10 --jobs 16 ) 2>&1 | tail -3
( time $R tpch gen --sf 1 --out $D/sf1 --jobs 16 ) 2>&1 | tail -3
$R tpch run --data $D/sf1 --device gpu --repeat 5 --out $D/o1 > $OUT/sf1-run.txt 2> $OUT/sf1-prof.txt
tail -25 $OUT/sf1-run.txt
$R tpch run --data $D/sf10 --device gpu --repeat 3 --profile --out $D/o10 > $OUT/sf10-run.txt 2> $OUT/sf10-prof.txt
tail -25 $OUT/sf10-run.txt
$R tpch run --data $D/sf10 --device cpu --queries 1,9,18,21 --out $D/c10 > /dev/null 2>&1
for q in 01 09 18 21; do cmp $D/o10/q$q.csv $D/c10/q$q.csv && echo "q$q same"; done
