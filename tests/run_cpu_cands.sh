#!/bin/sh
# tests/run_cpu_cands.sh [--sanitized] REDFOX DIR: a recursion's candidates
# made in parts on the CPU (runtime/cpu/rt_cpu_cands.c: the joins' pairs
# mapped, deduplicated and subtracted from the known rows part by part).
#  - A non-linear closure of a 350-node chain counts n(n-1)/2 pairs (awk's
#    count) on the CPU and the emulated GPU, and on the CPU fits in 150 MB
#    of address space (the whole pairs of a round needed over 200 MB).
#    So does the closure whose round also maps rows (filtered.logic).
#  - A hub whose left rows each match 3,000 right rows: a chunk of left
#    rows is cut into parts, so the round fits in 100 MB.
#  - A round that unions a filtered non-linear join, a linear join with an
#    input and a later mutual stratum: outputs byte-identical with parts of
#    one pair, the default, one part per join, --no-fuse and the emulated GPU.
#  - A closure that negates nodes of the chain (negchain.logic) counts
#    n(n-1)/2 less the pairs it negates, in the same 150 MB.
#  - A round of rules with negations (negated.logic: of inputs, of a
#    relation computed before, of one and of two columns): outputs
#    byte-identical with parts of 7 and 64 pairs, the default, one part per
#    join, --no-fuse and the emulated GPU, equal to the rows Python derives,
#    and the profile's counts those of --no-fuse.
#  - A rule of three atoms over layers of 40 nodes (layers.logic) counts
#    the pairs of layers an odd number apart within 150 MB, and so does
#    the rule with its inputs written first (layersorder.logic), planned as
#    with the recursive atom first (with conditions on both sides too); a round of
#    rules of three and four atoms with a negation and conditions after the
#    second join (three.logic): as negated.logic, against Python's rows.
#  - A map that overflows in a round of many parts (after a negation in
#    negoverflow.logic, in a second join in overflow3.logic): the same
#    first failing row, message and exit status as --no-fuse; so where
#    two stages of a join fail (stages.logic), the earlier stage's error
#    though a later stage fails in an earlier part.
#  - Same generation over layers whose round's first chunks of left rows
#    match nothing (samegen.logic): every pair, in parts and apart.
# --sanitized: no address-space limit (a sanitizer's allocator reserves more).
set -u
limit=1
# Parts of one pair are the sharpest cut, and under a sanitizer about ten
# times slower (33 s for the mixed round alone, near the per-command limit
# on a loaded machine): there, parts of three pairs.
# So is the three-atom round in parts of 7 (44 s at 160 edges): there,
# 120 edges (13 s).
# So are the linear closures (1d): there, a graph of 300 nodes and 6,000
# edges and a star of 500 nodes (still a round of more pairs than a part).
one=1
nthree=160
lin_nodes=400 lin_edges=8000 star=800
[ "${1:-}" = "--sanitized" ] && { limit=0; one=3; nthree=120; lin_nodes=300 lin_edges=6000 star=500; shift; }
redfox=$1
dir=$2/cands
tmp=${TMPDIR:-/tmp}/rf_cands.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/chain" "$tmp/mixed" "$tmp/ov"
fail=0
no() { echo "FAIL: $*"; fail=1; }
if command -v timeout >/dev/null 2>&1; then to="timeout 120"; else to=; fi
# bounded KB NAME PROG DATA: PROG over DATA within KB of address space
# (where --sanitized is not given) must count want
bounded() {
    [ $limit = 1 ] || return 0
    (ulimit -v "$1"; exec $to "$redfox" run "$3" --data "$4" --device cpu --threads 2 --format csv) \
        >"$tmp/bounded.out" 2>"$tmp/bounded.err"
    rc=$?
    [ $rc -eq 0 ] && [ "$(tail -1 "$tmp/bounded.out")" = "$want" ] ||
        no "$2: in $(($1 / 1000)) MB of address space: exit $rc, $(cat "$tmp/bounded.err")"
}

# 1. the chain: the count, the parts, the memory
n=350
awk -v n=$n 'BEGIN { for (i = 1; i < n; i++) printf "%d\t%d\n", i, i + 1 }' >"$tmp/chain/edge.facts"
want=$(awk -v n=$n 'BEGIN { printf "%d\n", n * (n - 1) / 2 }')
$to "$redfox" run "$dir/chain.logic" --data "$tmp/chain" --device cpu --threads 2 --profile --format csv \
    >"$tmp/chain/out" 2>"$tmp/chain/err" || no "chain: the CPU run failed: $(cat "$tmp/chain/err")"
[ "$(tail -1 "$tmp/chain/out")" = "$want" ] || no "chain: CPU counted $(tail -1 "$tmp/chain/out"), not $want"
grep -q "recursion rounds' candidates in parts" "$tmp/chain/err" || no "chain: no round ran in parts"
RF_GPU_EMULATE=1 $to "$redfox" run "$dir/chain.logic" --data "$tmp/chain" --device gpu --format csv \
    >"$tmp/chain/gout" 2>"$tmp/chain/gerr" || no "chain: the emulated GPU run failed: $(cat "$tmp/chain/gerr")"
[ "$(tail -1 "$tmp/chain/gout")" = "$want" ] || no "chain: the emulated GPU counted $(tail -1 "$tmp/chain/gout"), not $want"
bounded 150000 chain "$dir/chain.logic" "$tmp/chain"
echo "chain of $n: $want pairs on the CPU and the emulated GPU"
# the same round with maps in it (a condition the planner moves before a
# join, a rule of one atom after the joins) runs in parts too
bounded 150000 "chain with maps" "$dir/filtered.logic" "$tmp/chain"
$to "$redfox" run "$dir/filtered.logic" --data "$tmp/chain" --device cpu --threads 2 --profile --format csv \
    >"$tmp/chain/fout" 2>"$tmp/chain/ferr"
[ "$(tail -1 "$tmp/chain/fout")" = "$want" ] || no "chain with maps: counted $(tail -1 "$tmp/chain/fout"), not $want"
grep -q "recursion rounds' candidates in parts" "$tmp/chain/ferr" || no "chain with maps: no round ran in parts"

# the same closure negating nodes 100, 200 and 300: every pair but (x, b)
# for x < b - 1, in the same bound (the whole pairs of a round: over 300 MB)
printf '100\n200\n300\n' >"$tmp/chain/blocked.facts"
want=$(awk -v n=$n 'BEGIN { printf "%d\n", n * (n - 1) / 2 - 98 - 198 - 298 }')
bounded 150000 "chain with a negation" "$dir/negchain.logic" "$tmp/chain"
$to "$redfox" run "$dir/negchain.logic" --data "$tmp/chain" --device cpu --threads 2 --profile --format csv \
    >"$tmp/chain/nout" 2>"$tmp/chain/nerr"
[ "$(tail -1 "$tmp/chain/nout")" = "$want" ] || no "chain with a negation: counted $(tail -1 "$tmp/chain/nout"), not $want"
grep -q "recursion rounds' candidates in parts" "$tmp/chain/nerr" || no "chain with a negation: no round ran in parts"

# 1b. a hub: chunks of left rows whose every row matches 3,000 right rows
# (1.9 M pairs in the first chunk, 48,000 distinct candidates): the parts
# are cut inside a chunk, so the round fits in 100 MB (whole chunks: over 150 MB)
mkdir -p "$tmp/hub"
awk -v a=16 -v b=3000 -v h=40 'BEGIN { for (k = 0; k < h; k++) for (i = 1; i <= a; i++) printf "%d\t%d\n", i, -k;
    for (k = 0; k < h; k++) for (j = 0; j < b; j++) printf "%d\t%d\n", -k, 100000 + j }' >"$tmp/hub/edge.facts"
want=$(awk 'BEGIN { print 16 * 40 + 40 * 3000 + 16 * 3000 }')
bounded 100000 hub "$dir/chain.logic" "$tmp/hub"
$to "$redfox" run "$dir/chain.logic" --data "$tmp/hub" --device cpu --threads 2 --set cpu_part_pairs=1000 --format csv \
    >"$tmp/hub/out" 2>"$tmp/hub/err"
[ "$(tail -1 "$tmp/hub/out")" = "$want" ] || no "hub: parts of 1000 pairs counted $(tail -1 "$tmp/hub/out"), not $want"
echo "hub: $want pairs"

# 1c. a rule of three atoms over 7 layers of 40 nodes, every node of a layer
# to every node of the next: a round's second join makes 15.4 M pairs for
# 9,600 distinct candidates; the pairs between layers an odd number apart
# are counted, in 150 MB (the whole pairs of a round: over 500 MB)
mkdir -p "$tmp/layers"
awk -v m=40 -v k=6 'BEGIN { for (l = 0; l < k; l++) for (i = 0; i < m; i++) for (j = 0; j < m; j++)
    printf "%d\t%d\n", l * 1000 + i, (l + 1) * 1000 + j }' >"$tmp/layers/edge.facts"
want=$(awk -v m=40 'BEGIN { print (6 + 4 + 2) * m * m }')
bounded 150000 layers "$dir/layers.logic" "$tmp/layers"
$to "$redfox" run "$dir/layers.logic" --data "$tmp/layers" --device cpu --threads 2 --profile --format csv \
    >"$tmp/layers/out" 2>"$tmp/layers/err"
[ "$(tail -1 "$tmp/layers/out")" = "$want" ] || no "layers: counted $(tail -1 "$tmp/layers/out"), not $want"
grep -q "recursion rounds' candidates in parts" "$tmp/layers/err" || no "layers: no round ran in parts"
echo "layers: $want pairs"
# the same rule with the inputs written first (layersorder.logic: p, and q
# negating node 0 of the last layer, so 2 m less): the same bounds, the
# pairs of both counted (before: the join of the inputs made once before
# the loop, every round held its 15.4 M pairs with it, over 580 MB each)
printf '6000\n' >"$tmp/layers/blocked.facts"
want=$(awk -v m=40 'BEGIN { print 2 * (6 + 4 + 2) * m * m - 2 * m }')
bounded 150000 "layers, inputs first" "$dir/layersorder.logic" "$tmp/layers"
$to "$redfox" run "$dir/layersorder.logic" --data "$tmp/layers" --device cpu --threads 2 --profile --format csv \
    >"$tmp/layers/oout" 2>"$tmp/layers/oerr"
[ "$(tail -1 "$tmp/layers/oout")" = "$want" ] || no "layers, inputs first: counted $(tail -1 "$tmp/layers/oout"), not $want"
grep -q "recursion rounds' candidates in parts" "$tmp/layers/oerr" || no "layers, inputs first: no round ran in parts"
# and every order of the rule's atoms is one plan (the round starts at the
# new rows: pass joinorder), also with conditions on both sides (filters
# of the delta and of e, estimated alike)
for cond in "" ", x > 5, w > 5"; do
    i=0
    for body in "p(x, y), e(y, z), e(z, w)" "e(z, w), p(x, y), e(y, z)" "e(y, z), e(z, w), p(x, y)" \
        "e(z, w), e(y, z), p(x, y)"; do
        i=$((i + 1))
        sed "s/^p(x, w) <- .*/p(x, w) <- $body$cond./" "$dir/layersorder.logic" >"$tmp/layers/order.logic"
        $to "$redfox" dump --harmony "$tmp/layers/order.logic" | sed -n "/^block/,\$p" >"$tmp/layers/plan.$i" ||
            no "layers: dump of $body$cond failed"
        [ -s "$tmp/layers/plan.$i" ] && cmp -s "$tmp/layers/plan.1" "$tmp/layers/plan.$i" ||
            no "layers: '$body$cond' is planned otherwise than with p first"
    done
done
echo "layers, inputs first: $want pairs of p and q"

# 1d. rounds of one join (linear closures, with and without a negation):
# from cpu_part_linear pairs (here 1000: the default's 16 M pairs take a
# bigger graph), in parts where the pairs repeat rows (a random graph of
# 400 nodes and 8,000 edges: a round's millions of pairs for at most
# 160,000 rows), as the kernels apart where they cannot (a star of 800
# nodes, edges 1 -> i and i -> 1: its 640,000 pairs are 640,000 distinct
# rows), with parts of 64 pairs too; below cpu_part_linear (the default
# here) and with it off, apart; every way the rows --no-fuse gives (the
# kernels apart), and Python's
mkdir -p "$tmp/lin/rand" "$tmp/lin/star"
awk -v n=$lin_nodes -v m=$lin_edges 'BEGIN { srand(21); for (i = 0; i < m; i++) printf "%d\t%d\n", int(rand() * n), int(rand() * n) }' \
    >"$tmp/lin/rand/edge.facts"
awk -v n=$lin_nodes 'BEGIN { for (i = 0; i < n; i += 9) print i }' >"$tmp/lin/rand/blocked.facts"
awk -v n=$star 'BEGIN { for (i = 2; i <= n; i++) printf "1\t%d\n%d\t1\n", i, i }' >"$tmp/lin/star/edge.facts"
printf '7\n' >"$tmp/lin/star/blocked.facts"
for g in rand star; do
    d=$tmp/lin/$g
    for way in nofuse default off lin p64; do
        case $way in
        nofuse) opts=--no-fuse ;;
        default) opts= ;;
        off) opts="--set cpu_part_linear=off" ;;
        lin) opts="--set cpu_part_linear=1000" ;;
        p64) opts="--set cpu_part_linear=1000 --set cpu_part_pairs=64" ;;
        esac
        # shellcheck disable=SC2086
        $to "$redfox" run "$dir/linear.logic" --data "$d" --device cpu --threads 2 --profile $opts --out "$d/$way" \
            >/dev/null 2>"$d/err.$way" || no "linear $g, $way: $(cat "$d/err.$way")"
        for f in reach held; do
            cmp -s "$d/nofuse/$f.csv" "$d/$way/$f.csv" || no "linear $g: $f differs with '$opts'"
        done
    done
    if command -v python3 >/dev/null 2>&1; then
        python3 -B - "$d" <<'PY' || no "linear $g: not the rows Python derives"
import os, sys
d = sys.argv[1]
edge = {tuple(int(v) for v in l.split()) for l in open(os.path.join(d, "edge.facts")) if l.strip()}
blocked = {int(l) for l in open(os.path.join(d, "blocked.facts")) if l.strip()}
succ = {}
for (a, b) in edge:
    succ.setdefault(a, set()).add(b)
def closure(ok):
    out = set()
    for x in {a for (a, _) in edge}:
        seen = set(succ.get(x, ()))
        todo = list(seen)
        while todo:
            y = todo.pop()
            for z in succ.get(y, ()):
                if ok(z) and z not in seen:
                    seen.add(z)
                    todo.append(z)
        out |= {(x, z) for z in seen}
    return out
want = {"reach": closure(lambda z: True), "held": closure(lambda z: z not in blocked)}
bad = 0
for f, rows in want.items():
    got = {tuple(int(v) for v in l.strip().split(",")) for l in open(os.path.join(d, "default", f + ".csv"))
           if l.strip()[:1].isdigit()}
    if got != rows:
        print("%s: redfox %d rows, Python %d" % (f, len(got), len(rows)))
        bad = 1
sys.exit(bad)
PY
    fi
done
for way in lin p64; do
    grep -q "candidates in parts" "$tmp/lin/rand/err.$way" || no "linear rand, $way: no round in parts (its pairs repeat rows)"
    ! grep -q "candidates in parts" "$tmp/lin/star/err.$way" || no "linear star, $way: rounds in parts (its rows are all distinct)"
done
for way in nofuse default off; do
    ! grep -q "candidates in parts" "$tmp/lin/rand/err.$way" || no "linear rand, $way: rounds in parts"
done
[ "$(wc -l <"$tmp/lin/star/default/reach.csv")" -gt $((star * star)) ] || no "linear star: too few rows to mean anything"
echo "linear: random graph in parts, star apart; $(wc -l <"$tmp/lin/rand/default/reach.csv") and $(wc -l <"$tmp/lin/star/default/reach.csv") rows of reach, equal 5 ways and to Python's"

# 2. a mixed round: every way, the same bytes
awk 'BEGIN { srand(3); for (i = 1; i < 120; i++) printf "%d\t%d\n", i, i + 1;
             for (i = 0; i < 60; i++) printf "%d\t%d\n", int(rand() * 150), int(rand() * 150) }' >"$tmp/mixed/edge.facts"
way=0
for opts in "--no-fuse" "--set cpu_part_pairs=$one" "" "--set cpu_part_pairs=off" "gpu"; do
    way=$((way + 1))
    if [ "$opts" = gpu ]; then
        RF_GPU_EMULATE=1 $to "$redfox" run "$dir/mixed.logic" --data "$tmp/mixed" --device gpu --out "$tmp/mixed/$way" \
            >/dev/null 2>"$tmp/mixed/err" || no "mixed, emulated GPU: $(cat "$tmp/mixed/err")"
    else
        # shellcheck disable=SC2086
        $to "$redfox" run "$dir/mixed.logic" --data "$tmp/mixed" --device cpu --threads 2 $opts --out "$tmp/mixed/$way" \
            >/dev/null 2>"$tmp/mixed/err" || no "mixed, $opts: $(cat "$tmp/mixed/err")"
    fi
    for f in p q s; do
        [ $way = 1 ] || cmp -s "$tmp/mixed/1/$f.csv" "$tmp/mixed/$way/$f.csv" || no "mixed: $f differs with '$opts'"
    done
done
[ "$(wc -l <"$tmp/mixed/1/p.csv")" -gt 1000 ] || no "mixed: too few rows to mean anything"
echo "mixed: $(wc -l <"$tmp/mixed/1/p.csv") rows of p, equal in 5 ways"

# same_counts A B: two runs' profile counts (six_ways) agree: a loop's kernel
# of empty input that one run did not run, the other may run (on nothing)
# inside its round in parts: reached as often and as many rows out, but an
# empty join still reads its other side's rows (rows in then differ)
same_counts() {
    awk 'NR == FNR { a[FNR] = $0; n = FNR; next }
         { split(a[FNR], x, " ")
           if (x[1] != $1 || x[2] != $2 || x[3] != $3 || x[5] != $5 || (x[6] + $6 == 0 && x[4] != $4)) bad = 1 }
         END { exit bad || n != FNR }' "$1" "$2"
}

# six_ways NAME LOGIC DIR NOFUSE OUTPUTS...: LOGIC over DIR with --no-fuse,
# parts of 7 and 64 pairs, the default, parts off and on the emulated GPU
# (outputs in DIR/1..6): the OUTPUTS the same bytes every way, rounds in
# parts but with --no-fuse (where NOFUSE is "none", none there), and the
# profile's calls and row counts the kernels' own
six_ways() {
    name=$1 logic=$2 d=$3 nofuse=$4
    shift 4
    way=0
    for opts in "--no-fuse" "--set cpu_part_pairs=7" "--set cpu_part_pairs=64" "" "--set cpu_part_pairs=off" "gpu"; do
        way=$((way + 1))
        if [ "$opts" = gpu ]; then
            RF_GPU_EMULATE=1 $to "$redfox" run "$logic" --data "$d" --device gpu --out "$d/$way" \
                >/dev/null 2>"$d/err" || no "$name, emulated GPU: $(cat "$d/err")"
        else
            # shellcheck disable=SC2086
            $to "$redfox" run "$logic" --data "$d" --device cpu --threads 2 --profile $opts \
                --out "$d/$way" >/dev/null 2>"$d/err" || no "$name, $opts: $(cat "$d/err")"
            # kernel, kind, times reached (calls and loop kernels not run:
            # their input was empty), rows in, rows out, not run
            awk '/^kernel / { sk = / skipped$/ } /^k[0-9]/ { print $1, $2, $4 + (sk ? $NF : 0), $6, $7, sk ? $NF : 0 }' \
                "$d/err" >"$d/counts.$way"
            case "$opts" in
            --no-fuse) [ "$nofuse" != none ] || ! grep -q "candidates in parts" "$d/err" ||
                           no "$name: rounds in parts with --no-fuse" ;;
            *) grep -q "candidates in parts" "$d/err" || no "$name: no round in parts with '$opts'"
               same_counts "$d/counts.1" "$d/counts.$way" || no "$name: the profile's counts differ with '$opts'" ;;
            esac
        fi
        for f in "$@"; do
            [ $way = 1 ] || cmp -s "$d/1/$f.csv" "$d/$way/$f.csv" || no "$name: $f differs with '$opts'"
        done
    done
}

# 2b. negations: every way the same bytes, and the rows an independent
# evaluation (Python) derives
mkdir -p "$tmp/neg"
awk 'BEGIN { srand(7); for (i = 1; i < 90; i++) printf "%d\t%d\n", i, i + 1;
             for (i = 0; i < 70; i++) printf "%d\t%d\n", int(rand() * 120), int(rand() * 120) }' >"$tmp/neg/edge.facts"
awk 'BEGIN { srand(8); for (i = 0; i < 12; i++) print int(rand() * 120) }' >"$tmp/neg/blocked.facts"
awk 'BEGIN { srand(9); for (i = 0; i < 400; i++) printf "%d\t%d\n", int(rand() * 120), int(rand() * 120) }' \
    >"$tmp/neg/banned.facts"
six_ways negated "$dir/negated.logic" "$tmp/neg" none r
if command -v python3 >/dev/null 2>&1; then
    python3 -B - "$tmp/neg" <<'PY' || no "negated: not the rows Python derives"
import os, sys
d = sys.argv[1]
pairs = lambda f: {tuple(int(v) for v in l.split()) for l in open(os.path.join(d, f)) if l.strip()}
edge, banned = pairs("edge.facts"), pairs("banned.facts")
blocked = {int(l) for l in open(os.path.join(d, "blocked.facts")) if l.strip()}
hub = {x for (x, y) in edge for (x2, z) in edge if x2 == x and y < z - 40}
edge_from = {}
for (y, z) in edge:
    edge_from.setdefault(y, []).append(z)
r = set(edge)
while True:
    by_first = {}
    for (x, y) in r:
        by_first.setdefault(x, []).append(y)
    new = set()
    for (x, y) in r:
        for z in by_first.get(y, ()):
            if z not in blocked: new.add((x, z))
            if y not in hub and z > x: new.add((x, z))
        for z in edge_from.get(y, ()):
            if (x, z) not in banned and x != z: new.add((x, z))
    if new <= r: break
    r |= new
got = {tuple(int(v) for v in l.strip().split(",")) for l in open(os.path.join(d, "1", "r.csv")) if l.strip()[:1].isdigit() or l.strip()[:1] == "-"}
if got != r:
    print("redfox %d rows, Python %d; only redfox: %s; only Python: %s" % (len(got), len(r), sorted(got - r)[:5], sorted(r - got)[:5]))
    sys.exit(1)
PY
fi
[ "$(wc -l <"$tmp/neg/1/r.csv")" -gt 1000 ] || no "negated: too few rows to mean anything"
echo "negated: $(wc -l <"$tmp/neg/1/r.csv") rows of r, equal in 6 ways and to Python's"

# 2c. rules of three and four atoms: every way the same bytes, and the rows
# Python derives
mkdir -p "$tmp/three"
awk -v n=$nthree 'BEGIN { srand(11); for (i = 0; i < n; i++) printf "%d\t%d\n", int(rand() * 70), int(rand() * 70) }' \
    >"$tmp/three/edge.facts"
awk 'BEGIN { srand(12); for (i = 0; i < 6; i++) print int(rand() * 70) }' >"$tmp/three/blocked.facts"
six_ways three "$dir/three.logic" "$tmp/three" any p q
if command -v python3 >/dev/null 2>&1; then
    python3 -B - "$tmp/three" <<'PY' || no "three: not the rows Python derives"
import os, sys
d = sys.argv[1]
edge = {tuple(int(v) for v in l.split()) for l in open(os.path.join(d, "edge.facts")) if l.strip()}
blocked = {int(l) for l in open(os.path.join(d, "blocked.facts")) if l.strip()}
def succ(rel):
    out = {}
    for (a, b) in rel:
        out.setdefault(a, set()).add(b)
    return out
es = succ(edge)
def fix(step):
    r = set(edge)
    while True:
        new = step(r) - r
        if not new: return r
        r |= new
def p_step(r):
    rs, out = succ(r), set()
    for (x, y) in r:
        for z in es.get(y, ()):
            out |= {(x, w) for w in es.get(z, ()) if w not in blocked}
        for z in rs.get(y, ()):
            out |= {(x, w) for w in rs.get(z, ()) if x < w + 30}
    return out
def q_step(r):
    out = set()
    for (x, y) in r:
        for z in es.get(y, ()):
            for w in es.get(z, ()):
                out |= {(x, v) for v in es.get(w, ()) if x != v}
    return out
want = {"p": fix(p_step), "q": fix(q_step)}
for f, rows in want.items():
    got = {tuple(int(v) for v in l.strip().split(",")) for l in open(os.path.join(d, "1", f + ".csv"))
           if l.strip()[:1].isdigit() or l.strip()[:1] == "-"}
    if got != rows:
        print("%s: redfox %d rows, Python %d" % (f, len(got), len(rows)))
        sys.exit(1)
PY
fi
[ "$(wc -l <"$tmp/three/1/p.csv")" -gt 1000 ] || no "three: too few rows to mean anything"
echo "three atoms: $(wc -l <"$tmp/three/1/p.csv") rows of p, $(wc -l <"$tmp/three/1/q.csv") of q, equal in 6 ways and to Python's"

# 3. an overflow in a round of many parts (after a negation in negoverflow,
# in a second join in overflow3)
{ awk 'BEGIN { for (i = 1; i < 200; i++) printf "%d\t%d\n", i, i + 1 }'; printf '150\t20000\n120\t30000\n60\t40000\n'; } \
    >"$tmp/ov/edge.facts"
printf '20000\n' >"$tmp/ov/blocked.facts"
# same_error PROG DATA OPTS...: PROG fails (exit 1) with --no-fuse, and with
# each of OPTS with the same exit and the same message (DATA/err.a, err.b)
same_error() {
    prog=$1 data=$2
    shift 2
    $to "$redfox" run "$dir/$prog.logic" --data "$data" --device cpu --no-fuse >/dev/null 2>"$data/err.a"
    ra=$?
    for opts in "$@"; do
        # shellcheck disable=SC2086
        $to "$redfox" run "$dir/$prog.logic" --data "$data" --device cpu $opts >/dev/null 2>"$data/err.b"
        rb=$?
        if [ $ra -ne 1 ] || [ $rb -ne $ra ] || ! cmp -s "$data/err.a" "$data/err.b"; then
            no "$prog with '$opts': exit $ra / $rb"; cat "$data/err.a" "$data/err.b"
        fi
    done
    echo "$prog: $(head -1 "$data/err.a")"
}
for prog in overflow negoverflow overflow3; do
    same_error $prog "$tmp/ov" "--set cpu_part_pairs=1" "--set cpu_part_pairs=64" ""
done
# two stages that fail: (5, 1) fails in the last join's condition (20000 *
# 10^15) in the first part, (100, 102) in the computed key (102 * 10^17) later
mkdir -p "$tmp/st"
{ printf '5\t0\n0\t1\n100000000000000000\t20000\n'; awk 'BEGIN { for (i = 100; i < 200; i++) printf "%d\t%d\n", i, i + 1 }'; } \
    >"$tmp/st/edge.facts"
same_error stages "$tmp/st" "--set cpu_part_pairs=1" "--set cpu_part_pairs=2" ""
grep -q "overflow in 102 \* 100000000000000000" "$tmp/st/err.a" || no "stages: not the computed key's error: $(cat "$tmp/st/err.a")"
# Same generation over 4 layers of 400 nodes under one root (samegen.logic):
# in its third round the first 1024 edges (out of the layers above) match
# none of the new rows, and the next chunk has more pairs than a part. A
# chunk of no pairs given alone read as the end of the join's parts: that
# round made no rows and the count stopped at 480,046. Every ordered pair of
# distinct nodes of one layer, counted by Python from the edges' depths;
# the default, parts of 1,000 pairs, one part per join and --no-fuse.
mkdir -p "$tmp/sg"
python3 -B - "$tmp/sg/edge.facts" <<'PY' || no "samegen: no input"
import random, sys
random.seed(11)
rows, prev, node = [], [0], 1
for layer in range(4):
    cur = list(range(node, node + 400))
    node += 400
    rows += [(random.choice(prev), c) for c in cur]
    prev = cur
open(sys.argv[1], "w").write("".join("%d\t%d\n" % r for r in sorted(rows)))
PY
want=$(python3 -B - "$tmp/sg/edge.facts" <<'PY'
import sys
parent = {int(c): int(p) for p, c in (l.split("\t") for l in open(sys.argv[1]))}
depth = {}
def d(n):
    if n not in depth: depth[n] = 0 if n not in parent else d(parent[n]) + 1
    return depth[n]
count = {}
for n in parent: count[d(n)] = count.get(d(n), 0) + 1
print(sum(k * (k - 1) for k in count.values()))
PY
)
for opts in "" "--set cpu_part_pairs=1000" "--set cpu_part_pairs=off" "--no-fuse"; do
    # shellcheck disable=SC2086
    got=$($to "$redfox" run "$dir/samegen.logic" --data "$tmp/sg" --device cpu --threads 2 --format csv $opts 2>"$tmp/sg/err" | tail -1)
    [ "$got" = "$want" ] || { no "samegen with '$opts': $got pairs, not $want"; cat "$tmp/sg/err"; }
done
echo "samegen: $want pairs of one layer, in parts and apart"
exit $fail
