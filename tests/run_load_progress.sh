#!/bin/sh
# tests/run_load_progress.sh REDFOX: an input file's load that takes over a
# second shows which input, its phase and its bytes on a terminal, redrawn in
# place and cleared at the end; nothing is shown when stderr is not a
# terminal. The input is a FIFO whose writer pauses two seconds mid-file, so
# the load is slow whatever the machine. `run` on the CPU and the GPU
# emulator, and `tpch run` (the same loader).
set -u
r=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
tmp=${TMPDIR:-/tmp}/rf_loadprog.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
cat >"$tmp/prog.logic" <<'PROG'
n(x) -> int(x).
lang:input[`n] = "n.csv".
total[] = t <- agg<<t = total(x)>> n(x).
lang:output[`total] = "total".
PROG
slow_writer() { # a FIFO at data/n.csv: 1, 2, a pause, then 3
    rm -f "$tmp/data/n.csv"
    mkfifo "$tmp/data/n.csv" || exit 77
    (printf '1\n2\n' && sleep 2 && printf '3\n') >"$tmp/data/n.csv" &
}
for dev in cpu emu; do
    if [ $dev = emu ]; then env="RF_GPU_EMULATE=1"; flag="--device gpu"; else env="RF_NONE=1"; flag="--device cpu"; fi
    # not a terminal: stderr stays empty
    slow_writer
    # shellcheck disable=SC2086
    (cd "$tmp" && env $env "$r" run prog.logic --data data $flag --format csv >out 2>err) ||
        no "$dev: exit $?"
    wait
    [ "$(tail -n 1 "$tmp/out")" = 6 ] || { no "$dev: wrong output"; cat "$tmp/out"; }
    # (the sanitizers' note on the emulator's coroutines is not ours)
    grep -v "ASan doesn't fully support makecontext" "$tmp/err" >"$tmp/err2"
    [ -s "$tmp/err2" ] && { no "$dev: stderr not empty when it is not a terminal"; cat "$tmp/err2"; }
    if ! command -v script >/dev/null 2>&1; then
        echo "note: no script(1); progress on a terminal not checked"
        continue
    fi
    slow_writer
    (cd "$tmp" && script -qc "env $env '$r' run prog.logic --data data $flag --format csv" /dev/null >tty 2>&1)
    wait
    tr '\r' '\n' <"$tmp/tty" | grep -q "^redfox: loading \`n\` from data/n.csv: reading [46] bytes ([0-9]* s)" ||
        { no "$dev: no load progress on a terminal"; od -c "$tmp/tty" | head -20; }
    tr '\r' '\n' <"$tmp/tty" | grep -q "^$(printf '\033')\[K" || no "$dev: the progress line was not cleared"
    tr '\r' '\n' <"$tmp/tty" | grep -qx '6' || { no "$dev: wrong output on a terminal"; cat "$tmp/tty"; }
done
exit $fail
