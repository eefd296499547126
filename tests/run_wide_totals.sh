#!/bin/sh
# tests/run_wide_totals.sh REDFOX TESTS_DIR WORK_DIR: totals of decimals beyond
# decimal's 64 bits (tests/wide/wide.logic over tests/wide/data/sale.csv, whose
# amounts are near 9.2e12) are exact: grouped and not, avg, min and max of a
# total, a join on totals, totals in arithmetic and comparisons, a total of
# totals, an ordered output, decimal:float of a total. Checked against values
# computed here with Python's decimal module (never stored answers):
#   1. one CPU process
#   2. 2 and 3 CPU ranks (where mpirun and an MPI build are there), byte for byte;
#      and a total of wide values whose parts on a rank would leave the range
#   3. the GPU emulator (wide decimals 16 bytes on the device): the expected
#      values, byte for byte the CPU's; also over small amounts
#   4. tests/wide/overflow.logic: a value beyond the wide range (38 digits) is
#      the run-time overflow error naming the rule, on the CPU and, word for
#      word the same, on the emulator
#   5. tests/wide/negated_input.logic: a total looked up in an input's 64-bit
#      decimal under negation is an error naming both (the other way round, a
#      decimal in a total's column, wide.logic's lonely, works)
set -u
redfox=$1
tests=$2
work=$3
tmp=$work/tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
w=$tests/wide

# ---- the expected outputs, computed independently -----------------------------
python3 - "$w/data/sale.csv" "$tmp/want" <<'PY' || { echo "FAIL: python3"; exit 1; }
import csv, os, sys
from decimal import Decimal, ROUND_HALF_UP, getcontext
getcontext().prec = 80
src, out = sys.argv[1], sys.argv[2]
os.makedirs(out)
rows = list(csv.DictReader(open(src)))
U = Decimal("0.000001")
def q(d):  # round half away from zero to 6 digits (ROUND_HALF_UP is away from zero)
    return d.quantize(U, rounding=ROUND_HALF_UP)
def fmt(d):
    d = q(d)
    s = format(d, "f")
    if "." not in s:
        s += ".00"
    i, f = s.split(".")
    f = f.rstrip("0")
    while len(f) < 2:
        f += "0"
    return i + "." + f
def ffmt(x):
    s = repr(x)
    return s if ("." in s or "e" in s or "n" in s) else s + ".0"
tot, cnt = {}, {}
for r in rows:
    a = Decimal(r["amount"])
    tot[r["region"]] = tot.get(r["region"], Decimal(0)) + a
    cnt[r["region"]] = cnt.get(r["region"], 0) + 1
g = sum(tot.values(), Decimal(0))
def write(name, header, lines):
    with open(os.path.join(out, name + ".csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for l in lines:
            f.write(",".join(l) + "\n")
write("byregion", ["r", "t"], [[k, fmt(v)] for k, v in sorted(tot.items(), key=lambda kv: (-kv[1], kv[0]))])
write("grand", ["t"], [[fmt(g)]])
write("mean", ["r", "m"], [[k, fmt(tot[k] / cnt[k])] for k in sorted(tot)])
write("largest", ["m"], [[fmt(max(tot.values()))]])
write("smallest", ["m"], [[fmt(min(tot.values()))]])
write("twins", ["r", "s"], [[a, b] for a in sorted(tot) for b in sorted(tot) if a != b and tot[a] == tot[b]])
write("scaled", ["r", "v"], [[k, fmt(tot[k] * 3 - q(g / 7))] for k in sorted(tot)])
write("above", ["r"], [[k] for k in sorted(tot) if tot[k] * 4 > g])
write("ofall", ["s"], [[fmt(sum(tot.values(), Decimal(0)))]])
write("asfloat", ["r", "f"], [[k, ffmt(int(tot[k] * 1000000) / 1e6)] for k in sorted(tot)])
write("lonely", ["r", "a"], [[r, fmt(a)] for r, a in sorted({(x["region"], Decimal(x["amount"])) for x in rows})
                             if a != tot[r]])
cheapest = {}
for k in sorted(tot):
    cheapest[k] = min([tot[k]] + [c + 1 for c in cheapest.values()])
write("cheapest", ["r", "m"], [[k, fmt(cheapest[k])] for k in sorted(cheapest)])
PY
# the data reach beyond 64 bits, or the test proves nothing
big=$(sed -n 2p "$tmp/want/grand.csv")
case $big in -2[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9].* | [1-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]*) ;;
*) fail "the grand total $big is within decimal's range: the data do not test wide totals" ;; esac

# ---- 1. one CPU process ----------------------------------------------------------
if "$redfox" run "$w/wide.logic" --data "$w/data" --device cpu --out "$tmp/cpu" 2>"$tmp/cpu.err"; then
    diff -r -x .redfox.lock "$tmp/want" "$tmp/cpu" || fail "the CPU's outputs differ from the expected values"
else
    fail "the CPU run failed"; cat "$tmp/cpu.err"
fi

# ---- 2. CPU ranks ----------------------------------------------------------------
if command -v mpirun >/dev/null 2>&1; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    # as tests/mpi_env.sh: Open MPI's allocations live until exit; full unwinding
    # lets the suppressions match stacks through its libraries
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
    export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$tests/lsan_mpi.supp"
    for n in 2 3; do
        if mpirun --oversubscribe -np $n "$redfox" run "$w/wide.logic" --data "$w/data" --device cpu \
            --out "$tmp/ranks$n" 2>"$tmp/ranks$n.err"; then
            diff -r -x .redfox.lock "$tmp/want" "$tmp/ranks$n" || fail "$n CPU ranks: outputs differ from the expected values"
        elif grep -q "built without MPI" "$tmp/ranks$n.err"; then
            echo "note: redfox built without MPI: ranks not tested"
            break
        else
            fail "$n CPU ranks failed"; cat "$tmp/ranks$n.err"
        fi
    done
    # a total of wide values whose one rank's part would leave the range, the
    # whole within it (rows 1-20 and 21-40 of opposite signs, each near
    # 8.1e31): ranks do not split it into parts, so they answer as one process
    mkdir -p "$tmp/parts"
    cat >"$tmp/parts/p.logic" <<'P'
b(k, a, s) -> int(k), decimal(a), int(s).
lang:input[`b] = "b.csv".
lang:input:delimiter[`b] = ",".
t[k] = y <- agg<<y = total(a)>> b(k, a, _).
w(k, x) <- b(k, a, s), t[k] = y, x = y * a * 1000000 * s.
tt[] = z <- agg<<z = total(x)>> w(_, x).
lang:output[`tt] = "tt".
P
    i=1
    while [ $i -le 40 ]; do echo "$i,9000000000000,$([ $i -le 20 ] && echo 1 || echo -1)"; i=$((i + 1)); done >"$tmp/parts/b.csv"
    # (stdout alone compared: under the sanitizers the ranks print LeakSanitizer's
    # table of suppressions on stderr)
    "$redfox" run "$tmp/parts/p.logic" --data "$tmp/parts" --device cpu >"$tmp/parts/one" 2>"$tmp/parts/one.err" ||
        { fail "parts: one process"; cat "$tmp/parts/one.err"; }
    grep -qx "0.00" "$tmp/parts/one" || { fail "parts: one process, not 0.00"; cat "$tmp/parts/one"; }
    for n in 2 3; do
        mpirun --oversubscribe -np $n "$redfox" run "$tmp/parts/p.logic" --data "$tmp/parts" --device cpu \
            >"$tmp/parts/r$n" 2>"$tmp/parts/r$n.err" || grep -q "built without MPI" "$tmp/parts/r$n.err" ||
            { fail "parts: $n CPU ranks failed"; cat "$tmp/parts/r$n.err"; }
        grep -q "built without MPI" "$tmp/parts/r$n.err" || cmp -s "$tmp/parts/one" "$tmp/parts/r$n" ||
            { fail "parts: $n CPU ranks differ from one process"; cat "$tmp/parts/r$n" "$tmp/parts/r$n.err"; }
    done
else
    echo "note: no mpirun: ranks not tested"
fi

# ---- 3. the GPU emulator ---------------------------------------------------------
# (the device holds wide decimals as 16 bytes and computes them as the CPU does)
emu=1
if RF_GPU_EMULATE=1 "$redfox" run "$w/wide.logic" --data "$w/data" --device gpu --out "$tmp/emu" 2>"$tmp/emu.err"; then
    diff -r -x .redfox.lock "$tmp/want" "$tmp/emu" || fail "the emulator's outputs differ from the expected values"
    [ -d "$tmp/cpu" ] && { diff -r -x .redfox.lock "$tmp/cpu" "$tmp/emu" || fail "the emulator's outputs differ from the CPU's"; }
elif grep -q "no usable GPU\|emulat" "$tmp/emu.err" && ! grep -q "out of range\|overflow" "$tmp/emu.err"; then
    echo "note: no GPU emulator here: not tested"
    emu=0
else
    fail "the emulator failed"; cat "$tmp/emu.err"
fi
# the same program over amounts whose totals fit 64 bits: the CPU's output exactly
"$redfox" run "$w/wide.logic" --data "$w/small" --device cpu --out "$tmp/small.cpu" 2>"$tmp/small.cpu.err" ||
    { fail "the CPU run over small amounts failed"; cat "$tmp/small.cpu.err"; }
if [ $emu -eq 1 ]; then
    if RF_GPU_EMULATE=1 "$redfox" run "$w/wide.logic" --data "$w/small" --device gpu --out "$tmp/small.emu" \
        2>"$tmp/small.emu.err"; then
        diff -r -x .redfox.lock "$tmp/small.cpu" "$tmp/small.emu" || fail "the emulator's outputs over small amounts differ from the CPU's"
    else
        fail "the emulator over small amounts failed"; cat "$tmp/small.emu.err"
    fi
fi

# ---- 4. beyond the wide range: the overflow error at the rule ----------------------
if "$redfox" run "$w/overflow.logic" --data "$w/data" --device cpu >"$tmp/overflow.out" 2>"$tmp/overflow.err"; then
    fail "a value beyond 38 digits was computed"
else
    grep -q "overflow.logic:10:.*decimal overflow in " "$tmp/overflow.err" ||
        { fail "overflow: not the decimal overflow error at the rule"; cat "$tmp/overflow.err"; }
fi
# the emulator: the CPU's error, word for word
if [ $emu -eq 1 ]; then
    if RF_GPU_EMULATE=1 "$redfox" run "$w/overflow.logic" --data "$w/data" --device gpu >"$tmp/overflow.emu.out" \
        2>"$tmp/overflow.emu.err"; then
        fail "the emulator computed a value beyond 38 digits"
    else
        # (the error lines: a sanitizer build's emulator adds a warning of its own)
        [ "$(grep 'error:' "$tmp/overflow.err")" = "$(grep 'error:' "$tmp/overflow.emu.err")" ] ||
            { fail "overflow: the emulator's error differs from the CPU's"; cat "$tmp/overflow.emu.err"; }
    fi
fi

# ---- 5. a total looked up in an input's 64-bit decimal under negation: a clear error
if "$redfox" run "$w/negated_input.logic" --data "$w/data" --device cpu >"$tmp/neg.out" 2>"$tmp/neg.err"; then
    fail "a total was looked up in an input's decimal under negation"
else
    grep -q "negated_input.logic:10:.*error: \`t\` is a total of decimals (exact beyond 64 bits), which a negation cannot look up in column 3 (\`amount\`) of \`sale\`" "$tmp/neg.err" ||
        { fail "negated_input: not the error naming the total and the column"; cat "$tmp/neg.err"; }
fi

[ $fails -eq 0 ] || exit 1
echo "wide totals: ok"
