#!/bin/sh
# tpch/gen/tpch_gen_check.sh: the tpch_gen_* ctest checks of the generator.
#   compare GEN SF OUT REFDIR   generate, then cmp every table with REFDIR/*.tbl
#   sha256  GEN SF OUT SUMS     generate, then check sha256 against dbgen's list
#   jobs    GEN SF OUT          --jobs 1 and --jobs 3 must give identical files
#   cli     GEN SF OUT          usage and error exits (help 0, usage 2, errors 1)
# Exits 77 (ctest: skipped) when the shared reference data is absent.
mode=$1 gen=$2 sf=$3 out=$4 ref=$5
tables="customer lineitem nation orders part partsupp region supplier"
fail() { echo "FAIL: $*"; exit 1; }

case $mode in
compare)
    [ -d "$ref" ] || { echo "SKIP: reference folder $ref not found"; exit 77; }
    rm -rf "$out"
    "$gen" --sf "$sf" --out "$out" || fail "generator exited with $?"
    for t in $tables; do
        cmp "$out/$t.tbl" "$ref/$t.tbl" || fail "$t.tbl differs from the reference"
        echo "ok: $t.tbl identical"
    done ;;
sha256)
    [ -f "$ref" ] || { echo "SKIP: checksum list $ref not found"; exit 77; }
    command -v sha256sum >/dev/null || { echo "SKIP: no sha256sum"; exit 77; }
    rm -rf "$out"
    "$gen" --sf "$sf" --out "$out" || fail "generator exited with $?"
    n=0
    for t in $tables; do
        want=$(grep " sf$sf/$t.tbl\$" "$ref" | cut -d' ' -f1)
        [ -n "$want" ] || fail "no checksum for sf$sf/$t.tbl in $ref"
        got=$(sha256sum "$out/$t.tbl" | cut -d' ' -f1)
        [ "$got" = "$want" ] || fail "$t.tbl: sha256 $got, dbgen $want"
        echo "ok: $t.tbl sha256 matches"
        n=$((n + 1))
    done
    rm -rf "$out" ;;
jobs)
    rm -rf "$out"
    "$gen" --sf "$sf" --out "$out/j1" --jobs 1 || fail "--jobs 1 exited with $?"
    "$gen" --sf "$sf" --out "$out/j3" --jobs 3 || fail "--jobs 3 exited with $?"
    for t in $tables; do
        cmp "$out/j1/$t.tbl" "$out/j3/$t.tbl" || fail "$t.tbl depends on --jobs"
    done
    # a subset of tables must match the full run
    "$gen" --sf "$sf" --out "$out/sub" --tables lineitem,partsupp,nation || fail "--tables exited with $?"
    [ "$(ls "$out/sub" | tr '\n' ' ')" = "lineitem.tbl nation.tbl partsupp.tbl " ] || fail "--tables wrote $(ls "$out/sub")"
    for t in lineitem partsupp nation; do
        cmp "$out/j1/$t.tbl" "$out/sub/$t.tbl" || fail "$t.tbl differs when generated alone"
    done
    rm -rf "$out"
    echo "ok: output independent of --jobs and --tables" ;;
cli)
    rm -rf "$out"; mkdir -p "$out"
    expect() { want=$1; shift; "$gen" "$@" >"$out/stdout" 2>"$out/stderr"; got=$?
        [ $got -eq $want ] || { cat "$out/stderr"; fail "'$*' exited $got, expected $want"; }
        [ $want -eq 0 ] || [ -s "$out/stderr" ] || [ "$1" = "--help" ] || fail "'$*' gave no message"; }
    expect 0 --help
    grep -q "usage: redfox tpch gen" "$out/stdout" || fail "--help printed no usage on stdout"
    expect 2
    expect 2 --sf 1
    expect 2 --out "$out/x"
    expect 2 --sf 0.001 --out "$out/x"
    expect 2 --sf 1001 --out "$out/x"
    expect 2 --sf 1.5 --out "$out/x"
    expect 2 --sf abc --out "$out/x"
    # decimal numbers only (strtod also reads hexadecimal: 0x10 was SF 16),
    # no blanks around them; every usage message in the command's own form
    for v in 0x10 0x1p-7 " 0.01" "0.01 " inf nan 0 -1; do
        expect 2 --sf "$v" --out "$out/x" --tables supplier
        grep -q "^redfox tpch gen: scale factor" "$out/stderr" || fail "--sf '$v': $(cat "$out/stderr")"
    done
    # 0.0109999999 passed for a multiple of 0.001 and was truncated to SF 0.01
    expect 2 --sf 0.0109999999 --out "$out/x" --tables supplier
    grep -q "multiple of 0.001" "$out/stderr" || fail "--sf 0.0109999999: $(cat "$out/stderr")"
    expect 0 --sf 0.029 --out "$out/sf029" --tables supplier
    [ "$(wc -l < "$out/sf029/supplier.tbl")" -eq 290 ] || fail "SF 0.029 does not have 290 suppliers"
    expect 2 --sf 1 --out "$out/x" --jobs 0
    expect 2 --sf 1 --out "$out/x" --tables lineitem,bogus
    expect 2 --sf 1 --out "$out/x" --bogus
    expect 2 --sf
    [ ! -e "$out/x" ] || fail "a usage error created the output folder"
    touch "$out/file"
    expect 1 --sf "$sf" --out "$out/file" --tables nation
    expect 1 --sf "$sf" --out "$out/file/sub" --tables nation
    grep -q "file/sub" "$out/stderr" || fail "the error message does not name the folder"
    mkdir "$out/tbl"; mkdir "$out/tbl/nation.tbl"; touch "$out/tbl/nation.tbl/x"
    expect 1 --sf "$sf" --out "$out/tbl" --tables nation
    grep -q "nation.tbl" "$out/stderr" || fail "the error message does not name the file"
    if [ "$(id -u)" != 0 ]; then
        mkdir "$out/ro"; chmod 500 "$out/ro"
        expect 1 --sf "$sf" --out "$out/ro" --tables nation
        chmod 700 "$out/ro"
    fi
    expect 0 --sf "$sf" --out "$out/new/nested" --tables nation
    [ "$(wc -l < "$out/new/nested/nation.tbl")" -eq 25 ] || fail "nation.tbl does not have 25 rows"
    expect 0 --sf="$sf" --out="$out/ok" --tables=region --jobs=2
    [ "$(wc -l < "$out/ok/region.tbl")" -eq 5 ] || fail "region.tbl does not have 5 rows"
    rm -rf "$out"
    echo "ok: command-line errors" ;;
*)
    echo "usage: $0 compare|sha256|jobs|cli GEN SF OUT [REF]"; exit 2 ;;
esac
exit 0
