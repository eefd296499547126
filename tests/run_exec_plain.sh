#!/bin/sh
# tests/run_exec_plain.sh REDFOX: `redfox exec` on a database whose string
# columns are stored plain (`import --strings plain`: no dictionary in the
# file), as on one stored with dictionaries: inserts (an append) and deletes
# (copy on write) give the outputs of a from-scratch run over the same rows
# from text, and `redfox run` reads the committed database to the same
# answer. (exec used to stop with "the transaction failed", exit 3, on the
# first plain string column it read.)
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_exec_plain.$$
mkdir -p "$tmp/data" "$tmp/after"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$tmp/p.logic" <<'P'
person(id, name, city) -> int(id), string(name), string(city).
lang:input[`person] = "person.csv".
lang:input:delimiter[`person] = ",".
lang:input:key[`person] = "id".
mate(a, b) <- person(_, a, c), person(_, b, c), a != b.
lang:output[`mate] = "mate".
P
printf '1,ann,rome\n2,bob,oslo\n3,cy,rome\n4,dee,lima\n' >"$tmp/data/person.csv"
printf '+person(5, "eve", "oslo").\n+person(6, "fay", "lima").\n' >"$tmp/ins.txn"
printf -- '-person(1, "ann", "rome").\n+person(7, "gus", "rome").\n' >"$tmp/del.txn"
printf '2,bob,oslo\n3,cy,rome\n4,dee,lima\n5,eve,oslo\n6,fay,lima\n7,gus,rome\n' >"$tmp/after/person.csv"
for mode in plain dict; do
    db=$tmp/db_$mode
    "$redfox" import "$tmp/p.logic" --data "$tmp/data" --out "$db" --strings $mode >/dev/null 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "$mode: import"; }
    for b in ins del; do
        "$redfox" exec "$db" "$tmp/p.logic" --batch "$tmp/$b.txn" --device cpu --format csv >"$tmp/$mode.$b" 2>"$tmp/err" ||
            { rc=$?; cat "$tmp/err"; fail "$mode: exec of the $b batch: exit $rc"; }
    done
    "$redfox" run "$tmp/p.logic" --data "$tmp/after" --device cpu --format csv >"$tmp/want" 2>/dev/null || fail "run from text"
    sort "$tmp/$mode.del" >"$tmp/got.s"; sort "$tmp/want" >"$tmp/want.s"
    cmp -s "$tmp/got.s" "$tmp/want.s" || { diff "$tmp/got.s" "$tmp/want.s"; fail "$mode: exec's outputs differ from a run over the same rows"; }
    "$redfox" run "$tmp/p.logic" --data "$db" --device cpu --format csv 2>/dev/null | sort >"$tmp/db.s" || fail "$mode: run on the database"
    cmp -s "$tmp/db.s" "$tmp/want.s" || fail "$mode: the committed database reads to another answer"
done
echo "PASS: exec on plain and dictionary string columns"
