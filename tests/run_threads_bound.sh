#!/bin/sh
# tests/run_threads_bound.sh REDFOX QUICKSTART_DIR: --threads N is bounded
# alike for every command that takes it (run, exec, import, tpch run, tpch
# bench): 1 to 1024, the library's bound too; 0, 1025, 100000 and a word are
# a usage error (exit 2) naming the option, the value and the bound. Within
# it, N above four times the online CPUs and above 64 runs (the same
# answer) with a note on stderr that the threads take turns on the CPUs
# (before: 1024 threads on 2 CPUs ran silently 100 times slower); N at most
# that says nothing.
set -u
r=$1
q=$2
tmp=${TMPDIR:-/tmp}/rf_threads_bound.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
for v in 0 1025 100000 many; do
    for c in "run $q/reach.logic --data $q" "exec $tmp/db $q/reach.logic" "import $q/reach.logic --data $q --out $tmp/i" \
             "tpch run --data $tmp" "tpch bench --data $tmp"; do
        # shellcheck disable=SC2086
        "$r" $c --threads $v >/dev/null 2>"$tmp/err"
        rc=$?
        name=${c%% *}
        case $c in tpch*) name="tpch $(echo "$c" | cut -d' ' -f2)" ;; esac
        [ $rc -eq 2 ] || fail "$name --threads $v: exit $rc, expected 2"
        grep -qxF "redfox $name: --threads '$v': a number from 1 to 1024 (default: one a CPU, $cpus online here)" "$tmp/err" ||
            { fail "$name --threads $v: not the message"; cat "$tmp/err"; }
    done
done
# n: threads; note: 1 when the note is expected
check_run() {
    "$r" run "$q/reach.logic" --data "$q" --device cpu --threads "$1" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { fail "run --threads $1: exit $rc"; cat "$tmp/err"; }
    cmp -s "$tmp/out" "$q/destinations.expected" || fail "run --threads $1: not the expected rows"
    if [ "$2" = 1 ]; then
        grep -qxF "redfox run: note: --threads $1 is over four times the $cpus CPUs online here: the threads take turns on them, slower than one a CPU (the default)" "$tmp/err" ||
            { fail "run --threads $1: no note"; cat "$tmp/err"; }
    else
        ! grep -q "note: --threads" "$tmp/err" || { fail "run --threads $1: a note"; cat "$tmp/err"; }
    fi
}
check_run 1 0
check_run 2 0
check_run 64 0
if [ $((4 * cpus)) -lt 1024 ]; then
    check_run 1024 1
    n=$((4 * cpus + 1))
    [ $n -gt 64 ] || n=65
    check_run $n 1
else
    echo "($cpus CPUs: 1024 threads are not over four times them; the note not checked)"
fi
[ $fails -eq 0 ] && echo PASS
[ $fails -eq 0 ]
