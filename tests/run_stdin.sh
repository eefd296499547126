#!/bin/sh
# tests/run_stdin.sh REDFOX TESTS_DIR: programs from standard input ('-'),
# /dev/stdin, pipes and FIFOs for run, compile and dump; the warnings for an
# empty program and one without lang:output; a clash of two facts at the
# second; a data file that is a FIFO read by two inputs (other types) is
# read once, not waited on a second time.
set -u
r=$1
t=$2
tmp=${TMPDIR:-/tmp}/rf_stdin.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
prog='p(x) -> int(x).
p(1). p(2).
q(y) <- p(x), y = x * 10.
lang:output[`q] = "q".'
# run: '-' and /dev/stdin give the program's answer
for src in - /dev/stdin; do
    out=$(printf '%s\n' "$prog" | "$r" run "$src" --device cpu --format csv 2>"$tmp/err")
    rc=$?
    [ $rc -eq 0 ] || { no "run $src: exit $rc"; cat "$tmp/err"; }
    printf '%s\n' "$out" | grep -qx '20' || no "run $src: output lacks 20: $out"
    printf '%s\n' "$out" | grep -qx '10' || no "run $src: output lacks 10: $out"
done
# a garbage program from a pipe: a parse error naming <stdin> (or the path), exit 1
echo 'garbage(((' | "$r" run - --device cpu >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || no "garbage from '-': exit $rc, expected 1"
grep -q '^<stdin>:1:[0-9]*: error: syntax error' "$tmp/err" || { no "garbage from '-': no syntax error at <stdin>"; cat "$tmp/err"; }
echo 'garbage(((' | "$r" run /dev/stdin --device cpu >/dev/null 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] || no "garbage from /dev/stdin: exit $rc, expected 1"
grep -q '^/dev/stdin:1:[0-9]*: error: syntax error' "$tmp/err" || { no "garbage from /dev/stdin: no syntax error"; cat "$tmp/err"; }
# two facts that give a functional key two values: the error at the second
# fact (line 3), naming the first (line 2), on the CPU and the GPU (emulated)
for dev in cpu gpu; do
    printf 'f[x] = y -> int(x), int(y).\nf[1] = 2.\nf[1] = 3.\nlang:output[`f] = "f".\n' |
        RF_GPU_EMULATE=1 "$r" run - --device $dev >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || no "facts' clash, $dev: exit $rc, expected 1"
    grep -qxF '<stdin>:3:1: error: functional dependency violated: `f` has two values for the key (1): (3) here, (2) at <stdin>:2:1' "$tmp/err" ||
        { no "facts' clash, $dev: not at the second fact"; cat "$tmp/err"; }
done
# an empty program: a warning, exit 0, nothing on stdout
out=$("$r" run - --device cpu </dev/null 2>"$tmp/err")
rc=$?
[ $rc -eq 0 ] || no "empty program: exit $rc, expected 0"
[ -z "$out" ] || no "empty program: output: $out"
grep -q '^<stdin>: warning: the program is empty' "$tmp/err" || { no "empty program: no warning"; cat "$tmp/err"; }
# a program without lang:output: a warning too
echo 'p(1).' | "$r" run - --device cpu >/dev/null 2>"$tmp/err" || no "no output: exit $?"
grep -q '^<stdin>: warning: the program has no lang:output' "$tmp/err" || { no "no output: no warning"; cat "$tmp/err"; }
# compile from a pipe needs -o; the .rfx it writes runs, also from a pipe
printf '%s\n' "$prog" | "$r" compile - >/dev/null 2>&1
[ $? -eq 2 ] || no "compile - without -o: expected exit 2"
printf '%s\n' "$prog" | "$r" compile - -o "$tmp/p.rfx" 2>"$tmp/err" || { no "compile - -o: exit $?"; cat "$tmp/err"; }
out=$("$r" run - --device cpu --format csv <"$tmp/p.rfx" 2>"$tmp/err")
printf '%s\n' "$out" | grep -qx '20' || { no "a .rfx from a pipe: output lacks 20: $out"; cat "$tmp/err"; }
# dump reads '-' too
printf '%s\n' "$prog" | "$r" dump --rules - >"$tmp/out" 2>"$tmp/err" || { no "dump --rules -: exit $?"; cat "$tmp/err"; }
grep -q 'q' "$tmp/out" || no "dump --rules -: no rules printed"
# a FIFO
if mkfifo "$tmp/fifo" 2>/dev/null; then
    printf '%s\n' "$prog" >"$tmp/fifo" &
    out=$("$r" run "$tmp/fifo" --device cpu --format csv 2>"$tmp/err")
    wait
    printf '%s\n' "$out" | grep -qx '20' || { no "FIFO: output lacks 20: $out"; cat "$tmp/err"; }
fi
# a FIFO as the data file of two inputs, with other types: the run reads it
# once and both see its rows (opening it again would wait for ever)
if mkfifo "$tmp/e.txt" 2>/dev/null; then
    cat >"$tmp/two.logic" <<'P'
a(x, y) -> int(x), int(y).
lang:input[`a] = "e.txt".
b(x, y) -> int(x), string(y).
lang:input[`b] = "e.txt".
s[] = n <- agg<<n = total(y)>> a(_, y).
lang:output[`s] = "s".
c(y) <- b(_, y), y = "4".
lang:output[`c] = "c".
P
    for dev in cpu gpu; do
        printf '1|2\n3|4\n' >"$tmp/e.txt" &
        out=$(RF_GPU_EMULATE=1 timeout 60 "$r" run "$tmp/two.logic" --data "$tmp" --device $dev --no-cache --format csv 2>"$tmp/err")
        rc=$?
        [ $rc -eq 124 ] && kill $! 2>/dev/null
        wait
        [ $rc -eq 0 ] || { no "a FIFO read by two inputs ($dev): exit $rc"; cat "$tmp/err"; }
        [ "$(printf '%s\n' "$out" | tr '\n' ' ')" = "s (1 row) n 6  c (1 row) y 4 " ] ||
            no "a FIFO read by two inputs ($dev): $out"
    done
fi
# '-' twice is bad usage; a folder cannot be read (exit 1, with the reason)
"$r" run - - --device cpu </dev/null >/dev/null 2>&1
[ $? -eq 2 ] || no "'-' twice: expected exit 2"
"$r" run "$t" --device cpu >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || no "a folder as the program: expected exit 1"
grep -q 'cannot read the program: Is a directory' "$tmp/err" || { no "a folder: no reason given"; cat "$tmp/err"; }
exit $fail
