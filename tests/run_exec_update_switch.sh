#!/bin/sh
# tests/run_exec_update_switch.sh REDFOX: `redfox exec` recomputes, instead
# of maintaining by diffs, a batch that changes more than an eighth of the
# base predicates' stored rows (docs/TRANSACTIONS.md). An update of a key's
# row (a functional predicate's `-bal[k] = old. +bal[k] = new.`, or a
# lang:input:key row replaced) is one row changed, not two: updating an
# eighth of 80 keys (10) stays maintained by diffs, 11 recomputes. Inserts
# and deletes of whole rows still count one each (9 updates and 1 insert:
# diffs; 9 and 2: recomputed). --profile says how many updates it counted
# and the rows changed. Before, an update counted twice and 10 updates of
# 80 keys recomputed. Every result equals the total the data gives (awk).
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_exec_update_switch.$$
mkdir -p "$tmp/d"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cat >"$tmp/f.logic" <<'P'
bal[k] = v -> int(k), int(v).
lang:input[`bal] = "bal.csv".
lang:input:delimiter[`bal] = ",".
tot[] = x <- agg<<x = total(v)>> bal[_] = v.
lang:output[`tot] = "tot".
P
cat >"$tmp/k.logic" <<'P'
acct(k, v) -> int(k), int(v).
lang:input[`acct] = "bal.csv".
lang:input:delimiter[`acct] = ",".
lang:input:key[`acct] = "k".
tot[] = x <- agg<<x = total(v)>> acct(_, v).
lang:output[`tot] = "tot".
P
awk 'BEGIN { for (k = 1; k <= 80; k++) print k "," k * 10 }' >"$tmp/d/bal.csv"
# batch NUP NINS PRED FORM: NUP keys' rows updated (value + 1), NINS new keys
batch() {
    awk -v nup="$1" -v nins="$2" -v p="$3" -v f="$4" 'BEGIN {
        for (k = 1; k <= nup; k++) {
            if (f) { print "-" p "[" k "] = " k * 10 "."; print "+" p "[" k "] = " k * 10 + 1 "." }
            else { print "-" p "(" k ", " k * 10 ")."; print "+" p "(" k ", " k * 10 + 1 ")." }
        }
        for (k = 1; k <= nins; k++) print "+" p (f ? "[" 100 + k "] = 1." : "(" 100 + k ", 1).")
    }'
}
# case PROG PRED FORM NUP NINS HOW: HOW diffs or recomputed
case_() {
    prog=$1 pred=$2 form=$3 nup=$4 nins=$5 how=$6
    what="$pred: $nup updates, $nins inserts"
    rm -rf "$tmp/db"
    "$redfox" import "$tmp/$prog.logic" --data "$tmp/d" --out "$tmp/db" >/dev/null 2>&1 || { fail "$what: import"; return; }
    "$redfox" exec "$tmp/db" "$tmp/$prog.logic" --device cpu >/dev/null 2>&1 || { fail "$what: first exec"; return; }
    batch "$nup" "$nins" "$pred" "$form" >"$tmp/b.txn"
    "$redfox" exec "$tmp/db" "$tmp/$prog.logic" --batch "$tmp/b.txn" --device cpu --format csv --profile \
        >"$tmp/out" 2>"$tmp/prof" || { fail "$what: exec"; cat "$tmp/prof"; return; }
    if [ "$how" = diffs ]; then
        grep -q "^exec: derived predicates maintained incrementally by diffs" "$tmp/prof" ||
            { fail "$what: not maintained by diffs"; grep "derived predicates" "$tmp/prof"; }
    else
        grep -q "^exec: derived predicates recomputed from scratch: the batch changes more than an eighth" "$tmp/prof" ||
            { fail "$what: not recomputed"; grep "derived predicates" "$tmp/prof"; }
    fi
    changed=$((nup + nins))
    s=s
    [ $changed -eq 1 ] && s=
    if [ "$nup" -gt 0 ]; then
        u=s
        [ "$nup" -eq 1 ] && u=
        grep -q "^exec: batch: $changed rows inserted, $nup deleted; $nup update$u of a key's row (a delete and an insert, one change each): $changed row$s changed " "$tmp/prof" ||
            { fail "$what: the profile's batch line"; grep "batch:" "$tmp/prof"; }
    fi
    want=$(awk -v nup="$nup" -v nins="$nins" 'BEGIN { for (k = 1; k <= 80; k++) t += k * 10 + (k <= nup); print t + nins }')
    grep -qx "$want" "$tmp/out" || { fail "$what: the total is not $want"; cat "$tmp/out"; }
}
for p in "f bal 1" "k acct 0"; do
    set -- $p
    case_ "$1" "$2" "$3" 10 0 diffs
    case_ "$1" "$2" "$3" 11 0 recomputed
    case_ "$1" "$2" "$3" 9 1 diffs
    case_ "$1" "$2" "$3" 9 2 recomputed
    case_ "$1" "$2" "$3" 0 10 diffs
    case_ "$1" "$2" "$3" 0 11 recomputed
done
[ $fails -eq 0 ] && echo PASS
[ $fails -eq 0 ]
