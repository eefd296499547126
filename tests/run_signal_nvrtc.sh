#!/bin/sh
# tests/run_signal_nvrtc.sh REDFOX QUERIES_DIR: SIGTERM and SIGHUP while NVRTC
# compiles (`redfox compile --no-cache`) end the process promptly with the
# signal's status and leave the old .rfx as it was. They once spun at 100 %
# CPU until SIGKILL: NVRTC's own handlers put redfox's back, and the signal
# came back to it for ever (common/rf_file.c). Skipped (77) without NVRTC.
set -u
r=$1
q=$2
tmp=${TMPDIR:-/tmp}/rf_signvrtc.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
"$r" compile "$q/schema.logic" "$q/q01.logic" -o "$tmp/q.rfx" --no-cache 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
"$r" dump --ptx "$tmp/q.rfx" 2>/dev/null | grep -q "\.target" || { echo "no NVRTC here: skipped"; exit 77; }
cp "$tmp/q.rfx" "$tmp/old.rfx"
for sig in TERM HUP; do
    "$r" compile "$q/schema.logic" "$q/q01.logic" -o "$tmp/q.rfx" --no-cache 2>/dev/null &
    pid=$!
    sleep 0.5
    kill -$sig $pid 2>/dev/null
    n=0
    while kill -0 $pid 2>/dev/null && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
    if kill -0 $pid 2>/dev/null; then
        no "SIG$sig during NVRTC: still running 20 s later"
        kill -9 $pid 2>/dev/null
    fi
    wait $pid
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "note: SIG$sig came after the compile had ended (a fast machine): nothing to check"
    else
        case $sig in TERM) want=143 ;; HUP) want=129 ;; esac
        [ $rc -eq $want ] || no "SIG$sig: exit $rc, not $want (killed by the signal)"
        cmp -s "$tmp/q.rfx" "$tmp/old.rfx" || no "SIG$sig: the old .rfx changed"
    fi
    ls "$tmp" | grep -v '^\(q\.rfx\|old\.rfx\|err\)$' | grep -q . && { no "SIG$sig left files: $(ls "$tmp")"; }
done
[ $fail = 0 ] && echo "signals during NVRTC end the compile and keep the old file"
exit $fail
