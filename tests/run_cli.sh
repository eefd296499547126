#!/bin/sh
# tests/run_cli.sh REDFOX TESTS_DIR: exit statuses and messages of the CLI.
r=$1
t=$2
fail=0
check() { # expected-status description command...
    want=$1; what=$2; shift 2
    "$@" >/dev/null 2>"${TMPDIR:-/tmp}/rf_cli.$$"
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL: $what: exit $got, expected $want"; cat "${TMPDIR:-/tmp}/rf_cli.$$"; fail=1
    fi
}
check 0 "help" "$r" --help
check 0 "compile help" "$r" compile --help
check 0 "dump help" "$r" dump --help
check 0 "run help" "$r" run --help
check 0 "tpch help" "$r" tpch --help
# bench's --sf is optional (the data's own by default: tpch bench --help)
"$r" tpch --help | grep -qF 'bench --data DIR [--sf X]' || { echo "FAIL: tpch --help shows bench's --sf as required"; fail=1; }
# every option a command's --help lists under "options:" is in its usage
# lines too (tpch run and bench listed --cache-dir DIR | --no-cache only below)
for c in run compile exec import dump "tpch run" "tpch bench" "tpch gen"; do
    # shellcheck disable=SC2086
    h=$("$r" $c --help 2>&1)
    u=$(printf '%s\n' "$h" | awk 'NF == 0 { exit } { print }')
    for o in $(printf '%s\n' "$h" | awk 'f && /^  --[a-z]/ { print $1 } /^options:/ { f = 1 }' | tr -d ',' | sort -u); do
        printf '%s\n' "$u" | grep -q -- "$o\b" || { echo "FAIL: redfox $c --help: $o not in its usage lines"; fail=1; }
    done
done
check 2 "no command" "$r"
check 2 "unknown option" "$r" compile --frobnicate "$t/logiql/even_odd.logic"
check 2 "dump without what" "$r" dump "$t/logiql/even_odd.logic"
check 2 "dump bad format" "$r" dump --plan --format xml "$t/logiql/even_odd.logic"
check 2 "missing option value" "$r" dump --plan "$t/logiql/even_odd.logic" --format
check 1 "missing file" "$r" compile "$t/does-not-exist.logic"
check 0 "compile ok" "$r" compile "$t/logiql/even_odd.logic"
check 0 "dump plan" "$r" dump --plan "$t/logiql/even_odd.logic"
check 0 "dump plan yaml" "$r" dump --plan --format yaml "$t/logiql/even_odd.logic"
check 0 "dump plan dot" "$r" dump --plan --format dot "$t/logiql/even_odd.logic"
check 2 "dump rules as svg" "$r" dump --rules --format svg "$t/logiql/even_odd.logic"
# svg: Graphviz draws the dot graph; without dot on PATH, a message and exit 1
# (tools/install-deps.sh installs graphviz, so CI checks the drawing too)
mkdir -p "${TMPDIR:-/tmp}/rf_cli_nodot.$$"
check 1 "dump svg without dot" env PATH="${TMPDIR:-/tmp}/rf_cli_nodot.$$" "$r" dump --plan --format svg "$t/logiql/even_odd.logic"
grep -q "needs Graphviz" "${TMPDIR:-/tmp}/rf_cli.$$" || { echo "FAIL: dump svg without dot: no message"; fail=1; }
rmdir "${TMPDIR:-/tmp}/rf_cli_nodot.$$"
if command -v dot >/dev/null 2>&1; then
    svg=$("$r" dump --plan --format svg "$t/logiql/even_odd.logic" 2>/dev/null)
    dotg=$("$r" dump --plan --format dot "$t/logiql/even_odd.logic" 2>/dev/null)
    arrows=$(printf '%s\n' "$dotg" | grep -c -- '^ *B[0-9]* -> ')
    edges=$(printf '%s\n' "$svg" | grep -c 'class="edge"')
    case "$svg" in *"<svg"*"</svg>"*) ;; *) echo "FAIL: dump svg: no <svg> document"; fail=1 ;; esac
    [ "$arrows" -eq "$edges" ] || { echo "FAIL: dump svg: $edges drawn edges, the dot graph has $arrows"; fail=1; }
else
    echo "note: Graphviz's dot is not installed: the svg drawing is not checked"
fi
check 0 "dump ast yaml" "$r" dump --ast --format yaml "$t/logiql/even_odd.logic"
check 0 "dump harmony" "$r" dump --harmony "$t/logiql/even_odd.logic"
check 0 "dump fused" "$r" dump --fused "$t/logiql/even_odd.logic"
check 0 "dump cuda" "$r" dump --cuda "$t/logiql/even_odd.logic"
check 2 "dump ptx as yaml" "$r" dump --ptx --format yaml "$t/logiql/even_odd.logic"
check 2 "run --repeat 0" "$r" run "$t/logiql/even_odd.logic" --repeat 0
check 2 "run --repeat not a number" "$r" run "$t/logiql/even_odd.logic" --repeat x
# --repeat on several ranks: each rank reads its share of a text file once too
# (it read it again each run, and the help said so)
"$r" run --help | tr -s ' \n' ' ' | grep -q "on several ranks each rank's share of a text file, or of a database's columns, once" ||
    { echo "FAIL: run --help: --repeat does not say what ranks read once"; fail=1; }
# --trace on several ranks: whose timeline the file holds (it did not say)
"$r" run --help | grep -q "On several ranks, rank 0 writes its own timeline" ||
    { echo "FAIL: run --help: --trace does not say what ranks write"; fail=1; }
# whole numbers only: a blank or a plus before the digits was taken (--gpus ' 2')
for opt in --repeat --threads --max-iterations --gpus; do
    for bad in " 2" "+2" "2 " "	2"; do
        check 2 "run $opt '$bad'" "$r" run "$t/logiql/even_odd.logic" --device cpu "$opt" "$bad"
    done
done
check 2 "tpch run --repeat ' 2'" "$r" tpch run --data "$t" --repeat " 2"
check 2 "import --threads '+1'" "$r" import "$t/logiql/even_odd.logic" --out "${TMPDIR:-/tmp}/rf_cli_imp.$$" --threads "+1"
# --repeat N: one time line per run on stderr, the outputs once (the last run's)
out=$("$r" run "$t/logiql/even_odd.logic" --device cpu --repeat 3 --format csv 2>"${TMPDIR:-/tmp}/rf_cli_rep.$$")
once=$("$r" run "$t/logiql/even_odd.logic" --device cpu --format csv 2>/dev/null)
lines=$(grep -c '^run [123] of 3 (device cpu): load [0-9.]* s, run [0-9.]* s$' "${TMPDIR:-/tmp}/rf_cli_rep.$$")
if [ "$lines" -ne 3 ] || [ "$out" != "$once" ]; then
    echo "FAIL: run --repeat 3: $lines time lines, outputs equal: $([ "$out" = "$once" ] && echo yes || echo no)"
    cat "${TMPDIR:-/tmp}/rf_cli_rep.$$"; fail=1
fi
# --repeat with input files (read once, shared by the runs): the same outputs
# as one run, on the CPU and on the emulated GPU
for dev in cpu emu; do
    if [ $dev = emu ]; then env="RF_GPU_EMULATE=1"; flag="--device gpu"; else env="RF_NONE=1"; flag="--device cpu"; fi
    out=$(env $env "$r" run "$t/e2e/aggregates.logic" $flag --data "$t/e2e/data" --repeat 3 --format csv 2>/dev/null)
    once=$(env $env "$r" run "$t/e2e/aggregates.logic" $flag --data "$t/e2e/data" --format csv 2>/dev/null)
    if [ -z "$out" ] || [ "$out" != "$once" ]; then
        echo "FAIL: run --repeat 3 with inputs ($dev): outputs differ from one run"; fail=1
    fi
done
# --repeat with --device auto: the note saying where the runs ran comes once
"$r" run "$t/e2e/aggregates.logic" --data "$t/e2e/data" --repeat 3 >/dev/null 2>"${TMPDIR:-/tmp}/rf_cli_rep.$$"
notes=$(grep -c 'running on the' "${TMPDIR:-/tmp}/rf_cli_rep.$$")
if [ "$notes" -ne 1 ]; then
    echo "FAIL: run --repeat 3: $notes notes on where it ran, expected 1"; cat "${TMPDIR:-/tmp}/rf_cli_rep.$$"; fail=1
fi
# --set gpu_trace=on: the run's device operations on stderr, launches among them
RF_GPU_EMULATE=1 "$r" run "$t/e2e/aggregates.logic" --device gpu --data "$t/e2e/data" --set gpu_trace=on \
    >/dev/null 2>"${TMPDIR:-/tmp}/rf_cli_rep.$$"
if ! grep -q '^gpu trace: *[0-9.]* ms *[0-9.]* ms  launch [a-z_0-9]* n=[0-9]*$' "${TMPDIR:-/tmp}/rf_cli_rep.$$"; then
    echo "FAIL: --set gpu_trace=on: no launch lines"; cat "${TMPDIR:-/tmp}/rf_cli_rep.$$"; fail=1
fi
# A missing data folder: needed only by a program with inputs, and then named
# with the first input that reads it, after the program's own errors
e="${TMPDIR:-/tmp}/rf_cli_data.$$"
check 0 "no inputs, no data folder" "$r" run "$t/logiql/even_odd.logic" --data "$t/no-such-folder"
check 1 "inputs, no data folder" "$r" run "$t/e2e/tc.logic" --data "$t/no-such-folder"
"$r" run "$t/e2e/tc.logic" --data "$t/no-such-folder" 2>"$e" >/dev/null
if ! grep -qxF "redfox: error: the data folder $t/no-such-folder does not exist: input \`edge\` reads $t/no-such-folder/edges.tbl" "$e"; then
    echo "FAIL: missing data folder: the message names neither the folder nor the input"; cat "$e"; fail=1
fi
"$r" run "$t/e2e/tc.logic" --data "$t/e2e/tc.logic" 2>"$e" >/dev/null
if ! grep -qF "the data folder $t/e2e/tc.logic is not a folder: input \`edge\`" "$e"; then
    echo "FAIL: --data a file: not named as such"; cat "$e"; fail=1
fi
# run --out FILE fails before the run (not after it, losing its outputs): a
# program that would fail at run time fails on --out instead
printf 'p(x) -> int(x).\np(1).\nq(y) <- p(x), y = x / 0.\nlang:output[`q] = "q".\n' >"${TMPDIR:-/tmp}/rf_cli_div.$$.logic"
"$r" run "${TMPDIR:-/tmp}/rf_cli_div.$$.logic" --device cpu --out "$t/e2e/tc.logic" 2>"$e" >/dev/null
if [ $? -ne 1 ] || ! grep -qF -- "--out $t/e2e/tc.logic: not a folder" "$e" || grep -q "division" "$e"; then
    echo "FAIL: run --out a file: not refused before the run"; cat "$e"; fail=1
fi
rm -f "${TMPDIR:-/tmp}/rf_cli_div.$$.logic"
# import: a file as the data folder is named as such, a missing one too
"$r" import "$t/e2e/tc.logic" --data "$t/e2e/tc.logic" --out "${TMPDIR:-/tmp}/rf_cli_db.$$" 2>"$e" >/dev/null
if [ $? -ne 1 ] || ! grep -qF "the data folder '$t/e2e/tc.logic' is not a folder" "$e"; then
    echo "FAIL: import --data a file: not named as such"; cat "$e"; fail=1
fi
"$r" import "$t/e2e/tc.logic" --data "$t/no-such-folder" --out "${TMPDIR:-/tmp}/rf_cli_db.$$" 2>"$e" >/dev/null
if [ $? -ne 1 ] || ! grep -qF "the data folder '$t/no-such-folder' does not exist" "$e"; then
    echo "FAIL: import --data a missing folder: not named as such"; cat "$e"; fail=1
fi
# import: a database as the data folder (import reads text) is named as
# such, not "a folder of column files but no manifest.rfdb"
mkdir -p "${TMPDIR:-/tmp}/rf_cli_dbdata.$$"
printf '1|2\n' >"${TMPDIR:-/tmp}/rf_cli_dbdata.$$/edges.csv"
printf 'e(x, y) -> int(x), int(y).\nlang:input[`e] = "edges.csv".\nlang:output[`e] = "e".\n' >"${TMPDIR:-/tmp}/rf_cli_dbdata.$$.logic"
"$r" import "${TMPDIR:-/tmp}/rf_cli_dbdata.$$.logic" --data "${TMPDIR:-/tmp}/rf_cli_dbdata.$$" --out "${TMPDIR:-/tmp}/rf_cli_db.$$" 2>"$e" >/dev/null || {
    echo "FAIL: import of edges.csv"; cat "$e"; fail=1; }
"$r" import "${TMPDIR:-/tmp}/rf_cli_dbdata.$$.logic" --data "${TMPDIR:-/tmp}/rf_cli_db.$$" --out "${TMPDIR:-/tmp}/rf_cli_db2.$$" 2>"$e" >/dev/null
if [ $? -ne 1 ] || ! grep -qF "the data folder '${TMPDIR:-/tmp}/rf_cli_db.$$' is a redfox database (it holds manifest.rfdb): import reads the text files" "$e" ||
    [ -e "${TMPDIR:-/tmp}/rf_cli_db2.$$" ]; then
    echo "FAIL: import --data a database: not named as such"; cat "$e"; fail=1
fi
rm -rf "${TMPDIR:-/tmp}/rf_cli_dbdata.$$" "${TMPDIR:-/tmp}/rf_cli_dbdata.$$.logic" "${TMPDIR:-/tmp}/rf_cli_db.$$" "${TMPDIR:-/tmp}/rf_cli_db2.$$"
printf 'p(x) -> int(x).\np(x) <- q(x).\n' | "$r" run - --data "$t/no-such-folder" 2>"$e" >/dev/null
if ! grep -q "undefined predicate" "$e" || grep -q "data folder" "$e"; then
    echo "FAIL: a program error comes before the data folder's"; cat "$e"; fail=1
fi
# tpch run says where the queries run once, not once per query
if "$r" tpch gen --sf 0.01 --out "$e.tpch" >/dev/null 2>&1; then
    "$r" tpch run --data "$e.tpch" --queries 1,6,14 >/dev/null 2>"$e"
    notes=$(grep -c 'running on the' "$e")
    [ "$notes" -eq 1 ] || { echo "FAIL: tpch run: $notes notes on where it ran, expected 1"; cat "$e"; fail=1; }
    # --format with --out was accepted and ignored (the files are the answers' format)
    check 2 "tpch run --out --format csv" "$r" tpch run --data "$e.tpch" --queries 6 --out "$e.out" --format csv
    grep -q "with --out the results are written in the answers' format" "${TMPDIR:-/tmp}/rf_cli.$$" ||
        { echo "FAIL: tpch run --out --format: $(cat "${TMPDIR:-/tmp}/rf_cli.$$")"; fail=1; }
    [ -e "$e.out" ] && { echo "FAIL: tpch run --out --format wrote $e.out"; fail=1; }
fi
rm -rf "$e" "$e.tpch" "$e.out"
# the trace is off by default, whatever the environment says (no knobs there)
RF_GPU_EMULATE=1 RF_GPU_TRACE=1 "$r" run "$t/e2e/aggregates.logic" --device gpu --data "$t/e2e/data" \
    >/dev/null 2>"${TMPDIR:-/tmp}/rf_cli_rep.$$"
if grep -q '^gpu trace:' "${TMPDIR:-/tmp}/rf_cli_rep.$$"; then
    echo "FAIL: a trace without --set gpu_trace=on"; fail=1
fi
# --cache-dir DIR: the emulator's compiled program is cached there; --no-cache: nowhere
rm -rf "${TMPDIR:-/tmp}/rf_cli_cache.$$"
RF_GPU_EMULATE=1 "$r" run "$t/e2e/aggregates.logic" --device gpu --data "$t/e2e/data" \
    --cache-dir "${TMPDIR:-/tmp}/rf_cli_cache.$$" >/dev/null 2>&1
if ! ls "${TMPDIR:-/tmp}/rf_cli_cache.$$/emu/" 2>/dev/null | grep -q .; then
    echo "FAIL: --cache-dir: nothing cached there"; fail=1
fi
rm -rf "${TMPDIR:-/tmp}/rf_cli_cache.$$"
XDG_CACHE_HOME="${TMPDIR:-/tmp}/rf_cli_cache.$$" RF_GPU_EMULATE=1 "$r" run "$t/e2e/aggregates.logic" --device gpu \
    --data "$t/e2e/data" --no-cache >/dev/null 2>&1
if [ -e "${TMPDIR:-/tmp}/rf_cli_cache.$$" ]; then echo "FAIL: --no-cache: something was cached"; fail=1; fi
rm -rf "${TMPDIR:-/tmp}/rf_cli_cache.$$"
# --gpu-arch: the caller's value, so a bad one is bad usage (exit 2) naming it, not an internal error
for arch in bogus_arch sm_ compute_8 sm_9000 "compute_80 --foo"; do
    "$r" compile "$t/e2e/aggregates.logic" -o "${TMPDIR:-/tmp}/rf_cli_arch.$$.rfx" --gpu-arch "$arch" \
        2>"${TMPDIR:-/tmp}/rf_cli_arch.$$"
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q "unknown GPU architecture \`$arch\`" "${TMPDIR:-/tmp}/rf_cli_arch.$$"; then
        echo "FAIL: --gpu-arch '$arch': exit $rc"; cat "${TMPDIR:-/tmp}/rf_cli_arch.$$"; fail=1
    fi
    [ -e "${TMPDIR:-/tmp}/rf_cli_arch.$$.rfx" ] && { echo "FAIL: --gpu-arch '$arch' wrote a file"; fail=1; }
done
rm -f "${TMPDIR:-/tmp}/rf_cli_arch.$$" "${TMPDIR:-/tmp}/rf_cli_arch.$$.rfx"
# tpch run --check naming a file: said to be no folder (it said 'does not exist')
"$r" tpch run --data "$t/e2e/data" --queries 6 --check "$t/e2e/tc.logic" >/dev/null 2>"${TMPDIR:-/tmp}/rf_cli.$$"
rc=$?
if [ $rc -ne 1 ] || ! grep -q "the answers folder '$t/e2e/tc.logic' is not a folder" "${TMPDIR:-/tmp}/rf_cli.$$"; then
    echo "FAIL: tpch run --check a file: exit $rc"; cat "${TMPDIR:-/tmp}/rf_cli.$$"; fail=1
fi
# --set cache_dir=off: no cache, as off is none for every setting (it made a folder ./off)
w="${TMPDIR:-/tmp}/rf_cli_off.$$"
mkdir -p "$w"
(cd "$w" && RF_GPU_EMULATE=1 "$r" run "$t/e2e/aggregates.logic" --data "$t/e2e/data" --device gpu --set cache_dir=off \
    >/dev/null 2>&1) || { echo "FAIL: --set cache_dir=off: exit $?"; fail=1; }
[ -e "$w/off" ] && { echo "FAIL: --set cache_dir=off made a folder ./off"; fail=1; }
(cd "$w" && RF_GPU_EMULATE=1 "$r" run "$t/e2e/aggregates.logic" --data "$t/e2e/data" --device gpu --set cache_dir=./off \
    >/dev/null 2>&1) || { echo "FAIL: --set cache_dir=./off: exit $?"; fail=1; }
[ -d "$w/off/emu" ] || { echo "FAIL: --set cache_dir=./off: no cache in the folder ./off"; fail=1; }
rm -rf "$w"
# --gpus N: the host's GPUs checked once before any rank starts: without a
# GPU one error (not N ranks failing alike); more than 8 ranks per GPU
# refused (the emulator counts as one GPU)
g="${TMPDIR:-/tmp}/rf_cli_gpus.$$"
"$r" run "$t/e2e/tc.logic" --data "$t/e2e/data" --gpus 2 >/dev/null 2>"$g"
rc=$?
if grep -q "built without MPI" "$g"; then
    echo "no MPI in this build: --gpus N's checks skipped"
else
    if grep -q "no usable GPU" "$g"; then
        [ $rc -eq 1 ] || { echo "FAIL: --gpus 2 without a GPU: exit $rc, expected 1"; fail=1; }
        # (small N only: a build that lost the check would start N ranks)
        for n in 2 9; do
            "$r" run "$t/e2e/tc.logic" --data "$t/e2e/data" --gpus $n >/dev/null 2>"$g"
            rc=$?
            if [ $rc -ne 1 ] || [ "$(wc -l <"$g")" -ne 1 ] || ! grep -q "^redfox: error: --gpus $n: no usable GPU" "$g"; then
                echo "FAIL: --gpus $n without a GPU: exit $rc, not one error before the ranks"; cat "$g"; fail=1
            fi
            "$r" tpch run --data "$t/e2e/data" --gpus $n >/dev/null 2>"$g"
            rc=$?
            if [ $rc -ne 1 ] || [ "$(wc -l <"$g")" -ne 1 ]; then
                echo "FAIL: tpch run --gpus $n without a GPU: exit $rc"; cat "$g"; fail=1
            fi
        done
    fi
    for n in 9; do
        RF_GPU_EMULATE=1 "$r" run "$t/e2e/tc.logic" --data "$t/e2e/data" --gpus $n >/dev/null 2>"$g"
        rc=$?
        if [ $rc -ne 2 ] || ! grep -q "at most 8 ranks per GPU, and this host has 1 GPU: 8 ranks at most" "$g"; then
            echo "FAIL: --gpus $n on the emulator: exit $rc, not the bound"; cat "$g"; fail=1
        fi
    done
fi
# several files compile as one program: a clause that conflicts with one in
# another file names that file ("first at line 1" named a line of neither)
mf=${TMPDIR:-/tmp}/rf_cli_mf.$$
mkdir -p "$mf"
printf 'e(a, b) -> int(a), int(b).\nf[a] = b -> int(a), int(b).\n' >"$mf/schema.logic"
printf '\n\ne(a, b) -> int(a), int(b).\nf(1, 2).\n' >"$mf/query.logic"
"$r" compile "$mf/schema.logic" "$mf/query.logic" -o "$mf/p.rfx" >/dev/null 2>"$g"
for want in "query.logic:3:1: error: \`e\` is declared twice (first at $mf/schema.logic:1)" \
            "query.logic:4:1: error: \`f\` is functional ($mf/schema.logic:2) but this rule defines it as a plain relation"; do
    grep -qF -- "$want" "$g" || { echo "FAIL: two files: lacks: $want"; cat "$g"; fail=1; }
done
# several outputs print in the order LANGUAGE.md gives (Outputs): declared
# predicates first, then the others by their first clause, whatever the
# order of the lang:output lines
mkdir -p "$mf"
printf 'b(1). a(2). c(x) -> int(x). c(3).\nlang:output[`a] = "a". lang:output[`b] = "b". lang:output[`c] = "c".\n' >"$mf/o.logic"
"$r" run "$mf/o.logic" --device cpu 2>/dev/null | sed -n 's/ (1 row)$//p' | tr '\n' ' ' >"$g"
[ "$(cat "$g")" = "c b a " ] || { echo "FAIL: outputs in the order '$(cat "$g")', LANGUAGE.md says c b a"; fail=1; }
# one file given twice (by another name too) is a usage error, not every
# clause "declared twice (first at line N)" of itself
ln -s o.logic "$mf/same.logic"
for cmd in "compile -o $mf/x.rfx" "run --device cpu" "dump --rules"; do
    # shellcheck disable=SC2086
    "$r" $cmd "$mf/o.logic" "$mf/same.logic" >/dev/null 2>"$g"
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q "same.logic: error: the program file is given twice (also as $mf/o.logic)" "$g" ||
        grep -q "declared twice" "$g"; then
        echo "FAIL: $cmd of one file twice: exit $rc"; cat "$g"; fail=1
    fi
done
rm -rf "$mf"
# '-' as an output's name: refused (exit 2), never a file or folder called '-'
# (compile - -o - wrote one); outputs are written aside, not to standard output
dd="${TMPDIR:-/tmp}/rf_cli_dash.$$"
mkdir -p "$dd"
printf 'e(x) -> int(x).\nlang:input[`e] = "e.csv".\nlang:output[`e] = "e".\n' >"$dd/p.logic"
echo 1 >"$dd/e.csv"
for cmd in "compile - -o -" "compile p.logic -o=-" "run p.logic --out -" "run p.logic --trace -" \
    "import p.logic --out -" "tpch gen --sf 0.001 --out -" "tpch run --data . --out -" "tpch bench --data . --sf 1 --json -"; do
    # shellcheck disable=SC2086
    (cd "$dd" && "$r" $cmd <p.logic >/dev/null 2>"$g")
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q -- "-: this output is written aside\|--out -: the tables are written aside" "$g" || [ -e "$dd/-" ]; then
        echo "FAIL: $cmd: exit $rc, or a file called '-' was written"; cat "$g"; fail=1
    fi
    rm -rf "${dd:?}/-"
done
# --cache-dir DIR and --no-cache are alternatives: both given, in either
# order, is a usage error naming both, in every command that takes them
for cmd in "compile p.logic -o x.rfx --cache-dir c --no-cache" "run p.logic --no-cache --cache-dir=c" \
    "exec db p.logic --cache-dir c --no-cache" "tpch run --data . --no-cache --cache-dir c" \
    "tpch bench --data . --sf 1 --cache-dir c --no-cache"; do
    # shellcheck disable=SC2086
    (cd "$dd" && "$r" $cmd >/dev/null 2>"$g")
    rc=$?
    if [ $rc -ne 2 ] || ! grep -q -- "--cache-dir and --no-cache are alternatives" "$g"; then
        echo "FAIL: $cmd: exit $rc"; cat "$g"; fail=1
    fi
done
check 0 "run --no-cache twice" "$r" run --device cpu "$t/logiql/even_odd.logic" --no-cache --no-cache
# byte sizes read alike everywhere: import --text-block takes --gpu-memory's
# K/M/G/T suffixes (it took plain bytes only); the rows are the same
printf 'x,y\n' >"$dd/e2.csv"
i=0
while [ $i -lt 300 ]; do echo "$i,$((i * 3))" >>"$dd/e2.csv"; i=$((i + 1)); done
printf 'e(x, y) -> int(x), int(y).\nlang:input[`e] = "e2.csv".\nlang:input:header[`e] = true.\nlang:input:delimiter[`e] = ",".\nlang:output[`e] = "e".\n' >"$dd/q.logic"
check 0 "import --text-block 1K" "$r" import "$dd/q.logic" --data "$dd" --out "$dd/db1k" --text-block 1K
check 0 "import --text-block 64mb" "$r" import "$dd/q.logic" --data "$dd" --out "$dd/db64m" --text-block 64mb
check 2 "import --text-block 1.5M" "$r" import "$dd/q.logic" --data "$dd" --out "$dd/dbx" --text-block 1.5M
check 2 "import --text-block 2T" "$r" import "$dd/q.logic" --data "$dd" --out "$dd/dbx" --text-block 2T
for db in db1k db64m; do
    n=$("$r" run --device cpu "$dd/q.logic" --data "$dd/$db" --format csv 2>/dev/null | grep -c '^[0-9]')
    [ "$n" = 300 ] || { echo "FAIL: import --text-block into $db: $n rows, expected 300"; fail=1; }
done
"$r" import --help | grep -q "K, M, G or T suffix" || { echo "FAIL: import --help: --text-block's suffixes"; fail=1; }
# lang:input names a path within the data folder: ../ reaches the folder
# above it (legitimate: a file shared by several data folders), sub/ one below
mkdir -p "$dd/data/sub"
echo 7 >"$dd/up.csv"
echo 8 >"$dd/data/sub/down.csv"
printf 'u(x) -> int(x).\nd(x) -> int(x).\nlang:input[`u] = "../up.csv".\nlang:input[`d] = "sub/down.csv".\nb(x, y) <- u(x), d(y).\nlang:output[`b] = "b".\n' >"$dd/rel.logic"
got=$("$r" run --device cpu "$dd/rel.logic" --data "$dd/data" --format csv 2>/dev/null | tail -n 1)
[ "$got" = "7,8" ] || { echo "FAIL: lang:input ../up.csv and sub/down.csv under --data: got '$got', expected 7,8"; fail=1; }
rm -rf "$dd"
rm -f "$g"
rm -f "${TMPDIR:-/tmp}/rf_cli_rep.$$"
rm -f "${TMPDIR:-/tmp}/rf_cli.$$"
exit $fail
