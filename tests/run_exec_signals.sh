#!/bin/sh
# tests/run_exec_signals.sh BUILD SRC MODE: SIGINT, SIGTERM and SIGHUP during
# `redfox exec` leave no folder DB.tmp.PID.N beside the database. A signal
# that comes while a commit is under way (a copy-on-write one, ending on a
# thread while the next transaction of --each runs, or one appended in
# place) lets that commit end, stops the exec before the next commit, says
# on stderr how many transactions are committed, prints the outputs of
# those committed, and ends the process by the signal (status 128 + it); one
# that comes outside a commit ends it at once. Either way the database is
# the state after some prefix of the transactions, equal to a from-scratch
# run of that prefix (separate execs, one a batch).
# First three commits held 1 s by strace (the exchange of a commit ending
# on its thread, the rename of an in-place commit's manifest, a plain
# exec's exchange: -P names the database's path, so that no earlier rename,
# as a cache file's on a cold cache, takes the delay), the signal sent
# inside: the exact outcome is known.
# Then signals at random moments of a stream of small batches, deletes
# (copy on write) and inserts (in place) alternating.
# MODE cpu or emu (the GPU emulator).
set -u
build=$1
src=$2
mode=$3
redfox=$build/tools/redfox
tmp=${TMPDIR:-/tmp}/rf_exec_signals.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
dev=cpu
if [ "$mode" = emu ]; then
    dev=gpu
    export RF_GPU_EMULATE=1
fi
# a command started in the background by a non-interactive shell ignores
# SIGINT (and exec's handlers keep an ignored signal ignored, as nohup asks):
# env --default-signal gives it back its default
env --default-signal=INT true 2>/dev/null || { echo "skipped: env --default-signal missing (coreutils < 8.31)"; exit 0; }
dflt="env --default-signal=INT,TERM,HUP"
nolsan="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

prog=$src/tests/exec/tc.logic
mkdir -p "$tmp/data"
awk 'BEGIN { srand(11); for (i = 0; i < 30; i++) printf "%d,%d\n", int(rand() * 15), int(rand() * 15) }' >"$tmp/data/edge.csv"
"$redfox" import "$prog" --data "$tmp/data" --out "$tmp/db0" >/dev/null || fail "import"
"$redfox" exec "$tmp/db0" "$prog" --device cpu >/dev/null 2>&1 || fail "first exec"
# (after one commit of inserts, copy on write, the tables' files are their
# own: the next inserts are appended in place)
printf '+edge(1000, 1001).\n' >"$tmp/pre.txn"
"$redfox" exec "$tmp/db0" "$prog" --device cpu --batch "$tmp/pre.txn" >/dev/null 2>&1 || fail "exec pre.txn"

# the stream: odd batches insert (appended in place), even ones delete what
# the one before inserted and insert another edge (copy on write)
n=10
i=1
while [ $i -le $n ]; do
    if [ $((i % 2)) -eq 1 ]; then
        printf '+edge(%d, %d).\n+edge(%d, 3).\n' $((100 + i)) $((101 + i)) $((101 + i)) >"$tmp/b$i.txn"
    else
        printf -- '-edge(%d, %d).\n+edge(%d, %d).\n' $((99 + i)) $((100 + i)) $((200 + i)) $((99 + i)) >"$tmp/b$i.txn"
    fi
    i=$((i + 1))
done
# state.K: a run after the first K batches, each its own exec
cp -r "$tmp/db0" "$tmp/ref"
"$redfox" run "$prog" --data "$tmp/ref" --device cpu --format tbl >"$tmp/state.0" || fail "run 0"
i=1
while [ $i -le $n ]; do
    "$redfox" exec "$tmp/ref" "$prog" --device cpu --batch "$tmp/b$i.txn" >/dev/null 2>&1 || fail "exec b$i"
    "$redfox" run "$prog" --data "$tmp/ref" --device cpu --format tbl >"$tmp/state.$i" || fail "run $i"
    cmp -s "$tmp/state.$i" "$tmp/state.$((i - 1))" && fail "b$i changes nothing"
    i=$((i + 1))
done

# split OUT DIR: the outputs of --each, one file per transaction (DIR/1, DIR/2, ...)
split_out() {
    rm -rf "$2"
    mkdir -p "$2"
    awk -v dir="$2" '/^-- transaction [0-9]+ of [0-9]+: / { k++; f = dir "/" k; skip = 1; next }
        { if (skip && $0 == "") next; skip = 0; print > f }' "$1"
    for f in "$2"/*; do
        [ -f "$f" ] || continue
        awk '{ line[NR] = $0 } END { n = NR; if (n && line[n] == "") n--; for (i = 1; i <= n; i++) print line[i] }' "$f" >"$f.t" &&
            mv "$f.t" "$f"
    done
}
# state_of DB: the K whose state DB holds (empty: none)
state_of() {
    "$redfox" run "$prog" --data "$1" --device cpu --format tbl >"$tmp/got" 2>"$tmp/run.err" || { cat "$tmp/run.err"; fail "run on $1"; }
    s=
    for k in $(seq 0 $n); do cmp -s "$tmp/got" "$tmp/state.$k" && s=$k; done
    echo "$s"
}
no_tmp() { ! ls -d "$tmp/db".tmp.* >/dev/null 2>&1 || fail "$1: a folder DB.tmp.PID.N left: $(ls -d "$tmp/db".tmp.*)"; }
# wait_for PATTERN: until a path matching it exists (at most 10 s)
wait_for() {
    w=0
    while ! ls -d $1 >/dev/null 2>&1; do
        w=$((w + 1))
        [ $w -lt 200 ] || return 1
        sleep 0.05
    done
}

if command -v strace >/dev/null 2>&1; then
    # ---- a copy-on-write commit ending on its thread: SIGTERM during its exchange
    # (held 1 s): it ends, transaction 2 (which ran meanwhile) stops before its
    # commit; transaction 1's outputs printed, status 143
    rm -rf "$tmp/db" "$tmp/db".tmp.*
    cp -r "$tmp/db0" "$tmp/db"
    printf -- '-edge(1000, 1001).\n' >"$tmp/c1.txn"
    cp -r "$tmp/db0" "$tmp/cref"
    "$redfox" exec "$tmp/cref" "$prog" --device cpu --batch "$tmp/c1.txn" --format tbl >"$tmp/c1.want" 2>/dev/null || fail "exec c1"
    $nolsan strace -f -qq -o /dev/null -P "$tmp/db" -e trace=renameat2 -e inject=renameat2:delay_enter=1000000:when=1 $dflt sh -c \
        'echo $$ >"$0"; exec "$@"' "$tmp/pid" "$redfox" exec "$tmp/db" "$prog" --device "$dev" --each --batch "$tmp/c1.txn" \
        --batch "$tmp/b2.txn" --batch "$tmp/b4.txn" --format tbl >"$tmp/out" 2>"$tmp/err" &
    spid=$!
    wait_for "$tmp/db.tmp.*/manifest.rfdb" || fail "exchange: no commit ending"
    kill -TERM "$(cat "$tmp/pid")"
    wait $spid
    code=$?
    [ $code -eq 143 ] || { cat "$tmp/err"; fail "SIGTERM during an exchange on its thread: status $code, not 143"; }
    no_tmp "SIGTERM during an exchange on its thread"
    grep -q "^redfox exec: transaction 2 of 3 (.*b2.txn) stopped by SIGTERM before its commit; the one before it is committed, and those after it are not applied$" \
        "$tmp/err" || { cat "$tmp/err"; fail "SIGTERM during an exchange on its thread: no word of what is committed"; }
    split_out "$tmp/out" "$tmp/each"
    cmp -s "$tmp/each/1" "$tmp/c1.want" && [ ! -f "$tmp/each/2" ] ||
        { cat "$tmp/out"; fail "SIGTERM during an exchange on its thread: not transaction 1's outputs alone"; }
    "$redfox" run "$prog" --data "$tmp/db" --device cpu --format tbl >"$tmp/got" || fail "run after SIGTERM"
    cmp -s "$tmp/got" "$tmp/c1.want" || fail "SIGTERM during an exchange on its thread: the database is not transaction 1's state"

    # ---- an in-place commit (inserts): SIGINT before its manifest's rename (held
    # 1 s): it ends, nothing after it runs; its outputs printed, status 130
    rm -rf "$tmp/db" "$tmp/db".tmp.*
    cp -r "$tmp/db0" "$tmp/db"
    $nolsan strace -f -qq -o /dev/null -P "$tmp/db/manifest.rfdb.new" -e trace=rename -e inject=rename:delay_enter=1000000:when=1 $dflt sh -c \
        'echo $$ >"$0"; exec "$@"' "$tmp/pid" "$redfox" exec "$tmp/db" "$prog" --device "$dev" --each --batch "$tmp/b1.txn" \
        --batch "$tmp/b3.txn" --batch "$tmp/b5.txn" --format tbl >"$tmp/out" 2>"$tmp/err" &
    spid=$!
    wait_for "$tmp/db/manifest.rfdb.new" || fail "in place: no commit"
    kill -INT "$(cat "$tmp/pid")"
    wait $spid
    code=$?
    [ $code -eq 130 ] || { cat "$tmp/err"; fail "SIGINT during an in-place commit: status $code, not 130"; }
    [ ! -e "$tmp/db/manifest.rfdb.new" ] || fail "SIGINT during an in-place commit: its manifest.rfdb.new left"
    grep -q "^redfox exec: stopped by SIGINT once transaction 1 of 3 (.*b1.txn) was committed: it is committed, and those after it are not applied$" \
        "$tmp/err" || { cat "$tmp/err"; fail "SIGINT during an in-place commit: no word of what is committed"; }
    split_out "$tmp/out" "$tmp/each"
    cmp -s "$tmp/each/1" "$tmp/state.1" && [ ! -f "$tmp/each/2" ] ||
        { cat "$tmp/out"; fail "SIGINT during an in-place commit: not transaction 1's outputs alone"; }
    [ "$(state_of "$tmp/db")" = 1 ] || fail "SIGINT during an in-place commit: the database is not transaction 1's state"

    # ---- a plain exec: SIGHUP during its exchange: committed, said, status 129
    rm -rf "$tmp/db" "$tmp/db".tmp.*
    cp -r "$tmp/db0" "$tmp/db"
    $nolsan strace -f -qq -o /dev/null -P "$tmp/db" -e trace=renameat2 -e inject=renameat2:delay_enter=1000000:when=1 $dflt sh -c \
        'echo $$ >"$0"; exec "$@"' "$tmp/pid" "$redfox" exec "$tmp/db" "$prog" --device "$dev" --batch "$tmp/c1.txn" \
        --format tbl >"$tmp/out" 2>"$tmp/err" &
    spid=$!
    wait_for "$tmp/db.tmp.*/manifest.rfdb" || fail "plain exec: no commit"
    kill -HUP "$(cat "$tmp/pid")"
    wait $spid
    code=$?
    [ $code -eq 129 ] || { cat "$tmp/err"; fail "SIGHUP during a plain exec's commit: status $code, not 129"; }
    no_tmp "SIGHUP during a plain exec's commit"
    grep -q "^redfox exec: stopped by SIGHUP once its commit ended: the transaction is committed$" "$tmp/err" ||
        { cat "$tmp/err"; fail "SIGHUP during a plain exec's commit: no word of the commit"; }
    cmp -s "$tmp/out" "$tmp/c1.want" || fail "SIGHUP during a plain exec's commit: not its outputs"
    "$redfox" run "$prog" --data "$tmp/db" --device cpu --format tbl >"$tmp/got" || fail "run after SIGHUP"
    cmp -s "$tmp/got" "$tmp/c1.want" || fail "SIGHUP during a plain exec's commit: the database is not its state"

    # ---- --each, its second batch a FIFO that no one writes: a SIGINT held
    # while the first commit's exchange ends on its thread stops the second
    # transaction's wait for its bytes (it waited for a writer for ever, the
    # ^C swallowed: a blocking open restarts after the handler)
    rm -rf "$tmp/db" "$tmp/db".tmp.* "$tmp/fifo.txn"
    cp -r "$tmp/db0" "$tmp/db"
    mkfifo "$tmp/fifo.txn" || fail "mkfifo"
    $nolsan timeout -s KILL 30 strace -f -qq -o /dev/null -P "$tmp/db" -e trace=renameat2 -e inject=renameat2:delay_enter=1000000:when=1 $dflt sh -c \
        'echo $$ >"$0"; exec "$@"' "$tmp/pid" "$redfox" exec "$tmp/db" "$prog" --device "$dev" --each --batch "$tmp/c1.txn" \
        --batch "$tmp/fifo.txn" --format tbl >"$tmp/out" 2>"$tmp/err" &
    spid=$!
    wait_for "$tmp/db.tmp.*/manifest.rfdb" || fail "FIFO batch: no commit ending"
    kill -INT "$(cat "$tmp/pid")"
    wait $spid
    code=$?
    kill -KILL "$(cat "$tmp/pid")" 2>/dev/null
    [ $code -eq 130 ] || { cat "$tmp/err"; fail "SIGINT while the next batch, a FIFO, waits for its writer: status $code, not 130 (137: it hung)"; }
    no_tmp "SIGINT while the next batch waits"
    grep -q "^redfox exec: transaction 2 of 2 (.*fifo.txn) stopped by SIGINT before its commit; the one before it is committed, and those after it are not applied$" \
        "$tmp/err" || { cat "$tmp/err"; fail "SIGINT while the next batch, a FIFO, waits: no word of what is committed"; }
    "$redfox" run "$prog" --data "$tmp/db" --device cpu --format tbl >"$tmp/got" || fail "run after SIGINT"
    cmp -s "$tmp/got" "$tmp/c1.want" || fail "SIGINT while the next batch waits: the database is not transaction 1's state"
    echo "ok: SIGTERM, SIGINT, SIGHUP inside commits (an exchange on its thread, in place, a plain exec, a FIFO batch after it): each commit ended, said, no folder left"
else
    echo "skipped: signals inside commits held by strace (strace missing)"
fi

# ---- signals at random moments of the stream ------------------------------------
args=
i=1
while [ $i -le $n ]; do
    args="$args --batch $tmp/b$i.txn"
    i=$((i + 1))
done
# the stream's length once, unsignalled: the moments spread over it
t0=$(date +%s%N)
rm -rf "$tmp/db"
cp -r "$tmp/db0" "$tmp/db"
# shellcheck disable=SC2086
"$redfox" exec "$tmp/db" "$prog" --device "$dev" --each $args --format tbl >/dev/null 2>&1 || fail "the stream"
span=$((($(date +%s%N) - t0) / 1000)) # microseconds
[ "$(state_of "$tmp/db")" = $n ] || fail "the stream: not the state after it"
r=0
seen=
inside=0
for sig in INT TERM INT TERM INT TERM HUP INT TERM INT TERM INT; do
    r=$((r + 1))
    rm -rf "$tmp/db" "$tmp/db".tmp.*
    cp -r "$tmp/db0" "$tmp/db"
    # shellcheck disable=SC2086
    $dflt "$redfox" exec "$tmp/db" "$prog" --device "$dev" --each $args --format tbl >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    sleep "$(awk -v s=$r -v span=$span 'BEGIN { srand(s * 7 + 3); printf "%.4f", rand() * span * 1.1 / 1e6 }')"
    kill -$sig $pid 2>/dev/null
    wait $pid
    code=$?
    case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
    [ $code -eq $want ] || [ $code -eq 0 ] || { cat "$tmp/err"; fail "round $r (SIG$sig): status $code"; }
    no_tmp "round $r (SIG$sig)"
    got=$(state_of "$tmp/db")
    [ -n "$got" ] || fail "round $r (SIG$sig): the database is not the state after a prefix of the stream"
    # the outputs printed are those of the first transactions, each committed
    split_out "$tmp/out" "$tmp/each"
    printed=$(grep -c '^-- transaction ' "$tmp/out")
    [ "$printed" -le "$got" ] || fail "round $r (SIG$sig): $printed transactions printed, $got committed"
    k=1
    while [ $k -le "$printed" ]; do
        cmp -s "$tmp/each/$k" "$tmp/state.$k" || fail "round $r (SIG$sig): the outputs of transaction $k are not its state"
        k=$((k + 1))
    done
    [ $code -ne 0 ] || [ "$got" = $n ] || fail "round $r: status 0, but $got of $n committed"
    # a signal held during a commit: the count said is the one committed and printed
    said=$(sed -n 's/.*stopped by SIG[A-Z]* once transaction \([0-9]*\) of .*/\1/p; s/.*transaction \([0-9]*\) of [0-9]* (.*) stopped by SIG[A-Z]* before its commit.*/\1/p' "$tmp/err" | head -n 1)
    if grep -q 'before its commit' "$tmp/err"; then said=$((said - 1)); fi
    if [ -n "$said" ]; then
        inside=$((inside + 1))
        [ "$said" = "$got" ] && [ "$printed" = "$got" ] ||
            { cat "$tmp/err"; fail "round $r (SIG$sig): said $said committed, $printed printed, the database $got"; }
    fi
    seen="$seen $got"
done
echo "ok: $mode: $r signals at random moments of $n transactions; the states after:$seen ($inside inside a commit, said)"
