#!/bin/sh
# tpch/check/tpch_sf01_check.sh: generates TPC-H at SF 0.1 with redfox's own
# generator (byte-identical to dbgen) and checks all 22 queries against the
# SF 0.1 answers; exits 77 (skipped) when the shared answers are absent.
# Usage: tpch_sf01_check.sh REDFOX SHARED_TPCH_DIR WORK_DIR
redfox=$1 shared=$2 work=$3
answers=$shared/answers/sf0.1
if [ ! -f "$answers/q01.csv" ]; then
  echo "skipped: no answers under $answers"
  exit 77
fi
"$redfox" tpch gen --sf 0.1 --out "$work/tpch-sf0.1" || exit 1
exec "$redfox" tpch run --data "$work/tpch-sf0.1" --device cpu --check "$answers"
