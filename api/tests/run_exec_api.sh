#!/bin/sh
# api/tests/run_exec_api.sh REDFOX TEST_API_EXEC MODE: a redfox database made
# by `redfox import` (a graph of string nodes and a functional weight), then
# test_api_exec's transactions through the library on it (MODE cpu: on the
# CPU; emu: on the GPU emulator).
set -eu
redfox=$1 test=$2 mode=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/data" "$tmp/work"
cat > "$tmp/prog.logic" <<'P'
// transactions through the API: a closure over string nodes, and a join with
// a functional predicate's values behind a comparison
edge(src, dst) -> string(src), string(dst).
lang:input[`edge] = "edge.csv".
lang:input:delimiter[`edge] = ",".
weight[n] = w -> string(n), int(w).
lang:input[`weight] = "weight.csv".
lang:input:delimiter[`weight] = ",".
path(x, y) <- edge(x, y).
path(x, z) <- path(x, y), edge(y, z).
heavy(x, y) <- path(x, y), weight[y] = w, w > 10.
lang:output[`path] = "path".
lang:output[`heavy] = "heavy".
P
printf 'a,b\nb,c\n' > "$tmp/data/edge.csv"
printf 'a,5\nb,20\nc,30\n' > "$tmp/data/weight.csv"
"$redfox" import "$tmp/prog.logic" --data "$tmp/data" --out "$tmp/db" > /dev/null
dev=cpu
if [ "$mode" = emu ]; then
    export RF_GPU_EMULATE=1
    dev=gpu
fi
"$test" "$tmp/db" "$tmp/prog.logic" "$dev" "$tmp/work"
