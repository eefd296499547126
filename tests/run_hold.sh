#!/bin/sh
# tests/run_hold.sh REDFOX FAKECUDA_DIR FAKECUDA_INIT_DIR: `redfox hold`
# (tools/cmd_hold.c). FAKECUDA_DIR holds a stand-in libcuda.so.1 that lacks
# cuInit (no GPU to hold: exit 1, the reason said); FAKECUDA_INIT_DIR one whose
# cuInit succeeds with one device, so that the wait and its stops run on
# every host: --seconds ends it with 0 after that long, SIGTERM and SIGHUP end
# it with 0 at once, a signal ignored where it started stays ignored.
set -u
r=$1
fake=$2
fake_init=$3
tmp=${TMPDIR:-/tmp}/rf_hold.$$
mkdir -p "$tmp"
# the mark of a holder (runtime/rt_hold.c) in this test's own folder: a
# holder here must not change the choices of tests running beside it
TMPDIR=$tmp
export TMPDIR
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
unset RF_GPU_EMULATE
ld=${LD_LIBRARY_PATH:-}

# usage: exit 2, naming the option
for args in "--seconds 0" "--seconds -3" "--seconds 1x" "--seconds" "--seconds 1 --seconds 2" "banana"; do
    # shellcheck disable=SC2086
    "$r" hold $args >/dev/null 2>"$tmp/e"; rc=$?
    [ $rc -eq 2 ] || no "hold $args: exit $rc, not 2"
    grep -q "redfox hold" "$tmp/e" || { no "hold $args: no 'redfox hold' in the error"; cat "$tmp/e"; }
done
"$r" hold --help | grep -q "nvidia-uvm" || no "hold --help does not say what it keeps (nvidia-uvm)"

# nothing to hold: exit 1 with the reason
RF_GPU_EMULATE=1 "$r" hold --seconds 1 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "RF_GPU_EMULATE" "$tmp/e" || { no "emulated: exit $rc"; cat "$tmp/e"; }
LD_LIBRARY_PATH=$fake${ld:+:$ld} "$r" hold --seconds 1 2>"$tmp/e"; rc=$?
[ $rc -eq 1 ] && grep -q "no GPU to hold: the NVIDIA driver lacks cuInit" "$tmp/e" ||
    { no "a driver without cuInit: exit $rc"; cat "$tmp/e"; }

# --seconds: held (cuInit called, the line said), then exit 0 after that long
LD_LIBRARY_PATH=$fake_init${ld:+:$ld}
RF_TEST_FAKECUDA_INIT=$tmp/init
export LD_LIBRARY_PATH RF_TEST_FAKECUDA_INIT
t0=$(date +%s)
"$r" hold --seconds 2 2>"$tmp/e"; rc=$?
t1=$(date +%s)
[ $rc -eq 0 ] || { no "hold --seconds 2: exit $rc"; cat "$tmp/e"; }
[ $((t1 - t0)) -ge 2 ] || no "hold --seconds 2 ended after $((t1 - t0)) s"
[ "$(cat "$tmp/init" 2>/dev/null)" = "cuInit" ] || no "hold did not start the driver"
grep -q "the NVIDIA driver is held for 1 GPU" "$tmp/e" || { no "no 'held' line"; cat "$tmp/e"; }

# started in the background: the line comes once held; SIGTERM and SIGHUP end it with 0
wait_line() {
    i=0
    while ! grep -q "is held" "$tmp/e" 2>/dev/null; do
        i=$((i + 1))
        [ $i -gt 300 ] && return 1
        sleep 0.1
    done
}
for sig in TERM HUP; do
    rm -f "$tmp/e"
    "$r" hold 2>"$tmp/e" &
    pid=$!
    wait_line || no "SIG$sig: no 'held' line in 30 s"
    kill -s "$sig" "$pid"
    wait "$pid"; rc=$?
    pid=
    [ $rc -eq 0 ] || no "SIG$sig: exit $rc, not 0"
done

# nohup's SIGHUP stays ignored: the holder outlives it, and SIGTERM still ends it
rm -f "$tmp/e"
(trap '' HUP; exec "$r" hold 2>"$tmp/e") &
pid=$!
wait_line || no "nohup: no 'held' line in 30 s"
kill -s HUP "$pid"
sleep 1
kill -0 "$pid" 2>/dev/null || no "an ignored SIGHUP ended the holder"
kill -s TERM "$pid"
wait "$pid"; rc=$?
pid=
[ $rc -eq 0 ] || no "SIGTERM after an ignored SIGHUP: exit $rc"

# the mark (runtime/rt_hold.c): while a holder runs, --device auto weighs the
# held start (--profile says so); not before it, not after it ends. The
# mark's folder is this test's ($TMPDIR), so no other test sees it.
TMPDIR=$tmp
export TMPDIR
ex=$(cd "$(dirname "$0")/../examples/quickstart" && pwd)
auto() { "$r" run "$ex/reach.logic" --data "$ex" --device auto --profile --cache-dir "$tmp/cache" >/dev/null 2>"$tmp/p"; }
auto || { no "auto without a holder failed"; cat "$tmp/p"; }
grep -q "^auto: predicted" "$tmp/p" || { no "no auto line"; cat "$tmp/p"; }
grep -q "held by .redfox hold." "$tmp/p" && no "held said with no holder"
rm -f "$tmp/e"
"$r" hold 2>"$tmp/e" &
pid=$!
wait_line || no "mark: no 'held' line in 30 s"
auto || { no "auto beside a holder failed"; cat "$tmp/p"; }
grep -q "the driver held by .redfox hold.: its start weighed at half a fresh one's" "$tmp/p" ||
    { no "auto beside a holder does not weigh the held start"; cat "$tmp/p"; }
kill -s TERM "$pid"
wait "$pid"
pid=
auto && ! grep -q "held by .redfox hold." "$tmp/p" || { no "held said after the holder ended"; cat "$tmp/p"; }
# a link planted where the mark goes: not followed; a warning, and the hold holds
rm -f "$tmp/redfox-hold.lock"
ln -s "$tmp/planted" "$tmp/redfox-hold.lock"
"$r" hold --seconds 1 2>"$tmp/e"; rc=$?
[ $rc -eq 0 ] && grep -q "warning: cannot mark the driver as held" "$tmp/e" && [ ! -e "$tmp/planted" ] ||
    { no "a planted link: exit $rc"; cat "$tmp/e"; }

[ $fail -eq 0 ] && echo "hold: ok"
exit $fail
