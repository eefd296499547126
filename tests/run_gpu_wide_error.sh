#!/bin/sh
# tests/run_gpu_wide_error.sh REDFOX: the GPU backend's refusal of a
# relation of more than 64 columns (emulated GPU) names where the relation
# comes from, as other errors do: the rule that derives it, or, for an
# input, the first rule that reads it, as FILE:LINE:COL; before, it named
# the program file alone. The lines are found here in the program's text.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_gpu_wide_error.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# e: an input of 65 int columns; q reads it (one column); w derives 65
awk 'BEGIN {
    for (i = 0; i < 65; i++) { v = v (i ? ", " : "") "c" i; t = t (i ? ", " : "") "int(c" i ")" }
    print "e(" v ") -> " t "."
    print "lang:input[`e] = \"e.csv\"."
    print "lang:input:delimiter[`e] = \",\"."
    print "// the first rule that reads e"
    print "q(c0) <- e(" v "), c1 > 0."
    print "lang:output[`q] = \"q\"."
}' >"$tmp/in.logic"
awk 'BEGIN {
    for (i = 0; i < 65; i++) { v = v (i ? ", " : "") "c" i; t = t (i ? ", " : "") "int(c" i ")" }
    print "s(c0) -> int(c0)."
    print "lang:input[`s] = \"s.csv\"."
    for (i = 1; i < 65; i++) b = b ", c" i " = c0 + " i
    print "  w(" v ") <- s(c0)" b "."
    print "lang:output[`w] = \"w\"."
}' >"$tmp/derived.logic"
awk 'BEGIN { for (i = 0; i < 65; i++) printf "%s%d", (i ? "," : ""), i; print "" }' >"$tmp/e.csv"
echo 1 >"$tmp/s.csv"
check() { # PROG PRED PATTERN: the line of PATTERN in PROG, its first non-blank column
    line=$(grep -n -- "$3" "$1" | head -n 1 | cut -d: -f1)
    col=$(sed -n "${line}p" "$1" | awk '{ match($0, /[^ ]/); print RSTART }')
    want="$1:$line:$col: error: the GPU backend takes relations of at most 64 columns; \`$2\` has 65 (use --device cpu)"
    RF_GPU_EMULATE=1 timeout 120 "$redfox" run "$1" --data "$tmp" --device gpu >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "$2: exit $rc, expected 1"
    grep -qxF -- "$want" "$tmp/err" || { fail "$2: not the message: $want"; cat "$tmp/err"; }
    # the CPU takes it
    timeout 120 "$redfox" run "$1" --data "$tmp" --device cpu >/dev/null 2>"$tmp/err" || { fail "$2: the CPU refused"; cat "$tmp/err"; }
}
check "$tmp/in.logic" e "^q(c0) <-"
check "$tmp/derived.logic" w "w(c0, "
[ $fails -eq 0 ] || exit 1
echo "PASS"
