#!/bin/sh
# tests/run_import_signals.sh BUILD SRC: SIGINT, SIGTERM and SIGHUP during
# `redfox import` and `redfox tpch gen --format db` (--tables over a
# database too) never leave a folder DB.tmp.PID.N. One that comes before the
# commit stops the import (within a block of text, a wait for a FIFO's
# writer, a wait for another process's lock on the database), removes the
# temporary folder, leaves the database that was at --out as it was (its
# manifest's bytes) or no database where there was none, says so, and ends
# the process by the signal (status 128 + it); one that comes during the
# commit's rename or exchange lets it end (a complete database, with the
# right row counts) and then ends the process by it. The moments: an input
# FIFO whose writer never comes or stalls, the commit waiting for a shared
# lock on --out that another process holds, the commit's rename or exchange
# held 1 s by strace, and random moments of whole imports and generations.
# Also `tpch gen` (text): a signal during its renames lets them all end, so
# that the folder never holds tables of two generations; one before them
# leaves the old tables and no temporary file.
set -u
build=$1
src=$2
redfox=$build/tools/redfox
tmp=${TMPDIR:-/tmp}/rf_import_signals.$$
mkdir -p "$tmp"
lockpid=
wpid=
# open_gate: the FIFO writer's gate opened and closed (read and write: an
# open that does not wait for the reader), so that its writer ends; the
# input FIFO is held open to read meanwhile, for a writer still waiting to
# open it (an import stopped before it opened the FIFO: under the
# sanitizers, slow, the writer then waited for ever)
open_gate() {
    [ -n "$wpid" ] || return 0
    [ -p "$tmp/fifo/teller.tbl" ] && exec 4<>"$tmp/fifo/teller.tbl"
    exec 3<>"$tmp/gate"
    exec 3>&-
    wait "$wpid"
    exec 4>&-
    wpid=
}
cleanup() {
    [ -n "$lockpid" ] && kill "$lockpid" 2>/dev/null
    open_gate
    rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
# a command started in the background by a non-interactive shell ignores
# SIGINT (and redfox keeps an ignored signal ignored, as nohup asks): env
# --default-signal gives it back its default
env --default-signal=INT true 2>/dev/null || { echo "skipped: env --default-signal missing (coreutils < 8.31)"; exit 0; }
dflt="env --default-signal=INT,TERM,HUP"
nolsan="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# (a hang is a failure, not a test that never ends)
limit="timeout -s KILL 60"
code_of() { case $1 in INT) echo 130 ;; TERM) echo 143 ;; HUP) echo 129 ;; esac; }

# wait_for PATTERN: until a path matching it exists (at most 20 s)
wait_for() {
    w=0
    while ! ls -d $1 >/dev/null 2>&1; do
        w=$((w + 1))
        [ $w -lt 400 ] || return 1
        sleep 0.05
    done
}
no_tmp() {
    left=$(ls -d "$tmp"/*.tmp.* "$tmp"/*/.*.redfox-*.tmp 2>/dev/null)
    [ -z "$left" ] || fail "$1: left behind: $left"
}
# start PIDFILE CMD...: CMD in the background with the default signal
# actions, its process id in PIDFILE once it runs; $! is the wrapper's.
mark='echo $$ >"$0.t" && mv "$0.t" "$0" && exec "$@"'
start() {
    f=$1
    shift
    rm -f "$f"
    $limit $dflt sh -c "$mark" "$f" "$@" &
}

# ---- redfox import ------------------------------------------------------------
prog=$src/bench/txn/tpcb/tpcb.logic
"$build/bench/tpcb_gen" "$tmp/g" 100 30000 10 1 1 >/dev/null || fail "tpcb_gen"
data=$tmp/g/data
want_rows="$(wc -l <"$data/account.tbl" | tr -d ' ') $(wc -l <"$data/teller.tbl" | tr -d ' ')"
cat >"$tmp/count.logic" <<'EOF'
account(a, b, v) -> int(a), int(b), int(v).
lang:input[`account] = "account.tbl".
teller(t, b, v) -> int(t), int(b), int(v).
lang:input[`teller] = "teller.tbl".
na(c) <- agg<<c = count()>> account(_, _, _).
nt(c) <- agg<<c = count()>> teller(_, _, _).
lang:output[`na] = "na".
lang:output[`nt] = "nt".
EOF
# rows_of DB: its accounts and tellers, as `redfox run` reads them
rows_of() {
    rm -rf "$tmp/rows"
    "$redfox" run "$tmp/count.logic" --data "$1" --device cpu --out "$tmp/rows" --format tbl 2>"$tmp/rows.err" ||
        { cat "$tmp/rows.err"; fail "run on $1"; }
    echo "$(sed -n 2p "$tmp/rows/na.tbl") $(sed -n 2p "$tmp/rows/nt.tbl")"
}
# the database that is there before: a smaller one
mkdir -p "$tmp/small"
head -n 1000 "$data/account.tbl" >"$tmp/small/account.tbl"
head -n 100 "$data/teller.tbl" >"$tmp/small/teller.tbl"
cp "$data/branch.tbl" "$data/txn.tbl" "$tmp/small/"
"$redfox" import "$prog" --data "$tmp/small" --out "$tmp/old" 2>/dev/null || fail "import of the small input"
[ "$(rows_of "$tmp/old")" = "1000 100" ] || fail "the small database's rows"
# fresh_db NAME / old_db NAME: no database at $tmp/NAME, or a copy of the old one
fresh_db() { rm -rf "$tmp/$1" "$tmp/$1".tmp.*; }
old_db() { fresh_db "$1"; cp -r "$tmp/old" "$tmp/$1"; }

# settled WHAT DB SIG CODE BEFORE ROWS ROWS_OF NOTE: after a write that SIG
# may have reached: status 128 + SIG (or 0 when ANY_ZERO=1: the write ended
# first), no temporary folder, and DB as it was before (BEFORE: a manifest's
# copy, or "none") with the stop said, or complete with ROWS rows (ROWS_OF
# DB counts them) and, where the signal came, NOTE said. Sets $how to
# stopped or complete.
settled() {
    what=$1 db=$2 sig=$3 code=$4 before=$5 wrows=$6 rows_fn=$7 note=$8
    want=$(code_of "$sig")
    [ "$code" -eq "$want" ] || { [ "${ANY_ZERO:-0}" = 1 ] && [ "$code" -eq 0 ]; } ||
        { cat "$tmp/err"; fail "$what: status $code, not $want"; }
    no_tmp "$what"
    if { [ "$before" = none ] && [ ! -e "$db" ]; } || { [ "$before" != none ] && cmp -s "$db/manifest.rfdb" "$before"; }; then
        how=stopped
        [ "$code" -ne 0 ] || fail "$what: status 0, but nothing written"
        grep -q "^$db: error: stopped by SIG$sig before the .*database was complete: nothing written" "$tmp/err" ||
            { cat "$tmp/err"; fail "$what: the stop not said"; }
    else
        how=complete
        [ -f "$db/manifest.rfdb" ] || fail "$what: $db is neither the database before nor a new one"
        got=$($rows_fn "$db")
        [ "$got" = "$wrows" ] || fail "$what: the new database has rows $got, not $wrows"
        [ "$code" -eq 0 ] || grep -q "^$db: note: SIG$sig $note\$" "$tmp/err" ||
            { cat "$tmp/err"; fail "$what: the commit's end under the signal not said"; }
    fi
}
# outcome WHAT DB SIG CODE BEFORE: settled, for an import
outcome() { settled "$@" "$want_rows" rows_of "came during the commit, which ended: the database is complete"; }

# an input that is a FIFO is read last (its size unknown), once the other
# tables are written and ended: its writer never comes (SIGINT, no database
# before), then comes and stalls (SIGTERM, a database before)
mkdir -p "$tmp/fifo"
for f in account branch txn; do ln -s "$data/$f.tbl" "$tmp/fifo/$f.tbl"; done
mkfifo "$tmp/fifo/teller.tbl" "$tmp/gate"
fresh_db db
start "$tmp/pid" "$redfox" import "$prog" --data "$tmp/fifo" --out "$tmp/db" 2>"$tmp/err"
spid=$!
wait_for "$tmp/db.tmp.*" || fail "FIFO: no temporary folder"
sleep 0.5
kill -INT "$(cat "$tmp/pid")"
wait $spid
outcome "SIGINT while a FIFO's writer never came" "$tmp/db" INT $? none
[ $how = stopped ] || fail "SIGINT while a FIFO's writer never came: the import ended"
old_db db
cp "$tmp/old/manifest.rfdb" "$tmp/m.old"
{ head -n 100 "$data/teller.tbl"; cat "$tmp/gate"; } >"$tmp/fifo/teller.tbl" 2>/dev/null &
wpid=$!
start "$tmp/pid" "$redfox" import "$prog" --data "$tmp/fifo" --out "$tmp/db" 2>"$tmp/err"
spid=$!
wait_for "$tmp/db.tmp.*" || fail "FIFO: no temporary folder"
sleep 0.5
kill -TERM "$(cat "$tmp/pid")"
wait $spid
outcome "SIGTERM while a FIFO's writer stalled" "$tmp/db" TERM $? "$tmp/m.old"
[ $how = stopped ] || fail "SIGTERM while a FIFO's writer stalled: the import ended"
open_gate
echo "ok: SIGINT, SIGTERM while an input FIFO's writer never came or stalled: stopped, nothing written"

# the commit waits for another process's shared lock on the database (as a
# `redfox run --data DB` holds it): SIGHUP ends the wait, nothing written
if command -v flock >/dev/null 2>&1; then
    old_db db
    rm -f "$tmp/lockpid"
    flock -s -o "$tmp/db" sh -c 'echo $$ >"$0.t" && mv "$0.t" "$0" && exec sleep 60' "$tmp/lockpid" \
        </dev/null >/dev/null 2>&1 &
    wait_for "$tmp/lockpid" || fail "no lock holder"
    lockpid=$(cat "$tmp/lockpid")
    start "$tmp/pid" "$redfox" import "$prog" --data "$data" --out "$tmp/db" 2>"$tmp/err"
    spid=$!
    wait_for "$tmp/pid" || fail "lock: no import"
    # until it waits: sleeping between tries of the lock (clock_nanosleep,
    # nanosleep on x86-64 and arm64), else a while
    w=0
    while [ $w -lt 200 ]; do
        s=$(cut -d' ' -f1 "/proc/$(cat "$tmp/pid")/syscall" 2>/dev/null)
        case $s in 230 | 35 | 115 | 101) break ;; esac
        [ -r "/proc/$(cat "$tmp/pid")/syscall" ] || { sleep 2; break; }
        w=$((w + 1))
        sleep 0.05
    done
    kill -HUP "$(cat "$tmp/pid")"
    wait $spid
    outcome "SIGHUP while the commit waited for a lock" "$tmp/db" HUP $? "$tmp/m.old"
    [ $how = stopped ] || fail "SIGHUP while the commit waited for a lock: the import ended"
    kill "$lockpid"
    lockpid=
    echo "ok: SIGHUP while the commit waited for another process's lock: the wait ended, nothing written"
else
    echo "skipped: a signal while the commit waits for a lock (flock missing)"
fi

if command -v strace >/dev/null 2>&1; then
    # the commit's rename (no database before) and exchange (one before),
    # each held 1 s (-P: the database's path, so that no other rename takes
    # the delay): the signal inside lets it end; the old database removed
    # (no -P: strace 6.1 matches no rename() by its path; an import renames
    # nothing else)
    fresh_db db
    rm -f "$tmp/pid"
    $limit $nolsan strace -f -qq -o /dev/null -e trace=rename -e inject=rename:delay_enter=1000000:when=1 \
        $dflt sh -c "$mark" "$tmp/pid" \
        "$redfox" import "$prog" --data "$data" --out "$tmp/db" 2>"$tmp/err" &
    spid=$!
    wait_for "$tmp/db.tmp.*/manifest.rfdb" || fail "rename: no commit"
    kill -INT "$(cat "$tmp/pid")"
    wait $spid
    outcome "SIGINT during the commit's rename" "$tmp/db" INT $? none
    [ $how = complete ] || fail "SIGINT during the commit's rename: the import did not end"
    old_db db
    rm -f "$tmp/pid"
    $limit $nolsan strace -f -qq -o /dev/null -P "$tmp/db" -e trace=renameat2 -e inject=renameat2:delay_enter=1000000:when=1 \
        $dflt sh -c "$mark" "$tmp/pid" "$redfox" import "$prog" --data "$data" --out "$tmp/db" 2>"$tmp/err" &
    spid=$!
    wait_for "$tmp/db.tmp.*/manifest.rfdb" || fail "exchange: no commit"
    kill -TERM "$(cat "$tmp/pid")"
    wait $spid
    outcome "SIGTERM during the commit's exchange" "$tmp/db" TERM $? "$tmp/m.old"
    [ $how = complete ] || fail "SIGTERM during the commit's exchange: the import did not end"
    echo "ok: SIGINT, SIGTERM during the commit's rename or exchange: it ended, said, no folder left"
else
    echo "skipped: signals during the commit held by strace (strace missing)"
fi

# random moments of whole imports, from the temporary folder's creation on
t0=$(date +%s%N)
fresh_db db
"$redfox" import "$prog" --data "$data" --out "$tmp/db" 2>/dev/null || fail "the import"
span=$((($(date +%s%N) - t0) / 1000)) # microseconds
[ "$(rows_of "$tmp/db")" = "$want_rows" ] || fail "the import's rows"
r=0
seen=
for sig in INT TERM HUP INT; do
    r=$((r + 1))
    if [ $((r % 2)) -eq 1 ]; then fresh_db db; before=none; else old_db db; before=$tmp/m.old; fi
    start "$tmp/pid" "$redfox" import "$prog" --data "$data" --out "$tmp/db" 2>"$tmp/err"
    spid=$!
    wait_for "$tmp/db.tmp.*" || fail "round $r: no temporary folder"
    sleep "$(awk -v s=$r -v span=$span 'BEGIN { srand(s * 7 + 3); printf "%.4f", rand() * span * 0.9 / 1e6 }')"
    kill -$sig "$(cat "$tmp/pid")" 2>/dev/null
    wait $spid
    ANY_ZERO=1 outcome "import round $r (SIG$sig)" "$tmp/db" $sig $? "$before"
    seen="$seen $how"
done
echo "ok: import: $r signals at random moments:$seen"

# ---- redfox tpch gen --format db ------------------------------------------------
# the row counts, from the text generator (an independent writer); its
# time, about the database's, spreads the random moments
t0=$(date +%s%N)
"$redfox" tpch gen --sf 0.05 --out "$tmp/t05" 2>/dev/null || fail "tpch gen --sf 0.05"
span=$((($(date +%s%N) - t0) / 1000))
"$redfox" tpch gen --sf 0.01 --out "$tmp/t01" 2>/dev/null || fail "tpch gen --sf 0.01"
"$redfox" tpch gen --sf 0.01 --format db --out "$tmp/old01" 2>/dev/null || fail "tpch gen --sf 0.01 --format db"
lines() { wc -l <"$1" | tr -d ' '; }
cat >"$tmp/tcount.logic" <<'EOF'
nl(c) <- agg<<c = count()>> lineitem(_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _).
no(c) <- agg<<c = count()>> orders(_, _, _, _, _, _, _, _, _).
ns(c) <- agg<<c = count()>> supplier(_, _, _, _, _, _, _).
lang:output[`nl] = "nl".
lang:output[`no] = "no".
lang:output[`ns] = "ns".
EOF
# trows_of DB: lineitem's, orders' and supplier's rows
trows_of() {
    rm -rf "$tmp/rows"
    "$redfox" run "$src/tpch/queries/schema.logic" "$tmp/tcount.logic" --data "$1" --device cpu --out "$tmp/rows" \
        --format tbl 2>"$tmp/rows.err" || { cat "$tmp/rows.err"; fail "run on $1"; }
    echo "$(sed -n 2p "$tmp/rows/nl.tbl") $(sed -n 2p "$tmp/rows/no.tbl") $(sed -n 2p "$tmp/rows/ns.tbl")"
}
all05="$(lines "$tmp/t05/lineitem.tbl") $(lines "$tmp/t05/orders.tbl") $(lines "$tmp/t05/supplier.tbl")"
# lineitem anew at SF 0.05 over the SF 0.01 database: the rest kept
sub05="$(lines "$tmp/t05/lineitem.tbl") $(lines "$tmp/t01/orders.tbl") $(lines "$tmp/t01/supplier.tbl")"
cp "$tmp/old01/manifest.rfdb" "$tmp/m.old01"
# toutcome WHAT DB SIG CODE BEFORE WANT: settled, for a generation
toutcome() { settled "$@" trows_of "came while the database was put in place, which ended: it is complete"; }
r=0
seen=
for sig in INT TERM HUP; do
    r=$((r + 1))
    rm -rf "$tmp/tdb" "$tmp"/tdb.tmp.*
    if [ $r -le 2 ]; then
        before=none wrows=$all05 tables=
    else
        cp -r "$tmp/old01" "$tmp/tdb"
        before=$tmp/m.old01 wrows=$sub05 tables="--tables lineitem"
    fi
    # shellcheck disable=SC2086
    start "$tmp/pid" "$redfox" tpch gen --sf 0.05 --format db $tables --out "$tmp/tdb" 2>"$tmp/err"
    spid=$!
    wait_for "$tmp/tdb.tmp.*" || fail "tpch round $r: no temporary folder"
    sleep "$(awk -v s=$r -v span=$span 'BEGIN { srand(s * 5 + 1); printf "%.4f", rand() * span * 0.9 / 1e6 }')"
    kill -$sig "$(cat "$tmp/pid")" 2>/dev/null
    wait $spid
    ANY_ZERO=1 toutcome "tpch gen --format db $tables round $r (SIG$sig)" "$tmp/tdb" $sig $? "$before" "$wrows"
    seen="$seen $how"
done
if command -v strace >/dev/null 2>&1; then
    rm -rf "$tmp/tdb" "$tmp"/tdb.tmp.*
    cp -r "$tmp/old01" "$tmp/tdb"
    rm -f "$tmp/pid"
    $limit $nolsan strace -f -qq -o /dev/null -P "$tmp/tdb" -e trace=renameat2 -e inject=renameat2:delay_enter=1000000:when=1 \
        $dflt sh -c "$mark" "$tmp/pid" "$redfox" tpch gen --sf 0.05 --format db --tables lineitem --out "$tmp/tdb" \
        2>"$tmp/err" &
    spid=$!
    wait_for "$tmp/tdb.tmp.*/manifest.rfdb" || fail "tpch gen --tables: no commit"
    kill -HUP "$(cat "$tmp/pid")"
    wait $spid
    toutcome "SIGHUP during tpch gen --format db --tables's exchange" "$tmp/tdb" HUP $? "$tmp/m.old01" "$sub05"
    [ $how = complete ] || fail "SIGHUP during tpch gen --format db --tables's exchange: it did not end"
    seen="$seen, exchange held: $how"
fi
echo "ok: tpch gen --format db (--tables lineitem over a database): signals at random moments:$seen"

# ---- redfox tpch gen (text) -------------------------------------------------------
if command -v strace >/dev/null 2>&1; then
    # the second rename of a table (lineitem's) held 1 s, SIGINT sent once
    # the first (customer's) is done: every table then of SF 0.05 (the
    # first rename of all puts the journal listing them in place)
    rm -rf "$tmp/tt"
    cp -r "$tmp/t01" "$tmp/tt"
    rm -f "$tmp/pid"
    # (no -P: strace 6.1 matches no rename() by its path; tpch gen renames
    # nothing but its journal and its tables, customer's first)
    $limit $nolsan strace -f -qq -o /dev/null -e trace=rename -e inject=rename:delay_enter=1000000:when=3 \
        $dflt sh -c "$mark" "$tmp/pid" \
        "$redfox" tpch gen --sf 0.05 --out "$tmp/tt" 2>"$tmp/err" &
    spid=$!
    w=0
    until cmp -s "$tmp/tt/customer.tbl" "$tmp/t05/customer.tbl"; do
        w=$((w + 1))
        [ $w -lt 1000 ] || fail "tpch gen: no rename"
        sleep 0.02
    done
    kill -INT "$(cat "$tmp/pid")"
    wait $spid
    code=$?
    [ $code -eq 130 ] || { cat "$tmp/err"; fail "SIGINT during tpch gen's renames: status $code, not 130"; }
    no_tmp "SIGINT during tpch gen's renames"
    for f in "$tmp/t05"/*.tbl; do
        cmp -s "$f" "$tmp/tt/${f##*/}" || fail "SIGINT during tpch gen's renames: ${f##*/} is not the new table"
    done
    grep -q "^$tmp/tt: note: SIGINT came while the tables were put in place, which ended: they are complete$" "$tmp/err" ||
        { cat "$tmp/err"; fail "SIGINT during tpch gen's renames: not said"; }
    echo "ok: SIGINT during tpch gen's renames: all of them ended, said"
fi
# a signal before the renames: the old tables, no temporary
rm -rf "$tmp/tt"
cp -r "$tmp/t01" "$tmp/tt"
start "$tmp/pid" "$redfox" tpch gen --sf 0.05 --out "$tmp/tt" 2>"$tmp/err"
spid=$!
wait_for "$tmp/tt/.lineitem.tbl.redfox-*" || fail "tpch gen: no temporaries"
kill -TERM "$(cat "$tmp/pid")"
wait $spid
code=$?
[ $code -eq 143 ] || { cat "$tmp/err"; fail "SIGTERM during tpch gen: status $code, not 143"; }
no_tmp "SIGTERM during tpch gen"
for f in "$tmp/t01"/*.tbl; do
    cmp -s "$f" "$tmp/tt/${f##*/}" || fail "SIGTERM during tpch gen: ${f##*/} is not the old table"
done
echo "ok: SIGTERM before tpch gen's renames: the old tables, no temporary"
