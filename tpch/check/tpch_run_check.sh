#!/bin/sh
# tpch/check/tpch_run_check.sh: one TPC-H query at SF 0.01 through
# `redfox tpch run --check`, for ctest; exits 77 (skipped) when the shared
# folder with the reference data and the answers is absent.
# Usage: tpch_run_check.sh REDFOX SHARED_TPCH_DIR QUERY_NUMBER
redfox=$1 shared=$2 q=$3
data=$shared/reference/sf0.01
answers=$shared/answers/sf0.01
if [ ! -f "$data/lineitem.tbl" ] || [ ! -f "$answers/q$q.csv" ]; then
  echo "skipped: no reference data or answers under $shared"
  exit 77
fi
exec "$redfox" tpch run --data "$data" --queries "$q" --device cpu --check "$answers"
