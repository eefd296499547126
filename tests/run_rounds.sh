#!/bin/sh
# tests/run_rounds.sh REDFOX TESTS MODE: a semi-naive loop does not run the
# kernels of rules whose delta inputs are empty (runtime/rt_run.c, "a loop's
# kernels of empty input"), and the answers stay exact on every engine.
# Three recursions, their answers computed here in Python:
#   ring: a cycle of N copies p1(x) <- p0(x), ..., closed by
#         p0(y) <- p<N-1>(x), s(x, y) with s a chain 0 -> 1 -> ... -> 10:
#         each value goes round the ring alone, so each round one rule of N
#         has new input; every p_i ends as 0 .. 10
#   mutual: a(x, y) <- e(x, y); a(x, z) <- b(x, y), e(y, z);
#         b(x, z) <- a(x, y), e(y, z), !blocked(z); c(x, y) <- a(x, y), b(y, x)
#         (several rules per predicate, a join, a negation) over a small graph
#   closure: a non-linear closure t(x, z) <- t(x, y), t(y, z) beside a linear
#         one u(x, y) <- u(x, z), g(z, y) over a cycle with chords
# MODE cpu: N = 50, fused and --no-fuse; --profile counts the ring's kernel
#   calls: fewer than a tenth of the kernel runs it skipped (without the skip
#   every rule runs every round: about N * N * 5 calls);
# MODE emu: the GPU emulator, fused and --no-fuse, with its skipped count;
# MODE mpi: 2 CPU ranks and 2 emulated GPU ranks (skipped, 77, where mpirun
#   or MPI is missing).
set -u
redfox=$1
tests=$2
mode=$3
tmp=${TMPDIR:-/tmp}/rf_rounds.$$
if [ "$mode" = mpi ]; then
    . "$tests/mpi_env.sh"
else
    mkdir -p "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    fails=0
    fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
fi
python3 - "$tmp" 50 <<'PY' || { echo "FAIL: python3 could not write the programs"; exit 1; }
import os, sys
tmp, n = sys.argv[1], int(sys.argv[2])
def w(name, text):
    with open(os.path.join(tmp, name), "w") as f: f.write(text)
def rows(name, rs):
    w(name, "".join("\t".join(str(v) for v in r) + "\n" for r in rs))
def expect(prog, outs):
    # outs: name -> (header, rows)
    for name, (head, rs) in outs.items():
        w("%s.%s.expect" % (prog, name), head + "\n" + "".join(",".join(str(v) for v in r) + "\n" for r in sorted(rs)))

# ring
p = ["s(x, y) -> int(x), int(y).", 'lang:input[`s] = "s.facts".', 'lang:input:delimiter[`s] = "\\t".', "p0(0)."]
p += ["p%d(x) <- p%d(x)." % (i, i - 1) for i in range(1, n)]
p += ["p0(y) <- p%d(x), s(x, y)." % (n - 1)]
p += ["c(k, t) <- agg<<k = count(), t = total(x)>> p%d(x)." % (n - 1),
      "h(k, t) <- agg<<k = count(), t = total(x)>> p%d(x)." % (n // 2),
      'lang:output[`c] = "c". lang:output[`h] = "h".']
w("ring.logic", "\n".join(p) + "\n")
rows("s.facts", [(i, i + 1) for i in range(10)])
expect("ring", {"c": ("k,t", [(11, 55)]), "h": ("k,t", [(11, 55)])})

# mutual
e = [(i, i + 1) for i in range(1, 14)] + [(5, 2), (9, 3), (12, 1), (3, 11)]
blocked = [(7,), (11,)]
rows("e.facts", e)
rows("blocked.facts", blocked)
w("mutual.logic", """e(x, y) -> int(x), int(y).
lang:input[`e] = "e.facts".
lang:input:delimiter[`e] = "\\t".
blocked(x) -> int(x).
lang:input[`blocked] = "blocked.facts".
a(x, y) <- e(x, y).
a(x, z) <- b(x, y), e(y, z).
b(x, z) <- a(x, y), e(y, z), !blocked(z).
c(x, y) <- a(x, y), b(y, x).
lang:output[`a] = "a". lang:output[`b] = "b". lang:output[`c] = "c".
""")
A, B = set(e), set()
bl = {x for (x,) in blocked}
while True:
    nA = A | {(x, z) for (x, y) in B for (y2, z) in e if y == y2}
    nB = B | {(x, z) for (x, y) in A for (y2, z) in e if y == y2 and z not in bl}
    if nA == A and nB == B: break
    A, B = nA, nB
C = {(x, y) for (x, y) in A if (y, x) in B}
expect("mutual", {"a": ("x,y", A), "b": ("x,y", B), "c": ("x,y", C)})

# closure
m = 24
g = [(i, (i + 1) % m) for i in range(m)] + [(i, (i + 7) % m) for i in range(0, m, 5)]
rows("g.facts", g)
w("closure.logic", """g(x, y) -> int(x), int(y).
lang:input[`g] = "g.facts".
lang:input:delimiter[`g] = "\\t".
t(x, y) <- g(x, y).
t(x, z) <- t(x, y), t(y, z).
u(x, y) <- g(x, y), x < 3.
u(x, y) <- u(x, z), g(z, y).
tn(k) <- agg<<k = count()>> t(_, _).
lang:output[`tn] = "tn". lang:output[`u] = "u".
""")
T = set(g)
while True:
    nT = T | {(x, z) for (x, y) in T for (y2, z) in T if y == y2}
    if nT == T: break
    T = nT
U = {(x, y) for (x, y) in g if x < 3}
while True:
    nU = U | {(x, y) for (x, z) in U for (z2, y) in g if z == z2}
    if nU == U: break
    U = nU
expect("closure", {"tn": ("k", [(len(T),)]), "u": ("x,y", U)})
PY

# run WAY PROG [redfox's options...]: the outputs against Python's
run() {
    way=$1 prog=$2
    shift 2
    out="$tmp/out.$way.$prog"
    rm -rf "$out"
    if [ "$mode" = mpi ]; then
        $mpi 2 "$redfox" run "$tmp/$prog.logic" --data "$tmp" --out "$out" "$@" >/dev/null 2>"$tmp/err.$way.$prog"
    else
        "$redfox" run "$tmp/$prog.logic" --data "$tmp" --out "$out" --profile "$@" >/dev/null 2>"$tmp/err.$way.$prog"
    fi || { fail "$way $prog: redfox run failed"; cat "$tmp/err.$way.$prog"; return 1; }
    for x in "$tmp/$prog".*.expect; do
        name=${x#"$tmp/$prog."}
        name=${name%.expect}
        # (the rows; the header is the program's variable names)
        tail -n +2 "$out/$name.csv" | sort -t, -k1,1n -k2,2n >"$tmp/got"
        tail -n +2 "$x" | sort -t, -k1,1n -k2,2n >"$tmp/want"
        cmp -s "$tmp/got" "$tmp/want" || { fail "$way $prog: output $name differs from Python's"; diff "$tmp/want" "$tmp/got" | head -5; }
    done
    return 0
}

# calls WAY PROG: the ring's kernel calls << the runs skipped (each round, one rule of N runs)
calls() {
    err="$tmp/err.$1.$2"
    c=$(awk '$1 ~ /^k[0-9]+$/ && $4 ~ /^[0-9]+$/ { n += $4 } END { print n + 0 }' "$err")
    s=$(sed -n 's/^skipped: \([0-9]*\) runs.*/\1/p' "$err")
    [ -n "$s" ] || { fail "$1 $2: --profile names no skipped kernel"; return; }
    [ $((c * 10)) -lt "$s" ] || fail "$1 $2: $c kernel calls for $s skipped: the skip did not work"
}

case $mode in
cpu)
    for prog in ring mutual closure; do
        run cpu "$prog" --device cpu && [ "$prog" = ring ] && calls cpu ring
        run nofuse "$prog" --device cpu --no-fuse
    done
    ;;
emu)
    export RF_GPU_EMULATE=1
    for prog in ring mutual closure; do
        run gpu "$prog" --device gpu && [ "$prog" = ring ] && calls gpu ring
        run gpunofuse "$prog" --device gpu --no-fuse
    done
    ;;
mpi)
    export RF_GPU_EMULATE=1 # (for the GPU ranks; the CPU's ignore it)
    for prog in ring mutual closure; do
        run ranks "$prog" --device cpu
        run gpuranks "$prog" --device gpu
    done
    ;;
esac
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "rounds $mode: ok"
