#!/bin/sh
# tests/run_output_safety.sh REDFOX TC_GRAPH CASE: outputs are written aside
# and renamed into place (common/rf_file.h). CASE is one of:
#   concurrent  two runs on one --out folder at once: the folder ends equal
#               to one run's output exactly, both files from the same run
#   kill        runs killed with SIGKILL and SIGTERM while writing: the old
#               files stay intact, SIGTERM leaves no temporary, the next run
#               removes SIGKILL's
#   symlink     a symbolic link at an output's name is refused and its target
#               untouched; nothing in the folder changes
#   full        disk full and file-size limits: the error names the reason,
#               nothing partial under a final name, devices stay devices;
#               tpch run, tpch bench and --help into a full disk say so
#   csv         --format csv is RFC 4180: quoting of comma, quote and line
#               breaks, doubled quotes, read back by a CSV reader when
#               python3 is there
#   inputs      an output that names one of the command's own inputs is
#               refused (exit 2, naming the option) and the input kept:
#               compile -o the source (any spelling), run --trace the
#               program, run --out the data folder with an output named like
#               an input, tpch run --check D --out D
set -u
redfox=$1
tc_graph=$2
case_=$3
tmp=${TMPDIR:-/tmp}/rf_outsafe.$$
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cat >"$tmp/tc.logic" <<'EOF'
edge(x, y) -> int(x), int(y).
lang:input[`edge] = "edges.tbl".
path(x, y) <- edge(x, y).
path(x, z) <- path(x, y), edge(y, z).
path_count[] = n <- agg<<n = count()>> path(x, y).
lang:output[`path] = "path".
lang:output[`path_count] = "path_count".
EOF
"$redfox" compile "$tmp/tc.logic" -o "$tmp/tc.rfx" || fail "compile"

# data sets: a big graph (millions of paths, tens of MB of CSV) and a small one
mkdata() { mkdir -p "$tmp/$1" && "$tc_graph" "$2" "$3" "$4" >"$tmp/$1/edges.tbl" || fail "tc_graph"; }
run() { "$redfox" run "$tmp/tc.rfx" --device cpu --data "$tmp/$1" --out "$2"; }
# the folder holds exactly the two outputs (and the lock file)
only_outputs() {
    extra=$(ls -A "$1" | grep -v -x -e path.csv -e path_count.csv -e .redfox.lock)
    [ -z "$extra" ] || fail "$2: unexpected files in the folder: $extra"
}
same_as() { cmp -s "$1/path.csv" "$2/path.csv" && cmp -s "$1/path_count.csv" "$2/path_count.csv"; }

case $case_ in
concurrent)
    mkdata a 1500 3000 1
    mkdata b 1500 3000 2
    run a "$tmp/ref_a" 2>/dev/null || fail "run a"
    run b "$tmp/ref_b" 2>/dev/null || fail "run b"
    same_as "$tmp/ref_a" "$tmp/ref_b" && fail "the two data sets give the same output"
    for trial in 1 2 3; do
        out=$tmp/out$trial
        "$redfox" run "$tmp/tc.rfx" --device cpu --data "$tmp/a" --out "$out" 2>"$tmp/err_a" &
        pa=$!
        "$redfox" run "$tmp/tc.rfx" --device cpu --data "$tmp/b" --out "$out" 2>"$tmp/err_b" &
        pb=$!
        wait $pa; ra=$?
        wait $pb; rb=$?
        [ $ra -eq 0 ] || { cat "$tmp/err_a"; fail "trial $trial: run a exited $ra"; }
        [ $rb -eq 0 ] || { cat "$tmp/err_b"; fail "trial $trial: run b exited $rb"; }
        if ! same_as "$out" "$tmp/ref_a" && ! same_as "$out" "$tmp/ref_b"; then
            fail "trial $trial: the folder matches neither run (or mixes them)"
        fi
        only_outputs "$out" "trial $trial"
        grep -h . "$tmp/err_a" "$tmp/err_b" | grep -v -q "waiting for another process writing to" &&
            fail "trial $trial: unexpected messages: $(cat "$tmp/err_a" "$tmp/err_b")"
    done
    # the lock held by another kind of writer (tpch gen writes a folder under
    # the same lock): the wait names a process, not "another run"
    if command -v flock >/dev/null 2>&1; then
        rm -f "$tmp/locked"
        flock "$out/.redfox.lock" sh -c 'touch "$0"; sleep 2' "$tmp/locked" &
        fl=$!
        i=0
        while [ ! -e "$tmp/locked" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        run a "$out" 2>"$tmp/err_w" || fail "run while another process holds the lock"
        wait $fl
        grep -q "^redfox run: waiting for another process writing to $out (it holds $out/.redfox.lock)$" "$tmp/err_w" ||
            fail "the wait for the lock: $(cat "$tmp/err_w")"
        # a run reading the folder (its shared lock, held here by flock):
        # the outputs are put in place once it ends, never while it reads
        # (a reader of a.csv and b.csv saw one run's a and another's b)
        run a "$out" 2>/dev/null || fail "run a"
        rm -f "$tmp/rlocked"
        flock -s "$out" sh -c 'touch "$0"; sleep 3' "$tmp/rlocked" &
        fl=$!
        i=0
        while [ ! -e "$tmp/rlocked" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        run b "$out" 2>"$tmp/err_r" &
        pr=$!
        sleep 1.5
        same_as "$out" "$tmp/ref_a" || fail "run --out put its outputs in place while a run read the folder"
        wait $pr || { cat "$tmp/err_r"; fail "run --out beside a reader"; }
        wait $fl
        same_as "$out" "$tmp/ref_b" || fail "run --out beside a reader: not its outputs once the reader ended"
        grep -q "^$out: note: waited for the runs reading this folder before putting the outputs in place$" "$tmp/err_r" ||
            fail "the wait for the readers: $(cat "$tmp/err_r")"
    fi
    ;;
kill)
    mkdata big 1500 3000 3
    mkdata small 40 60 4
    run small "$tmp/ref_small" || fail "run small"
    caught=0
    for sig in KILL TERM KILL TERM KILL TERM; do
        out=$tmp/out_$sig
        rm -rf "$out"
        run small "$out" || fail "run small"
        # redfox itself in the background (not a shell function: $! would be a subshell)
        "$redfox" run "$tmp/tc.rfx" --device cpu --data "$tmp/big" --out "$out" 2>/dev/null &
        pid=$!
        # wait for a temporary to appear, then kill: the run is writing (up
        # to about 30 s: on a loaded machine the big run reaches its writing
        # late, and a kill before it would not count as caught)
        i=0
        seen=0
        while [ $i -lt 15000 ] && kill -0 $pid 2>/dev/null; do
            if ls -A "$out" | grep -q '\.redfox-.*\.tmp$'; then seen=1; break; fi
            sleep 0.002 2>/dev/null || sleep 1
            i=$((i + 1))
        done
        kill -$sig $pid 2>/dev/null
        wait $pid
        rc=$?
        if [ $seen -eq 1 ] && [ $rc -gt 128 ]; then
            caught=$((caught + 1))
            # the old outputs, or (the signal came as the renames ran, or after
            # them) the new ones whole, never some of each
            if ! same_as "$out" "$tmp/ref_small"; then
                [ -f "$tmp/ref_big/path.csv" ] || run big "$tmp/ref_big" 2>/dev/null || fail "run big"
                same_as "$out" "$tmp/ref_big" || fail "SIG$sig mid-write: the old files changed, not for the new ones whole"
            fi
            if [ $sig = TERM ]; then
                only_outputs "$out" "SIGTERM mid-write left a temporary:"
            else
                ls -A "$out" | grep -q '\.redfox-.*\.tmp$' || echo "note: SIGKILL left no temporary"
                run small "$out" || fail "run after SIGKILL"
                only_outputs "$out" "the run after SIGKILL did not remove the stale temporary:"
            fi
        else
            # the run ended before the kill: it must then be complete
            [ $rc -eq 0 ] || [ $rc -gt 128 ] || fail "run big exited $rc"
            if [ $rc -eq 0 ]; then
                run big "$tmp/ref_big" 2>/dev/null || fail "run big"
                same_as "$out" "$tmp/ref_big" || fail "a finished run's files differ"
            else
                same_as "$out" "$tmp/ref_small" || fail "killed before writing: the old files changed"
            fi
        fi
        ls -A "$out" | grep -v -x -e path.csv -e path_count.csv -e .redfox.lock -e '\..*\.redfox-.*\.tmp' &&
            fail "unexpected files after SIG$sig"
    done
    [ $caught -ge 2 ] || fail "caught a run mid-write only $caught times in 6"
    echo "killed mid-write $caught times in 6"
    # the temporaries that a SIGKILL left beside compile -o's program, run
    # --trace's timeline and tpch bench --json's file (named as theirs, the
    # process gone, untouched for ten minutes) are removed by the next writer
    # of that file, as run --out's are; a recent one is kept (a writer of
    # another pid namespace may still write it). They stayed for ever.
    mkdir -p "$tmp/stale"
    for f in tc.rfx t.json b.json; do
        echo part >"$tmp/stale/.$f.redfox-4194000-0.tmp"; echo part >"$tmp/stale/.$f.redfox-4194001-0.tmp"
        touch -d '1 hour ago' "$tmp/stale/.$f.redfox-4194000-0.tmp"
    done
    "$redfox" compile "$tmp/tc.logic" -o "$tmp/stale/tc.rfx" 2>/dev/null || fail "compile -o"
    "$redfox" run "$tmp/tc.rfx" --device cpu --data "$tmp/small" --trace "$tmp/stale/t.json" >/dev/null 2>&1 || fail "run --trace"
    "$redfox" tpch gen --sf 0.01 --tables lineitem --out "$tmp/tpch" 2>/dev/null || fail "tpch gen"
    "$redfox" tpch bench --data "$tmp/tpch" --sf 0.01 --queries 6 --repeat 1 --device cpu --json "$tmp/stale/b.json" \
        >/dev/null 2>&1 || fail "tpch bench --json"
    for f in tc.rfx t.json b.json; do
        [ -f "$tmp/stale/$f" ] || fail "$f not written"
        [ -e "$tmp/stale/.$f.redfox-4194000-0.tmp" ] && fail "the stale temporary of $f was kept"
        [ -e "$tmp/stale/.$f.redfox-4194001-0.tmp" ] || fail "a recent temporary of $f was removed"
    done
    # a SIGINT, SIGTERM or SIGHUP during the renames (strace sends it as the
    # first one returns): they all end, and the process ends by the signal
    # saying that the outputs are in place; tpch run --out (all or none)
    # ended at once, its results in the folder some new, some old, and run
    # --out said nothing of the outputs it had put in place
    if command -v strace >/dev/null 2>&1; then
        out=$tmp/out_held
        rm -rf "$out"
        run small "$out" || fail "run small"
        # (LeakSanitizer cannot run under ptrace)
        ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 strace -f -qq -o /dev/null -e trace=rename \
            -e inject=rename:signal=TERM:when=1 "$redfox" run "$tmp/tc.rfx" --device cpu --data "$tmp/big" --out "$out" \
            2>"$tmp/err"
        rc=$?
        [ -f "$tmp/ref_big/path.csv" ] || run big "$tmp/ref_big" 2>/dev/null || fail "run big"
        [ $rc -eq 143 ] && same_as "$out" "$tmp/ref_big" || { cat "$tmp/err"; fail "SIGTERM during the renames: exit $rc, or not the new outputs"; }
        grep -q "^redfox run: stopped by SIGTERM once the outputs were in place: all 2 are written to $out\$" "$tmp/err" ||
            { cat "$tmp/err"; fail "SIGTERM during the renames: not said"; }
        only_outputs "$out" "SIGTERM during the renames left a temporary:"
        "$redfox" tpch run --data "$tmp/tpch" --queries 1,6 --device cpu --out "$tmp/tq_ref" >/dev/null 2>&1 || fail "tpch run"
        for sig in INT HUP; do
            mkdir -p "$tmp/tq"; echo old >"$tmp/tq/q01.csv"; echo old >"$tmp/tq/q06.csv"
            ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 strace -f -qq -o /dev/null -e trace=rename \
                -e inject=rename:signal=$sig:when=1 "$redfox" tpch run --data "$tmp/tpch" --queries 1,6 --device cpu \
                --out "$tmp/tq" >/dev/null 2>"$tmp/err"
            rc=$?
            cmp -s "$tmp/tq/q01.csv" "$tmp/tq_ref/q01.csv" && cmp -s "$tmp/tq/q06.csv" "$tmp/tq_ref/q06.csv" ||
                { cat "$tmp/err"; fail "tpch run --out, SIG$sig during the renames: not all the new results (a mix)"; }
            [ $rc -gt 128 ] && grep -q "^redfox tpch run: stopped by SIG$sig once the results were in place: all 2 are written" "$tmp/err" ||
                { cat "$tmp/err"; fail "tpch run --out, SIG$sig during the renames: exit $rc, or not said"; }
            ls -A "$tmp/tq" | grep -q '\.tmp$' && fail "tpch run --out, SIG$sig: a temporary left"
        done
    fi
    ;;
symlink)
    mkdata small 40 60 4
    out=$tmp/out
    run small "$out" || fail "run"
    cp "$out/path_count.csv" "$tmp/count_before"
    echo "do not touch" >"$tmp/victim"
    rm "$out/path.csv"
    ln -s "$tmp/victim" "$out/path.csv"
    mkdata other 50 80 5
    run other "$out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "exit $rc with a link at path.csv, expected 1"
    grep -q "path.csv.*symbolic link" "$tmp/err" || fail "the error does not name the link: $(cat "$tmp/err")"
    [ "$(cat "$tmp/victim")" = "do not touch" ] || fail "the link's target was written"
    [ -L "$out/path.csv" ] || fail "the link was removed"
    cmp -s "$out/path_count.csv" "$tmp/count_before" || fail "the other output changed"
    ls -A "$out" | grep -q '\.tmp$' && fail "a temporary was left"
    # compile -o through a link: refused too
    ln -s "$tmp/victim" "$tmp/prog.rfx"
    "$redfox" compile "$tmp/tc.logic" -o "$tmp/prog.rfx" 2>"$tmp/err" && fail "compile wrote through a link"
    grep -q "symbolic link" "$tmp/err" || fail "compile's error: $(cat "$tmp/err")"
    [ "$(cat "$tmp/victim")" = "do not touch" ] || fail "compile wrote the link's target"
    # the folder's lock file a link, or a folder: refused, saying what it is
    # (a link gave "Too many levels of symbolic links")
    rm -f "$out/path.csv" "$out/.redfox.lock"
    ln -s "$tmp/victim" "$out/.redfox.lock"
    run small "$out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "exit $rc with a link as the lock file, expected 1"
    grep -q "redfox.lock: error: cannot lock the output folder: its lock file is a symbolic link" "$tmp/err" ||
        fail "the lock file a link: $(cat "$tmp/err")"
    [ "$(cat "$tmp/victim")" = "do not touch" ] || fail "the lock file's link was written through"
    rm -f "$out/.redfox.lock"
    mkdir "$out/.redfox.lock"
    run small "$out" 2>"$tmp/err" && fail "a folder as the lock file: exit 0"
    grep -q "redfox.lock: error: cannot lock the output folder: its lock file is a folder" "$tmp/err" ||
        fail "the lock file a folder: $(cat "$tmp/err")"
    rmdir "$out/.redfox.lock"
    run small "$out" || fail "run once the lock file is removed"
    ;;
full)
    mkdata small 40 60 4
    # standard output on a full device
    if [ -c /dev/full ]; then
        "$redfox" run "$tmp/tc.rfx" --device cpu --data "$tmp/small" --format csv >/dev/full 2>"$tmp/err"
        rc=$?
        [ $rc -eq 1 ] || fail "run >/dev/full exited $rc"
        grep -q "No space left on device" "$tmp/err" || fail "run >/dev/full: $(cat "$tmp/err")"
        "$redfox" compile "$tmp/tc.logic" -o /dev/full 2>"$tmp/err"
        rc=$?
        [ $rc -eq 1 ] || fail "compile -o /dev/full exited $rc"
        grep -q "/dev/full.*No space left on device" "$tmp/err" || fail "compile -o /dev/full: $(cat "$tmp/err")"
        [ -c /dev/full ] || fail "/dev/full is no longer a device"
        "$redfox" compile "$tmp/tc.logic" -o /dev/null || fail "compile -o /dev/null"
        [ -c /dev/null ] || fail "/dev/null is no longer a device"
        # tpch run and bench said nothing (exit 1), --help exited 0 with its text lost
        "$redfox" tpch gen --sf 0.01 --tables lineitem,supplier --out "$tmp/tpch" 2>/dev/null || fail "tpch gen"
        for cmd in "tpch run --data $tmp/tpch --queries 6 --device cpu" \
                   "tpch bench --data $tmp/tpch --queries 6 --repeat 1 --device cpu" "tpch gen --help" "--version"; do
            $redfox $cmd >/dev/full 2>"$tmp/err"
            rc=$?
            [ $rc -eq 1 ] || fail "$cmd >/dev/full exited $rc"
            grep -q "cannot write the output: No space left on device" "$tmp/err" || fail "$cmd >/dev/full: $(cat "$tmp/err")"
        done
    else
        echo "no /dev/full: skipped its part"
    fi
    # a file-size limit (as a full disk, on a file the run writes): the reason, the old files kept
    out=$tmp/out
    run small "$out" || fail "run small"
    mkdata big 600 1200 6
    (ulimit -f 64 && run big "$out") 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "run over the file-size limit exited $rc"
    grep -q "path.csv.*File too large" "$tmp/err" || fail "the error lacks the reason: $(cat "$tmp/err")"
    run small "$tmp/ref_small" || fail "run small"
    same_as "$out" "$tmp/ref_small" || fail "the old files changed"
    only_outputs "$out" "after the failed write"
    # tpch gen: the same
    "$redfox" tpch gen --sf 0.01 --tables nation --out "$tmp/tbl" || fail "tpch gen nation"
    cp "$tmp/tbl/nation.tbl" "$tmp/nation_before"
    (ulimit -f 64 && "$redfox" tpch gen --sf 0.01 --tables nation,customer --out "$tmp/tbl") 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || fail "tpch gen over the limit exited $rc"
    grep -q "File too large" "$tmp/err" || fail "tpch gen's error: $(cat "$tmp/err")"
    [ -e "$tmp/tbl/customer.tbl" ] && fail "tpch gen left a partial customer.tbl"
    cmp -s "$tmp/tbl/nation.tbl" "$tmp/nation_before" || fail "tpch gen changed nation.tbl"
    ls -A "$tmp/tbl" | grep -q '\.tmp$' && fail "tpch gen left a temporary"
    ;;
csv)
    cat >"$tmp/q.logic" <<'EOF'
s(i, t) -> int(i), string(t).
s(1, "plain").
s(2, "a,b").
s(3, "say \"hi\"").
s(4, "two\nlines").
s(5, "").
s(6, "back\\slash|pipe").
lang:output[`s] = "s".
EOF
    "$redfox" run "$tmp/q.logic" --device cpu --format csv >"$tmp/out.csv" 2>"$tmp/err" || fail "run: $(cat "$tmp/err")"
    printf '%s\n' 'i,t' '1,plain' '2,"a,b"' '3,"say ""hi"""' '4,"two' 'lines"' '5,' '6,back\slash|pipe' >"$tmp/want.csv"
    diff -u "$tmp/want.csv" "$tmp/out.csv" || fail "--format csv differs from RFC 4180"
    "$redfox" run "$tmp/q.logic" --device cpu --out "$tmp/o" 2>"$tmp/err" || fail "run --out: $(cat "$tmp/err")"
    cmp -s "$tmp/o/s.csv" "$tmp/want.csv" || fail "--out wrote another CSV than --format csv"
    "$redfox" run "$tmp/q.logic" --device cpu --format tbl --out "$tmp/o" || fail "run --format tbl --out"
    # strings with a '|' or a line break quoted as in CSV (they read back as written)
    printf '%s\n' 'i|t' '1|plain' '2|a,b' '3|say "hi"' '4|"two' 'lines"' '5|' '6|"back\slash|pipe"' >"$tmp/want.tbl"
    diff -u "$tmp/want.tbl" "$tmp/o/s.tbl" || fail "--format tbl changed"
    if command -v python3 >/dev/null 2>&1; then
        python3 - "$tmp/out.csv" <<'EOF' || fail "a CSV reader does not read back the strings"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
want = [["i", "t"], ["1", "plain"], ["2", "a,b"], ["3", 'say "hi"'], ["4", "two\nlines"], ["5", ""],
        ["6", "back\\slash|pipe"]]
sys.exit(0 if rows == want else 1)
EOF
    else
        echo "no python3: the round trip through a CSV reader skipped"
    fi
    ;;
inputs)
    mkdata small 40 60 4
    cp "$tmp/tc.logic" "$tmp/small/tc.logic"
    sed 's/= "path"/= "res"/' "$tmp/tc.logic" >"$tmp/small/res.csv" # a program named like its output
    cp -r "$tmp/small" "$tmp/orig"
    unchanged() { diff -r "$tmp/orig" "$tmp/small" >/dev/null || fail "$1: an input changed"; }
    refused() { # refused OPTION WHAT CMD...: exit 2 naming OPTION, the inputs unchanged
        opt=$1 what=$2
        shift 2
        "$@" >/dev/null 2>"$tmp/err"
        rc=$?
        [ $rc -eq 2 ] || fail "$what: exit $rc, expected 2 ($(cat "$tmp/err"))"
        grep -q -e "$opt" "$tmp/err" || fail "$what: the error names no $opt: $(cat "$tmp/err")"
        unchanged "$what"
    }
    cd "$tmp/small" || fail "cd"
    refused "-o" "compile -o the source" "$redfox" compile tc.logic -o tc.logic
    refused "-o" "compile -o ./the source" "$redfox" compile tc.logic -o ./tc.logic
    refused "-o" "compile -o dir/../the source" "$redfox" compile tc.logic -o "$tmp/orig/../small/tc.logic"
    refused "-o" "compile -o the first of two files" "$redfox" compile tc.logic "$tmp/tc.logic" -o tc.logic
    refused "--trace" "run --trace the program" "$redfox" run tc.logic --device cpu --trace tc.logic
    refused "--trace" "run --trace an input file" "$redfox" run tc.logic --device cpu --trace edges.tbl
    sed 's/= "path"/= "edges"/' tc.logic >"$tmp/p3.logic"
    refused "--out" "run --out the data folder" "$redfox" run "$tmp/p3.logic" --device cpu --format tbl --out .
    refused "--out" "run --out the program's folder" \
        "$redfox" run "$tmp/small/res.csv" --device cpu --format csv --out "$tmp/small" --data "$tmp/orig"
    sed 's/= "path"/= "tc_as"/' "$tmp/tc.logic" >"$tmp/tc_as.logic"
    cp "$tmp/tc_as.logic" "$tmp/tc_as.before"
    "$redfox" run "$tmp/tc_as.logic" --device cpu --format table --out "$tmp" --data "$tmp/small" >/dev/null 2>&1
    cmp -s "$tmp/tc_as.logic" "$tmp/tc_as.before" && [ -e "$tmp/tc_as.txt" ] ||
        fail "run --out: an output named like the program but of another extension was not written"
    # what is allowed still works: the default output, a new file, a device
    "$redfox" compile tc.logic >/dev/null || fail "compile to tc.rfx"
    "$redfox" compile tc.logic -o /dev/null >/dev/null || fail "compile -o /dev/null"
    "$redfox" run tc.logic --device cpu --trace "$tmp/t.json" >/dev/null || fail "run --trace a new file"
    rm -f tc.rfx
    unchanged "the allowed commands"
    # tpch run --check D --out D: refused before anything runs, the answers kept
    mkdir -p "$tmp/ans"
    echo "reference" >"$tmp/ans/q06.csv"
    refused "--out" "tpch run --check D --out D" \
        "$redfox" tpch run --data "$tmp/small" --device cpu --queries 6 --check "$tmp/ans" --out "$tmp/../$(basename "$tmp")/ans"
    [ "$(cat "$tmp/ans/q06.csv")" = "reference" ] || fail "tpch run: the answers were replaced"
    # tpch bench --json naming its --duckdb file
    echo "q06 1.5 ms" >"$tmp/duck.txt"
    refused "--json" "tpch bench --json the --duckdb file" \
        "$redfox" tpch bench --data "$tmp/small" --sf 0.01 --queries 6 --duckdb "$tmp/duck.txt" --json "$tmp/duck.txt"
    [ "$(cat "$tmp/duck.txt")" = "q06 1.5 ms" ] || fail "tpch bench: the --duckdb file was replaced"
    cd / || fail "cd /"
    ;;
*) fail "unknown case $case_" ;;
esac
exit 0
