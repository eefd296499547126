#!/bin/sh
# tests/run_exec_wide.sh REDFOX EXEC_DIR MODE: `redfox exec` of
# EXEC_DIR/wide.logic, whose totals of decimals are wide decimals (exact
# beyond 64 bits), on a database, whose decimals are 64 bits
# (docs/TRANSACTIONS.md): amounts near 2.3e12 whose totals stay within
# decimal's range are stored and shown exactly, maintained by diffs and
# recomputed (--recompute), each exec compared with totals computed here
# with Python's integers; a batch that takes a stored total past
# 9223372036854.775807 is "decimal out of range" naming the predicate,
# exit 1, the database exactly as it was. MODE cpu, or emu: the GPU
# emulator (wide decimals in 16 bytes on the device too: the same results
# and the same error). Then EXEC_DIR/wide_neg.logic, which negates a derived
# predicate at a total: its small batches are recomputed (the diffs cannot
# look a wide value up in the stored 64-bit state), with a run's outputs.
set -u
redfox=$1
dir=$2
mode=$3
tmp=${TMPDIR:-/tmp}/rf_exec_wide.$$
mkdir -p "$tmp/data"
trap '[ -n "${RF_KEEP:-}" ] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
p="$dir/wide.logic"
if [ "$mode" = emu ]; then
    dev="--device gpu"
    export RF_GPU_EMULATE=1
else
    dev="--device cpu"
fi
# two regions; east's total 9223372036854.775807 - 1.000001 exactly, so that
# one more millionth fits and 1.000002 more does not
printf '1,east,2305843009213.693951\n2,east,2305843009213.693951\n3,east,2305843009213.693951\n' >"$tmp/data/sale.csv"
printf '4,east,2305843009212.693953\n5,west,-17.5\n6,west,-1000000000000.000001\n' >>"$tmp/data/sale.csv"
"$redfox" import "$p" --data "$tmp/data" --out "$tmp/db" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "import"; }

# want: the outputs expected from the rows in $tmp/rows (id,region,amount), as
# `redfox exec --format csv` prints them; Python's integers (millionths)
want() {
    python3 - "$tmp/rows" <<'PY'
import sys
def m(s):
    neg = s.startswith("-")
    w, _, f = s.lstrip("-").partition(".")
    v = int(w) * 10**6 + int((f + "000000")[:6])
    return -v if neg else v
def text(v):
    s = "-" if v < 0 else ""
    w, f = divmod(abs(v), 10**6)
    f = ("%06d" % f).rstrip("0").ljust(2, "0")
    return "%s%d.%s" % (s, w, f)
def div_round(a, b):  # half away from zero
    q, r = divmod(abs(a), abs(b))
    if 2 * r >= abs(b):
        q += 1
    return q if (a < 0) == (b < 0) else -q
tot, cnt = {}, {}
for line in open(sys.argv[1]):
    i, r, a = line.strip().split(",")
    tot[r] = tot.get(r, 0) + m(a)
    cnt[r] = cnt.get(r, 0) + 1
out = []
out.append("all_sales\nt\n%s\n" % text(sum(tot.values())))
out.append("by_region\nr,t\n" + "".join("%s,%s\n" % (r, text(tot[r])) for r in sorted(tot)))
out.append("halves\nr,h\n" + "".join("%s,%s\n" % (r, text(div_round(tot[r] * 10**6, 2 * 10**6))) for r in sorted(tot)))
out.append("mean\nr,m\n" + "".join("%s,%s\n" % (r, text(div_round(tot[r], cnt[r]))) for r in sorted(tot)))
sys.stdout.write("\n".join(out))
PY
}
# got FILE: the csv outputs of one exec, one block an output, by name
got() {
    awk -v d="$tmp/got" 'BEGIN { system("rm -rf " d "; mkdir -p " d) } /^$/ { next } /^[A-Za-z_]+ \(/ { n = $1; next } { print > (d "/" n) }' "$1"
    first=1
    for f in $(ls "$tmp/got" | sort); do
        [ $first -eq 1 ] || echo
        first=0
        echo "$f"
        cat "$tmp/got/$f"
    done
}
cp "$tmp/data/sale.csv" "$tmp/rows"
step() { # name exec-options...: one exec, its outputs against want
    name=$1
    shift
    # shellcheck disable=SC2086
    "$redfox" exec "$tmp/db" "$p" $dev --format csv "$@" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "$name: exec"; }
    got "$tmp/out" >"$tmp/got.txt"
    want >"$tmp/want.txt" || fail "$name: python3"
    diff -u "$tmp/want.txt" "$tmp/got.txt" >"$tmp/diff" || { cat "$tmp/diff" "$tmp/out"; fail "$name: outputs differ"; }
}
step first
# inserts and a delete within the range, by diffs (--incremental) and recomputed
printf '+sale(7, "west", 3.25).\n+sale(8, "north", 4611686018.387903).\n' >"$tmp/b1.txn"
printf '7,west,3.25\n8,north,4611686018.387903\n' >>"$tmp/rows"
step insert --incremental --profile --batch "$tmp/b1.txn"
grep -q "diffs" "$tmp/err" || { cat "$tmp/err"; fail "insert: not maintained by diffs"; }
printf -- '-sale(5, "west", -17.5).\n+sale(9, "east", 1).\n' >"$tmp/b2.txn"
grep -v '^5,' "$tmp/rows" >"$tmp/rows2" && mv "$tmp/rows2" "$tmp/rows"
printf '9,east,1\n' >>"$tmp/rows"
step delete --incremental --batch "$tmp/b2.txn"
printf '+sale(10, "east", 0.000001).\n' >"$tmp/b3.txn"
printf '10,east,0.000001\n' >>"$tmp/rows"
step edge --recompute --batch "$tmp/b3.txn"
# east's total now 9223372036854.775807 - 1.000001 + 1.000001: the largest
# decimal; one millionth more leaves the range: by diffs and recomputed
state() { (cd "$tmp/db" && ls -l && cat ./*) | cksum; }
before=$(state)
printf '+sale(11, "east", 0.000001).\n' >"$tmp/b4.txn"
for how in --incremental --recompute; do
    "$redfox" exec "$tmp/db" "$p" $dev --format csv $how --batch "$tmp/b4.txn" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "beyond $how: exit $rc, expected 1"; }
    grep -q "decimal out of range" "$tmp/err" || { cat "$tmp/err"; fail "beyond $how: no range error"; }
    # the CPU and the GPU are exact: the database's 64 bits refuse the total, named
    grep -q "error: decimal out of range: \`by_region\` is stored in the database" "$tmp/err" ||
        grep -q "error: decimal out of range: \`all_sales\` is stored in the database" "$tmp/err" ||
        { cat "$tmp/err"; fail "beyond $how: the error does not name the stored predicate"; }
    [ "$(state)" = "$before" ] || fail "beyond $how: the database changed"
done
# the database still gives the last state
step after

# a negation of a derived predicate at a total: small batches recomputed, as
# a run from scratch over the same rows
q="$dir/wide_neg.logic"
mkdir -p "$tmp/ndata"
printf '1,east,2305843009213.693951
2,east,2305843009213.693951
3,west,4.5
4,north,-5.5
' >"$tmp/ndata/sale.csv"
i=5
while [ $i -le 104 ]; do echo "$i,r$((i % 10)),$i.25"; i=$((i + 1)); done >>"$tmp/ndata/sale.csv"
"$redfox" import "$q" --data "$tmp/ndata" --out "$tmp/ndb" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "negation: import"; }
"$redfox" exec "$tmp/ndb" "$q" $dev --format csv >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "negation: first exec"; }
n=0
for b in '-sale(3, "west", 4.5).' '+sale(501, "south", 8.25).' '-sale(1, "east", 2305843009213.693951).'; do
    n=$((n + 1))
    printf '%s\n' "$b" >"$tmp/nb$n.txn"
    # shellcheck disable=SC2086
    "$redfox" exec "$tmp/ndb" "$q" $dev --format csv --profile --batch "$tmp/nb$n.txn" >"$tmp/nout" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "negation, batch $n: exec"; }
    grep -q "recomputed from scratch: a rule negates a derived predicate at a total" "$tmp/err" ||
        { cat "$tmp/err"; fail "negation, batch $n: not recomputed, or not saying why"; }
    case $b in
    -*) id=$(echo "$b" | sed 's/^-sale(\([0-9]*\),.*/\1/'); grep -v "^$id," "$tmp/ndata/sale.csv" >"$tmp/n2" && mv "$tmp/n2" "$tmp/ndata/sale.csv" ;;
    +*) echo "$b" | sed 's/^+sale(\([0-9]*\), "\([a-z0-9]*\)", \([-0-9.]*\)).$/\1,\2,\3/' >>"$tmp/ndata/sale.csv" ;;
    esac
    # shellcheck disable=SC2086
    "$redfox" run "$q" --data "$tmp/ndata" $dev --format csv >"$tmp/nwant" 2>"$tmp/err" || { cat "$tmp/err"; fail "negation, batch $n: run"; }
    got "$tmp/nout" >"$tmp/ngot.txt"
    got "$tmp/nwant" >"$tmp/nwant.txt"
    diff -u "$tmp/nwant.txt" "$tmp/ngot.txt" || fail "negation, batch $n: exec and a run from scratch differ"
done
# a total of floats past the largest float is inf, which the database
# stores as it is (its floats are any IEEE 754 value: docs/DATABASE.md); the
# transaction prints `inf` as a run over the same rows does, and the
# program's next exec, --recompute and --init too, reads it back (an inf
# used to be stored as damage, then refused as "float out of range")
mkdir -p "$tmp/fdata"
printf '1,1e308\n' >"$tmp/fdata/fl.csv"
printf 'fl[x] = v -> int(x), float(v).\nlang:input[`fl] = "fl.csv".\nlang:input:delimiter[`fl] = ",".\nsum[] = t -> float(t).\nsum[] = t <- agg<<t = total(v)>> fl[_] = v.\nlang:output[`sum] = "sum".\n' >"$tmp/fl.logic"
"$redfox" import "$tmp/fl.logic" --data "$tmp/fdata" --out "$tmp/fdb" >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "float: import"; }
# shellcheck disable=SC2086
"$redfox" exec "$tmp/fdb" "$tmp/fl.logic" $dev >/dev/null 2>"$tmp/err" || { cat "$tmp/err"; fail "float: first exec"; }
printf '+fl[2] = 1e308.\n' >"$tmp/inf.txn"
for how in "" --recompute --init; do
    # shellcheck disable=SC2086
    "$redfox" exec "$tmp/fdb" "$tmp/fl.logic" $dev $how --format csv --batch "$tmp/inf.txn" >"$tmp/fout" 2>"$tmp/err" ||
        { cat "$tmp/err"; fail "float $how: the batch making inf"; }
    grep -qx 'inf' "$tmp/fout" || { cat "$tmp/fout"; fail "float $how: the total is not inf"; }
done
printf -- '-fl[2] = 1e308.\n+fl[3] = 2.5.\n' >"$tmp/fin.txn"
# shellcheck disable=SC2086
"$redfox" exec "$tmp/fdb" "$tmp/fl.logic" $dev --format csv --batch "$tmp/fin.txn" >"$tmp/fout" 2>"$tmp/err" || { cat "$tmp/err"; fail "float: a finite batch after"; }
grep -qx '1e+308' "$tmp/fout" || { cat "$tmp/fout"; fail "float: the total after a finite batch"; }
echo "ok: wide totals stored exactly within decimal's range, refused beyond it ($mode)"
