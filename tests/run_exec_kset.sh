#!/bin/sh
# tests/run_exec_kset.sh REDFOX EXEC_DIR: batches of `redfox exec` applied in
# bulk (txn/txn_kset.c) give exactly what applying them line by line gives.
# A seeded random batch of about 60,000 updates to few keys (so that each
# key's conflicting updates lie in many of the parser's chunks: --threads 4
# cuts a 1 MB file into 32) is applied once; the end state must equal the
# one this script computes line by line (awk), on the CPU and on the GPU
# emulator alike. Then the order within a key matters (a delete before an
# insert replaces, after it is a violation), and of several errors (key
# violations, bad lines) in early and late chunks the first in the file is
# reported, the database unchanged.
set -u
redfox=$1
dir=$2
tmp=${TMPDIR:-/tmp}/rf_exec_kset.$$
mkdir -p "$tmp/data"
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p="$dir/kset.logic"
awk 'BEGIN { for (a = 0; a < 40; a++) printf "%d,%d\n", a, (a * 37) % 1000 }' >"$tmp/data/acct.csv"
awk 'BEGIN { for (a = 0; a < 30; a++) printf "%d,s%d\n", a, a }' >"$tmp/data/tag.csv"
awk 'BEGIN { for (a = 0; a < 10; a++) printf "%d,%d\n", a, (a * 3) % 10 }' >"$tmp/data/edge.csv"
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db0" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }
"$redfox" exec "$tmp/db0" "$p" --device cpu >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "first exec"; }

# the random batch, and the state it leaves, applied line by line here
awk -v seed=11 -v n=60000 -v batch="$tmp/big.txn" -v want="$tmp/want.csv" 'BEGIN {
    srand(seed)
    for (a = 0; a < 40; a++) acct[a] = (a * 37) % 1000
    for (a = 0; a < 30; a++) tag[a] = "s" a
    for (a = 0; a < 10; a++) edge[a "," (a * 3) % 10] = 1
    for (i = 0; i < n; i++) {
        x = rand()
        if (x < 0.5) { # acct: replace, delete, re-insert the same, insert a free key, delete what is not there
            k = int(rand() * 50); y = rand()
            if (k in acct) {
                if (y < 0.6) { v = int(rand() * 1000); printf "-acct[%d] = %d.\n+acct[%d] = %d.\n", k, acct[k], k, v >batch; acct[k] = v }
                else if (y < 0.7) printf "+acct[%d] = %d.\n", k, acct[k] >batch
                else if (y < 0.8) printf "-acct[%d] = %d.\n", k, (acct[k] + 1) % 1000 >batch
                else { printf "-acct[%d] = %d.\n", k, acct[k] >batch; delete acct[k] }
            } else { v = int(rand() * 1000); printf "+acct[%d] = %d.\n", k, v >batch; acct[k] = v }
        } else if (x < 0.75) { # tag: a key with strings
            k = int(rand() * 40); s = "t" int(rand() * 30) (rand() < 0.1 ? " \\\"q\\\"" : "")
            if (k in tag) { printf "-tag(%d, \"%s\").\n", k, tag[k] >batch; delete tag[k] }
            else { printf "+tag(%d, \"%s\"). // a comment\n", k, s >batch; tag[k] = s }
        } else { # edge: a set, inserts and deletes in any order
            e = int(rand() * 10) "," int(rand() * 10)
            if (rand() < 0.5) { printf "+edge(%s).\n", e >batch; edge[e] = 1 }
            else { printf "-edge(%s).\n", e >batch; delete edge[e] }
            if (rand() < 0.05) printf "\n// blank lines and comments\n" >batch
        }
    }
    for (k in acct) printf "acct,%d,%d\n", k, acct[k] >want
    for (k in tag) { s = tag[k]; gsub(/\\"/, "\"", s); printf "tag,%d,%s\n", k, s >want }
    for (e in edge) printf "edge,%s\n", e >want
}'
sort "$tmp/want.csv" -o "$tmp/want.csv"
# state DB: acct, tag and edge as stored in DB, one "pred,cols" line each, sorted
state() {
    "$redfox" run "$p" --data "$1" --device cpu --format csv 2>"$tmp/err" | awk '
        /^[a-z]+ \([0-9]+ rows?\)$/ { pred = $1; header = 1; next }
        header { header = 0; next }
        NF && pred != "rich" { gsub(/""/, "\""); sub(/,"/, ","); sub(/"$/, ""); print pred "," $0 }' | sort
}
for dev in cpu emu; do
    rm -rf "$tmp/db"
    cp -r "$tmp/db0" "$tmp/db"
    if [ $dev = emu ]; then
        RF_GPU_EMULATE=1 "$redfox" exec "$tmp/db" "$p" --batch "$tmp/big.txn" --device gpu --threads 4 --profile \
            --format csv >"$tmp/out.$dev" 2>"$tmp/err" || { cat "$tmp/err"; fail "$dev: exec of the random batch"; }
    else
        "$redfox" exec "$tmp/db" "$p" --batch "$tmp/big.txn" --device cpu --threads 4 --profile \
            --format csv >"$tmp/out.$dev" 2>"$tmp/err" || { cat "$tmp/err"; fail "$dev: exec of the random batch"; }
    fi
    state "$tmp/db" >"$tmp/got.$dev"
    cmp -s "$tmp/got.$dev" "$tmp/want.csv" || { diff "$tmp/got.$dev" "$tmp/want.csv" | head; fail "$dev: the bulk batch differs from line by line"; }
    "$redfox" run "$p" --data "$tmp/db" --device cpu --format csv >"$tmp/run.$dev" 2>"$tmp/err"
    cmp -s "$tmp/out.$dev" "$tmp/run.$dev" || { diff "$tmp/out.$dev" "$tmp/run.$dev" | head; fail "$dev: exec's outputs differ from a run"; }
done
cmp -s "$tmp/out.cpu" "$tmp/out.emu" || fail "the CPU and the emulator disagree"

# order within a key: a delete then an insert replaces; the other way round is a violation
"$redfox" exec "$tmp/db0" "$p" --device cpu --format csv --batch /dev/stdin >/dev/null 2>"$tmp/err" <<'EOF' || { cat "$tmp/err"; fail "a replacement in batch order"; }
-acct[3] = 111.
+acct[3] = 5.
+edge(7, 7).
-edge(7, 7).
-edge(0, 0).
+edge(0, 0).
-acct[3] = 5.
+acct[3] = 6.
EOF
state "$tmp/db0" | grep -q '^acct,3,6$' || fail "acct[3] should be 6"
state "$tmp/db0" | grep -q '^edge,7,7$' && fail "edge(7, 7) was deleted after its insert"
state "$tmp/db0" | grep -q '^edge,0,0$' || fail "edge(0, 0) was inserted after its delete"
# a batch whose every update is alone on its key and meets no stored row
# (new ids in increasing order, deletes of rows not there between them) is
# resolved without walking its keys' runs: the same state as line by line,
# on the CPU and the emulator
awk 'BEGIN { for (i = 0; i < 3000; i++) printf "+acct[%d] = %d.\n-acct[%d] = 7.\n+edge(%d, 1).\n", 1000 + 2 * i, i, 1001 + 2 * i, 100 + i }' \
    >"$tmp/fresh.txn"
{ state "$tmp/db0"; awk 'BEGIN { for (i = 0; i < 3000; i++) printf "acct,%d,%d\nedge,%d,1\n", 1000 + 2 * i, i, 100 + i }'; } |
    sort >"$tmp/fresh.want"
for dev in cpu emu; do
    rm -rf "$tmp/dbf"
    cp -r "$tmp/db0" "$tmp/dbf"
    if [ $dev = emu ]; then
        RF_GPU_EMULATE=1 "$redfox" exec "$tmp/dbf" "$p" --device gpu --threads 4 --batch "$tmp/fresh.txn" >/dev/null 2>"$tmp/err"
    else
        "$redfox" exec "$tmp/dbf" "$p" --device cpu --threads 4 --batch "$tmp/fresh.txn" >/dev/null 2>"$tmp/err"
    fi || { cat "$tmp/err"; fail "$dev: a batch of new keys"; }
    state "$tmp/dbf" >"$tmp/fresh.got"
    cmp -s "$tmp/fresh.got" "$tmp/fresh.want" || { diff "$tmp/fresh.got" "$tmp/fresh.want" | head; fail "$dev: a batch of new keys differs from line by line"; }
done
before=$(cd "$tmp/db0" && ls -l && cat ./*| cksum)
# bad BATCH EXPECTED: exit 1, the message, the database unchanged
bad() {
    "$redfox" exec "$tmp/db0" "$p" --device cpu --threads 4 --batch "$tmp/$1.txn" >/dev/null 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "$1: exit $rc, expected 1"; }
    grep -qF "$tmp/$1.txn:$2" "$tmp/err" || { head -5 "$tmp/err"; fail "$1: expected '$tmp/$1.txn:$2'"; }
    [ "$(cd "$tmp/db0" && ls -l && cat ./*| cksum)" = "$before" ] || fail "$1: the database changed"
}
printf '+acct[3] = 5.\n-acct[3] = 111.\n' >"$tmp/order.txn"
bad order '1:1: error: key violation: `acct` already holds (a) = (3)'
# filler: many good lines (an edge toggled) around the errors
filler() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "+edge(%d, %d).\n-edge(%d, %d).\n", i % 10, 9 - i % 10, i % 10, 9 - i % 10 }'; }
{ filler 100; printf '+acct[200] = 1.\n+acct[200] = 2.\n'; filler 40000; printf '+tag(1, "x").\n'; } >"$tmp/early.txn"
bad early '202:1: error: key violation: `acct` already holds (a) = (200)'
grep -qF 'another row, inserted earlier in this batch, holds this key (functional dependency of `acct`)' "$tmp/err" || { cat "$tmp/err"; fail "early: the holder"; }
{ filler 100; printf '+acct[4] = 9.\n'; filler 40000; printf '+acct[200] = 1.\n+acct[200] = 2.\n'; } >"$tmp/early2.txn"
bad early2 '201:1: error: key violation: `acct` already holds (a) = (4)'
grep -qF 'another row, already in the database, holds this key (functional dependency of `acct`)' "$tmp/err" || { cat "$tmp/err"; fail "early2: the holder"; }
{ filler 40000; printf '+tag(1, "x").\n'; } >"$tmp/late.txn"
bad late '80001:1: error: key violation: `tag` already holds (a) = (1)'
{ filler 100; printf '+acct[4] = 9.\n'; filler 40000; printf '+edge(1, x).\n'; } >"$tmp/violfirst.txn"
bad violfirst '201:1: error: key violation'
{ filler 100; printf '+edge(1, x).\n'; filler 40000; printf '+acct[4] = 9.\n'; } >"$tmp/linefirst.txn"
bad linefirst '201:10: error: expected an int, found "x"'
{ filler 30000; printf '+nosuch(1).\n'; filler 100; printf '+edge(1 2).\n'; } >"$tmp/twolines.txn"
bad twolines '60001:2: error: unknown predicate `nosuch`'
# several files: one batch in their order; the first error in that order wins
printf '+acct[500] = 1.\n' >"$tmp/m1.txn"
printf -- '-acct[500] = 1.\n+acct[500] = 2.\n' >"$tmp/m2.txn"
"$redfox" exec "$tmp/db0" "$p" --device cpu --batch "$tmp/m1.txn" --batch "$tmp/m2.txn" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "two files"; }
state "$tmp/db0" | grep -q '^acct,500,2$' || fail "acct[500] should be 2 after the second file"
before=$(cd "$tmp/db0" && ls -l && cat ./*| cksum)
printf '+acct[600] = 1.\n+acct[600] = 3.\n' >"$tmp/m3.txn"
printf '+edge(x).\n' >"$tmp/m4.txn"
"$redfox" exec "$tmp/db0" "$p" --device cpu --batch "$tmp/m3.txn" --batch "$tmp/m4.txn" >/dev/null 2>"$tmp/err"
grep -qF "$tmp/m3.txn:2:1: error: key violation" "$tmp/err" || { cat "$tmp/err"; fail "a violation in the first file comes first"; }
printf '+edge(x).\n+acct[600] = 3.\n' >"$tmp/m5.txn"
printf '+acct[600] = 1.\n' >"$tmp/m6.txn"
"$redfox" exec "$tmp/db0" "$p" --device cpu --batch "$tmp/m6.txn" --batch "$tmp/m5.txn" >/dev/null 2>"$tmp/err"
grep -qF "$tmp/m5.txn:1:7: error: expected an int" "$tmp/err" || { cat "$tmp/err"; fail "a bad line before a violation comes first"; }
[ "$(cd "$tmp/db0" && ls -l && cat ./*| cksum)" = "$before" ] || fail "the database changed"
echo ok
