#!/bin/sh
# tests/run_fixpoint.sh REDFOX TESTS_DIR: recursion without a default round
# limit, --max-iterations and its error, and progress on a terminal, on the
# CPU and the GPU emulator.
set -u
r=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
t=$2/fixpoint
tmp=${TMPDIR:-/tmp}/rf_fixpoint.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

# A counter to 1,000,001: more rounds than the old default cap, on the CPU.
sed 's/LIMIT/1000001/' "$t/counter.logic" >"$tmp/million.logic"
start=$(date +%s)
"$r" run "$tmp/million.logic" --device cpu --format csv >"$tmp/out" 2>"$tmp/err" || no "counter to 1000001: exit $?"
end=$(date +%s)
# one row: count 1000002, max 1000001 (whatever the separator)
grep -q '^1000002[^0-9]1000001$' "$tmp/out" || { no "counter to 1000001: wrong output"; cat "$tmp/out"; }
# not a terminal: no progress, nothing on stderr at all
[ -s "$tmp/err" ] && { no "counter to 1000001: stderr not empty"; cat "$tmp/err"; }
echo "counter to 1000001 on the CPU: $((end - start)) s"

# The GPU emulator runs a round far slower: a counter to 1,001 there.
sed 's/LIMIT/1001/' "$t/counter.logic" >"$tmp/thousand.logic"
RF_GPU_EMULATE=1 "$r" run "$tmp/thousand.logic" --device gpu --format csv >"$tmp/out" 2>"$tmp/err" ||
    { no "emulated counter to 1001: exit $?"; cat "$tmp/err"; }
grep -q '^1002[^0-9]1001$' "$tmp/out" || { no "emulated counter to 1001: wrong output"; cat "$tmp/out"; }

# --max-iterations: the error names the stratum's predicates and their sizes,
# the same on the CPU and the emulator
want='diverge2.logic: error: the recursion of `a` (26 tuples), `b` (25 tuples) did not converge within 50 iterations: its last round derived 1 new tuple (raise --max-iterations'
for dev in cpu emu; do
    if [ $dev = emu ]; then env="RF_GPU_EMULATE=1"; flag="--device gpu"; else env="RF_NONE=1"; flag="--device cpu"; fi
    # shellcheck disable=SC2086
    (cd "$t" && env $env "$r" run diverge2.logic $flag --max-iterations 50 >/dev/null 2>"$tmp/err")
    rc=$?
    [ $rc -eq 1 ] || no "--max-iterations 50 ($dev): exit $rc, expected 1"
    grep -qF -- "$want" "$tmp/err" || { no "--max-iterations 50 ($dev): the error lacks: $want"; cat "$tmp/err"; }
done
# a negated conjunction's helper predicate is the compiler's: the error names `p` only
for dev in cpu emu; do
    if [ $dev = emu ]; then env="RF_GPU_EMULATE=1"; flag="--device gpu"; else env="RF_NONE=1"; flag="--device cpu"; fi
    # shellcheck disable=SC2086
    (cd "$t" && env $env "$r" run diverge_negated.logic $flag --max-iterations 5 >/dev/null 2>"$tmp/err")
    grep -qF -- 'the recursion of `p` (6 tuples) did not converge within 5 iterations' "$tmp/err" ||
        { no "diverge_negated ($dev): the error does not name p alone"; cat "$tmp/err"; }
done
# the bound is a bound on rounds: 1001 rounds pass --max-iterations 1002
sed 's/LIMIT/1000/' "$t/counter.logic" >"$tmp/k.logic"
"$r" run "$tmp/k.logic" --device cpu --max-iterations 1002 >/dev/null 2>&1 || no "counter to 1000 under --max-iterations 1002"
"$r" run "$tmp/k.logic" --device cpu --max-iterations 1000 >/dev/null 2>&1 && no "counter to 1000 under --max-iterations 1000 passed"

# On a terminal (script(1) gives one), a fixpoint longer than a second shows
# its round and its predicates' sizes, redrawn in place and cleared at the end.
if command -v script >/dev/null 2>&1; then
    start=$(date +%s)
    script -qc "RF_GPU_EMULATE=1 '$r' run '$tmp/thousand.logic' --device gpu --format csv" /dev/null >"$tmp/tty" 2>&1
    end=$(date +%s)
    if [ $((end - start)) -ge 3 ]; then
        grep -q 'redfox: fixpoint round [0-9]* ([0-9]* s): n [0-9]* tuples' "$tmp/tty" ||
            { no "no progress on a terminal after $((end - start)) s"; od -c "$tmp/tty" | head; }
        # cleared: the erase sequence comes after the last report
        tr '\r' '\n' <"$tmp/tty" | grep -q "^$(printf '\033')\[K" || no "the progress line was not cleared"
    else
        echo "note: the emulated counter ran in $((end - start)) s; progress not checked"
    fi
    tr '\r' '\n' <"$tmp/tty" | grep -q '^1002[^0-9]1001$' || { no "progress run: wrong output"; cat "$tmp/tty"; }
else
    echo "note: no script(1); progress on a terminal not checked"
fi
exit $fail
