#!/bin/sh
# tests/run_settings.sh REDFOX TESTS_DIR: the tuning settings (--set
# NAME=VALUE, runtime/rf_rt_tuning.h): listed in --help with their defaults,
# refused with exit 2 when unknown or of the wrong kind, and in effect: the
# emulated GPU walks the runs of an ordered column from gpu_runs_min rows on
# and checks a build side's order from gpu_ordered_min rows on.
r=$1
t=$2
tmp=${TMPDIR:-/tmp}/rf_settings.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # expected-status description command...
    want=$1; what=$2; shift 2
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/err"; fail=1
    fi
}
prog=$t/e2e/unique_runs_rec.logic
data=$t/e2e/data
for cmd in "run" "tpch run" "tpch bench"; do
    # shellcheck disable=SC2086
    "$r" $cmd --help >"$tmp/help" 2>&1
    for s in "gpu_runs_min (default 65536)" "gpu_ordered_min (default 65536)" "hugepages (default on)" "--set NAME=VALUE" \
             "gpu_memory (default off)" "--gpu-memory N"; do
        grep -qF -- "$s" "$tmp/help" || { echo "FAIL: $cmd --help lacks: $s"; fail=1; }
    done
done
# an option a command takes is in its --help: exec took --gpu-memory,
# --cache-dir and --no-cache, unlisted (and ignored --gpu-memory)
for cmd in compile run import exec dump "tpch gen" "tpch run" "tpch bench"; do
    # shellcheck disable=SC2086
    "$r" $cmd --help >"$tmp/help" 2>&1
    for opt in --set --gpu-memory --cache-dir --no-cache; do
        # shellcheck disable=SC2086
        "$r" $cmd "$opt" >"$tmp/out" 2>"$tmp/err"
        grep -q "unknown option '$opt'" "$tmp/err" && continue
        grep -q -- "$opt" "$tmp/help" || { echo "FAIL: $cmd takes $opt, but its --help does not list it"; fail=1; }
    done
done
check 2 "unknown setting" "$r" run "$prog" --data "$data" --device cpu --set nope=1
grep -q "unknown setting 'nope'" "$tmp/err" || { echo "FAIL: unknown setting: no message"; cat "$tmp/err"; fail=1; }
[ "$(grep -c "see .*--help" "$tmp/err")" -eq 1 ] || { echo "FAIL: unknown setting: the hint to --help not once"; cat "$tmp/err"; fail=1; }
check 2 "a count expected" "$r" run "$prog" --data "$data" --device cpu --set gpu_runs_min=many
grep -q "gpu_runs_min takes a count of rows or off, not 'many'" "$tmp/err" || { echo "FAIL: bad count: no message"; fail=1; }
# cpu_part_pairs: a count of 1 or more, auto (its default) or off; 0 would be parts of no pairs
check 2 "cpu_part_pairs=0" "$r" run "$prog" --data "$data" --device cpu --set cpu_part_pairs=0
grep -q "cpu_part_pairs takes a count of rows (1 or more), auto or off, not '0'" "$tmp/err" ||
    { echo "FAIL: cpu_part_pairs=0: no message"; cat "$tmp/err"; fail=1; }
for v in auto off 1 131072; do
    "$r" run "$prog" --data "$data" --device cpu --set cpu_part_pairs=$v >/dev/null 2>"$tmp/err" ||
        { echo "FAIL: cpu_part_pairs=$v refused"; cat "$tmp/err"; fail=1; }
done
"$r" run --help | grep -q "cpu_part_pairs (default auto)" || { echo "FAIL: run --help: cpu_part_pairs's default is not auto"; fail=1; }
check 2 "on or off expected" "$r" run "$prog" --data "$data" --device cpu --set hugepages=maybe
check 2 "no value" "$r" run "$prog" --data "$data" --device cpu --set gpu_runs_min
check 2 "set without an argument" "$r" run "$prog" --data "$data" --device cpu --set
# an empty value names no file: refused before the run, never an error after it
for opt in --out --trace --cache-dir --data; do
    check 2 "$opt ''" "$r" run "$prog" --data "$data" --device cpu "$opt" ""
    grep -q -- "$opt needs a value, not an empty one" "$tmp/err" || { echo "FAIL: $opt '': no message"; cat "$tmp/err"; fail=1; }
done
check 2 "compile -o ''" "$r" compile "$prog" -o ""
grep -q -- "-o needs a value, not an empty one" "$tmp/err" || { echo "FAIL: compile -o '': no message"; cat "$tmp/err"; fail=1; }
check 2 "tpch run: unknown setting" "$r" tpch run --data "$tmp" --set nope=1
check 2 "tpch bench: unknown setting" "$r" tpch bench --data "$tmp" --sf 1 --set nope=1
# the GPU memory cap: bytes with a K, M, G or T suffix (--gpu-memory N, gpu_memory=N)
for bad in 0 -1 12X 1.5G M 99999999999999999999 8T1; do
    check 2 "gpu_memory=$bad refused" "$r" run "$prog" --data "$data" --device cpu --set "gpu_memory=$bad"
    grep -q "gpu_memory takes a size in bytes" "$tmp/err" || { echo "FAIL: gpu_memory=$bad: no message"; cat "$tmp/err"; fail=1; }
    check 2 "--gpu-memory $bad refused" "$r" run "$prog" --data "$data" --device cpu --gpu-memory "$bad"
    grep -q "^redfox run: --gpu-memory: gpu_memory takes a size" "$tmp/err" || { echo "FAIL: --gpu-memory $bad: no message"; cat "$tmp/err"; fail=1; }
done
# the ranks' limit: 1 second or more, or off. 0 is no wait at all, never
# "no limit" (it was taken as off, and a hung rank hung the run for ever);
# a number too big to read is refused, not taken as off either
for bad in 0 00 -1 1.5 5s 99999999999999999999 " 5"; do
    check 2 "rank_timeout_s=$bad refused" "$r" run "$prog" --data "$data" --device cpu --set "rank_timeout_s=$bad"
    grep -q "rank_timeout_s takes a number of seconds (1 or more) or off, not '$bad'" "$tmp/err" ||
        { echo "FAIL: rank_timeout_s=$bad: no message"; cat "$tmp/err"; fail=1; }
done
check 2 "gpu_runs_min=99999999999999999999 refused" "$r" run "$prog" --data "$data" --device cpu \
    --set gpu_runs_min=99999999999999999999
for good in 1 60 9223372036854775806 off; do
    check 0 "rank_timeout_s=$good" "$r" run "$prog" --data "$data" --device cpu --set "rank_timeout_s=$good"
done
check 2 "--gpu-memory without a value" "$r" run "$prog" --data "$data" --device cpu --gpu-memory
check 2 "tpch run: bad --gpu-memory" "$r" tpch run --data "$tmp" --gpu-memory 1Q
for good in 4096 64K 64k 512M 512MB 1G 2T off; do
    check 0 "--gpu-memory $good" "$r" run "$prog" --data "$data" --device cpu --gpu-memory "$good"
done
# in effect (emulated GPU): the profile names the cap, in bytes
RF_GPU_EMULATE=1 "$r" run "$prog" --data "$data" --device gpu --format csv --profile --gpu-memory 3M >"$tmp/out" 2>"$tmp/err"
grep -q "^gpu memory cap: 3145728 bytes" "$tmp/err" || { echo "FAIL: --gpu-memory 3M: not in the profile"; cat "$tmp/err"; fail=1; }
RF_GPU_EMULATE=1 "$r" run "$prog" --data "$data" --device gpu --format csv --profile --set gpu_memory=1k >"$tmp/out" 2>"$tmp/err"
grep -q "out of GPU memory: .*\(of the 1 KiB cap (--gpu-memory)\|cap (--gpu-memory) of 1024 bytes\).*: running on the CPU instead" "$tmp/err" ||
    { echo "FAIL: gpu_memory=1k: no warning naming the cap"; cat "$tmp/err"; fail=1; }
# exec: --gpu-memory N is the cap of every run of the transaction, as
# --set gpu_memory=N is (it was taken and ignored); the last one given wins
mkdir -p "$tmp/x"
printf '1|2\n2|3\n3|4\n' >"$tmp/x/edge.tbl"
printf 'edge(a, b) -> int(a), int(b).\nlang:input[`edge] = "edge.tbl".\npath(a, b) <- edge(a, b).\npath(a, c) <- path(a, b), edge(b, c).\nlang:output[`path] = "path".\n' >"$tmp/x/tc.logic"
check 0 "exec: import" "$r" import "$tmp/x/tc.logic" --data "$tmp/x" --out "$tmp/x/db"
printf '+edge(4, 5).\n' >"$tmp/x/b1.txn"
printf -- '-edge(1, 2).\n' >"$tmp/x/b2.txn"
RF_GPU_EMULATE=1 "$r" exec "$tmp/x/db" "$tmp/x/tc.logic" --device gpu --format csv --profile-kernels --gpu-memory 3M \
    --batch "$tmp/x/b1.txn" >"$tmp/out" 2>"$tmp/err"
grep -q "^gpu memory cap: 3145728 bytes" "$tmp/err" || { echo "FAIL: exec --gpu-memory 3M: not in the profile"; cat "$tmp/err"; fail=1; }
RF_GPU_EMULATE=1 "$r" exec "$tmp/x/db" "$tmp/x/tc.logic" --device gpu --format csv --profile-kernels --gpu-memory 3M \
    --set gpu_memory=off --batch "$tmp/x/b2.txn" >"$tmp/out" 2>"$tmp/err"
if grep -q "^gpu memory cap" "$tmp/err"; then echo "FAIL: exec --gpu-memory 3M --set gpu_memory=off: capped"; fail=1; fi
# hugepages=off: same outputs
"$r" run "$prog" --data "$data" --device cpu --format csv >"$tmp/a" 2>&1
check 0 "hugepages=off runs" "$r" run "$prog" --data "$data" --device cpu --format csv --set hugepages=off
cmp -s "$tmp/a" "$tmp/out" || { echo "FAIL: hugepages=off changed the output"; fail=1; }
# in effect on the (emulated) GPU: the device operations show the walk
ops() { # count of launches of kernels matching $1 under settings $2...
    pat=$1; shift
    RF_GPU_EMULATE=1 "$r" run "$@" --device gpu --format csv --set gpu_trace=on 2>"$tmp/trace" >"$tmp/gout" || {
        echo "FAIL: emulated run $*"; cat "$tmp/trace"; fail=1; }
    grep -c "$pat" "$tmp/trace"
}
if [ "$(ops runs_first "$prog" --data "$data")" -ne 0 ]; then echo "FAIL: the walk ran below gpu_runs_min"; fail=1; fi
if [ "$(ops runs_first "$prog" --data "$data" --set gpu_runs_min=1)" -eq 0 ]; then echo "FAIL: gpu_runs_min=1: no walk"; fail=1; fi
cmp -s "$tmp/a" "$tmp/gout" || { echo "FAIL: gpu_runs_min=1 changed the output"; fail=1; }
jprog=$t/e2e/join_ordered.logic
if [ "$(ops join_range "$jprog" --data "$data")" -ne 0 ]; then echo "FAIL: an ordered build below gpu_ordered_min"; fail=1; fi
if [ "$(ops join_range "$jprog" --data "$data" --set gpu_ordered_min=0)" -eq 0 ]; then echo "FAIL: gpu_ordered_min=0: no ordered build"; fail=1; fi
if [ "$(ops join_range "$jprog" --data "$data" --set gpu_ordered_min=off --set gpu_runs_min=off)" -ne 0 ]; then
    echo "FAIL: gpu_ordered_min=off: an ordered build"; fail=1
fi
exit $fail
