#!/bin/sh
# tests/run_repeated_options.sh REDFOX EXAMPLE_DIR TPCH_GEN_CLI: a
# single-valued option given twice with different values is a usage error
# (exit 2) naming the option and both values, for every command (one
# parser, tools/options.c); it was the last one winning silently (run
# --device cpu --device gpu ran on the GPU). The same value twice, in either
# spelling (--x v, --x=v), is accepted; --set and exec --batch stay lists.
set -u
r=$1
ex=$2
gen=$3
tmp=${TMPDIR:-/tmp}/rf_repopt.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
if command -v timeout >/dev/null 2>&1; then to="timeout 120"; else to=; fi
# refused CMD OPTION V1 V2 ARGS...: exit 2, one line naming OPTION, V1 and V2
refused() {
    cmd=$1 opt=$2 v1=$3 v2=$4
    shift 4
    (cd "$tmp" && $to "$@") >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 2 ] || { no "$*: exit $rc, not 2"; cat "$tmp/err"; return; }
    grep -qxF -- "redfox $cmd: $opt given twice with different values, '$v1' and '$v2': give it once" "$tmp/err" ||
        { no "$*: not the message naming $opt, $v1 and $v2"; cat "$tmp/err"; }
    [ ! -s "$tmp/out" ] || no "$*: something printed on standard output"
}
cp "$ex/reach.logic" "$ex/flights.csv" "$tmp/"
refused run --device cpu gpu "$r" run reach.logic --device cpu --device gpu
refused run --device gpu cpu "$r" run reach.logic --device=gpu --format csv --device cpu
refused run --format csv table "$r" run reach.logic --format csv --format=table
refused run --data . .. "$r" run reach.logic --data . --data ..
refused run --threads 1 2 "$r" run reach.logic --threads 1 --threads 2
refused run --cache-dir a b "$r" run reach.logic --cache-dir a --cache-dir b
refused compile -o a.rfx b.rfx "$r" compile reach.logic -o a.rfx -o b.rfx
[ -e "$tmp/a.rfx" ] || [ -e "$tmp/b.rfx" ] && no "compile -o twice: a file written"
refused dump --format text yaml "$r" dump --plan reach.logic --format text --format yaml
refused "tpch gen" --sf 0.001 0.002 "$r" tpch gen --sf 0.001 --sf 0.002 --out g
refused "tpch gen" --out g h "$gen" --sf 0.001 --out g --out=h
[ -e "$tmp/g" ] || [ -e "$tmp/h" ] && no "tpch gen --out twice: a folder written"
refused "tpch run" --device cpu gpu "$r" tpch run --data . --device cpu --device gpu
refused import --out db1 db2 "$r" import reach.logic --out db1 --out db2
refused exec --device cpu gpu "$r" exec db reach.logic --device cpu --device gpu
# the same value twice, either spelling: the run as with it once
(cd "$tmp" && $to "$r" run reach.logic --device cpu --format csv) >"$tmp/ref" 2>"$tmp/err" ||
    { no "run once: exit $?"; cat "$tmp/err"; }
(cd "$tmp" && $to "$r" run reach.logic --device cpu --device=cpu --format csv --format csv) >"$tmp/out" 2>"$tmp/err" ||
    { no "the same value twice: exit $?"; cat "$tmp/err"; }
cmp -s "$tmp/ref" "$tmp/out" || no "the same value twice: another answer"
# --set is a list: two settings are both taken
(cd "$tmp" && $to "$r" run reach.logic --device cpu --format csv --set hugepages=off --set cpu_part_pairs=off) \
    >"$tmp/out" 2>"$tmp/err" || { no "--set twice: exit $?"; cat "$tmp/err"; }
cmp -s "$tmp/ref" "$tmp/out" || no "--set twice: another answer"
# exec --batch is a list: two batches are applied in order
cat >"$tmp/p.logic" <<'L'
e(x) -> int(x).
lang:input[`e] = "e.csv".
lang:output[`e] = "e".
L
echo 5 >"$tmp/e.csv"
(cd "$tmp" && $to "$r" import p.logic --data . --out db) >"$tmp/out" 2>"$tmp/err" || { no "import: exit $?"; cat "$tmp/err"; }
printf '+e(1).\n' >"$tmp/b1"
printf '+e(2).\n' >"$tmp/b2"
(cd "$tmp" && $to "$r" exec db p.logic --batch b1 --batch b2 --format csv) >"$tmp/out" 2>"$tmp/err" ||
    { no "exec --batch twice: exit $?"; cat "$tmp/err"; }
grep -qx 2 "$tmp/out" && grep -qx 1 "$tmp/out" && grep -qx 5 "$tmp/out" || { no "exec --batch twice: not both batches applied"; cat "$tmp/out"; }
[ $fail = 0 ] && echo "options given twice: a usage error where the values differ, lists kept"
exit $fail
