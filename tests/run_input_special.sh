#!/bin/sh
# tests/run_input_special.sh REDFOX: inputs that are not regular files, read
# whole by `run` (runtime/io/rf_load_file.c) and streamed by `import`
# (tools/db_import.c). A NUL byte is an error wherever it stands, so the
# read stops at the first one: a link to /dev/zero is refused at 1:1 at
# once, under a memory limit that the old read-until-the-end exhausted
# ("out of memory"), and a FIFO's NUL is named by its line and column. A
# link to /dev/null reads as an empty file. On the CPU, the emulated GPU
# and `import`.
set -u
# --sanitized: a sanitizer's build cannot run under ulimit -v; its allocator's
# own limit stands in for it
limit=1
[ "${1:-}" = "--sanitized" ] && { limit=0; shift; }
r=$1
tmp=${TMPDIR:-/tmp}/rf_inspecial.$$
mkdir -p "$tmp/data"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
if command -v timeout >/dev/null 2>&1; then to="timeout 60"; else to=; fi
cat >"$tmp/p.logic" <<'PROG'
n(x) -> int(x).
lang:input[`n] = "n.csv".
m(x) <- n(x), x > 0.
lang:output[`m] = "m".
PROG
cd "$tmp" || exit 1
# ways: run on the CPU, run on the emulator, import
if [ $limit = 0 ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=3000"
    export ASAN_OPTIONS
fi
cap() { [ $limit = 1 ] && ulimit -v "$1" 2>/dev/null; return 0; }
try() { # try WAY: runs it, exit status in $rc, stderr in err
    case $1 in
    cpu) (cap 2000000; $to "$r" run p.logic --data data --device cpu >out 2>err) ;;
    emu) (cap 4000000; RF_GPU_EMULATE=1 $to "$r" run p.logic --data data --device gpu >out 2>err) ;;
    import) (cap 2000000; rm -rf db; $to "$r" import p.logic --data data --out db >out 2>err) ;;
    esac
    rc=$?
}
want_error() { # want_error WAY WHAT LINE:COL
    try "$1"
    [ $rc = 1 ] || { no "$2, $1: exit $rc (1 expected; 124: it hung)"; cat err; return; }
    grep -q "data/n.csv:$3: error: a NUL byte" err || { no "$2, $1: the error does not name n.csv:$3 and the NUL byte"; cat err; }
}
ln -s /dev/zero data/n.csv
for way in cpu emu import; do want_error $way "a link to /dev/zero" 1:1; done

rm -f data/n.csv
if mkfifo data/n.csv 2>/dev/null; then
    for way in cpu emu import; do
        # (the writer gives up after a while where no reader opens the FIFO)
        (${to:+timeout 30} sh -c "printf '1\\n22\\n3\\0004\\n5\\n' >data/n.csv" &)
        want_error $way "a FIFO with a NUL byte" 3:2
    done
    rm -f data/n.csv
fi

ln -s /dev/null data/n.csv
for way in cpu emu; do
    try $way
    [ $rc = 0 ] || { no "a link to /dev/null, $way: exit $rc"; cat err; }
    grep -q '^m (0 rows)' out || { no "a link to /dev/null, $way: not an empty output"; cat out; }
done
try import
[ $rc = 0 ] || { no "a link to /dev/null, import: exit $rc"; cat err; }
exit $fail
