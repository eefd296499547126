#!/bin/sh
# tests/run_deep.sh REDFOX CHAIN_RULES [LONG]: large and deep programs, generated
# here (not committed): a chain of CHAIN_RULES rules and the longest allowed
# expression compile and run (CPU and the GPU emulator) with the right
# answer and within a time limit; every limit past that is an error naming
# file:line:col with exit status 1, never a crash, a hang or an internal
# error. Sizes: see tests/CMakeLists.txt (smaller under the sanitizers).
set -u
redfox=$1
chain=$2
long=${3:-100000}
tmp=${TMPDIR:-/tmp}/rf_deep.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache" # (the GPU caches: $XDG_CACHE_HOME/redfox)
fail=0
printf '1\n2\n3\n' > "$tmp/in.csv"
# rows of the output relation, one per line, from `run --format tbl` (header dropped)
rows() { tail -n +2 "$1" | tr -d ' ' | tr '\n' ' '; }

# must_run NAME EXPECTED-ROWS SECONDS: compile and run NAME.logic on the CPU
# and, where asked, the GPU emulator
must_run() {
    start=$(date +%s)
    if [ "${4:-}" = cpu ]; then
        # the program run straight from its source on the CPU (no GPU code made)
        /usr/bin/time -f "$1: cpu run from source: %e s, peak RSS %M KB" "$redfox" run "$tmp/$1.logic" --device cpu --data "$tmp" --format tbl > "$tmp/out" 2>"$tmp/err"
        if [ $? -ne 0 ] || [ "$(rows "$tmp/out")" != "$2" ]; then
            echo "FAIL: $1: cpu run: got '$(rows "$tmp/out")', expected '$2'"; cat "$tmp/err"; fail=1
        fi
        grep "peak RSS" "$tmp/err"
        return
    fi
    if ! "$redfox" compile "$tmp/$1.logic" -o "$tmp/$1.rfx" 2>"$tmp/err"; then
        echo "FAIL: $1: compile"; cat "$tmp/err"; fail=1; return
    fi
    "$redfox" run "$tmp/$1.rfx" --device cpu --data "$tmp" --format tbl > "$tmp/out" 2>"$tmp/err"
    if [ $? -ne 0 ] || [ "$(rows "$tmp/out")" != "$2" ]; then
        echo "FAIL: $1: cpu run: got '$(rows "$tmp/out")', expected '$2'"; cat "$tmp/err"; fail=1
    fi
    if [ "${4:-}" = emu ]; then
        RF_GPU_EMULATE=1 "$redfox" run "$tmp/$1.rfx" --device gpu --data "$tmp" --format tbl > "$tmp/out" 2>"$tmp/err"
        if [ $? -ne 0 ] || [ "$(rows "$tmp/out")" != "$2" ]; then
            echo "FAIL: $1: emulated gpu run: got '$(rows "$tmp/out")', expected '$2'"; cat "$tmp/err"; fail=1
        fi
    fi
    took=$(( $(date +%s) - start ))
    echo "$1: compile, cpu run${4:+ and $4 run}: $took s"
    if [ "$took" -gt "$3" ]; then echo "FAIL: $1: took $took s, more than $3 s"; fail=1; fi
}

# must_refuse NAME MESSAGE: exit status 1 and "NAME.logic:LINE:COL: error: MESSAGE"
must_refuse() {
    "$redfox" compile "$tmp/$1.logic" -o "$tmp/$1.rfx" >/dev/null 2>"$tmp/err"
    rc=$?
    if [ $rc -ne 1 ] || ! grep -q "^$tmp/$1.logic:[0-9]*:[0-9]*: error: $2" "$tmp/err"; then
        echo "FAIL: $1: exit $rc, expected 1 and \"$2\""; head -c 2000 "$tmp/err"; fail=1
    fi
}

header() { printf 'lang:input[`in] = "in.csv".\nin(x) -> int(x).\n'; }

# a chain of rules: p1(x) <- p0(x). p2(x) <- p1(x). ...
{ printf 'lang:input[`p0] = "in.csv".\np0(x) -> int(x).\n'
  awk -v n="$chain" 'BEGIN { for (i = 1; i <= n; i++) printf "p%d(x) <- p%d(x).\n", i, i - 1 }'
  printf 'lang:output[`p%d] = "out".\n' "$chain"; } > "$tmp/chain.logic"
must_run chain "1 2 3 " 300
# the emulator compiles the plan's kernels with the host's C++ compiler: a shorter chain
{ printf 'lang:input[`p0] = "in.csv".\np0(x) -> int(x).\n'
  awk 'BEGIN { for (i = 1; i <= 1000; i++) printf "p%d(x) <- p%d(x).\n", i, i - 1 }'
  printf 'lang:output[`p1000] = "out".\n'; } > "$tmp/chain_emu.logic"
must_run chain_emu "1 2 3 " 300 emu

# a chain of one operator is one flat node, however long: x + x + ... + x
# (100,000 terms) and 5000000 - x - ... - x compile and run; the answers are
# computed here by awk
sum() { awk -v n="$1" -v op="$2" 'BEGIN { printf "x"; for (i = 1; i < n; i++) printf " %s x", op }'; }
expect() { awk -v n="$1" -v base="$2" -v sign="$3" 'BEGIN { for (x = 1; x <= 3; x++) printf "%d|%d ", x, base + sign * n * x }'; }
{ header; printf 'out(x, y) <- in(x), y = '; sum 1001 +; printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/sum.logic"
must_run sum "$(expect 1001 0 1)" 300 emu
{ header; printf 'out(x, y) <- in(x), y = 5000000 - '; sum 1000 -; printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/diff.logic"
must_run diff "$(expect 1000 5000000 -1)" 300
{ header; printf 'out(x, y) <- in(x), y = '; sum "$long" +; printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/sum_long.logic"
must_run sum_long "$(expect "$long" 0 1)" 300 cpu
must_run sum_long "$(expect "$long" 0 1)" 300 emu
# a concatenation of LONG strings, t + t + ... + t: only the whole string is
# interned (interning each partial one kept LONG^2 / 2 bytes per row: 15 GB),
# so it runs in little memory; its length is LONG times the row's
{ header; printf 'ins(t) -> string(t).\nlang:input[`ins] = "in.csv".\nout(t, n) <- ins(t), n = string:length['
  awk -v n="$long" 'BEGIN { printf "t"; for (i = 1; i < n; i++) printf " + t" }'
  printf '].\nlang:output[`out] = "out".\n'; } > "$tmp/cat_long.logic"
must_run cat_long "$(awk -v n="$long" 'BEGIN { for (x = 1; x <= 3; x++) printf "%d|%d ", x, n }')" 300 cpu
rss=$(sed -n 's/^cat_long: cpu run from source: .* peak RSS \([0-9]*\) KB$/\1/p' "$tmp/err")
if [ -n "$rss" ] && [ "$rss" -gt 1000000 ]; then echo "FAIL: cat_long: peak RSS $rss KB"; fail=1; fi
must_run cat_long "$(awk -v n="$long" 'BEGIN { for (x = 1; x <= 3; x++) printf "%d|%d ", x, n }')" 300 emu
# operands that are not columns or constants: the GPU code calls a helper per 64
prod() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf " - x * 2" }'; }
{ header; printf 'out(x, y) <- in(x), y = 5000000'; prod 1000; printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/diff_emu.logic"
must_run diff_emu "$(expect 2000 5000000 -1)" 300 emu
# a body of LONG literals x != K (one of them excludes 2): the rows kept computed by awk
lits() { awk -v n="$1" -v lhs="$2" 'BEGIN { for (i = 1; i <= n; i++) printf ", %s != %d", lhs, i == int(n / 2) ? 2 : i + 3 }'; }
keep() { tr ',' '\n' | awk '/!=/ { ex[$NF] = 1 } END { for (x = 1; x <= 3; x++) if (!(x in ex)) printf "%d ", x }'; }
{ header; printf 'out(x) <- in(x)'; lits "$long" x; printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/conj_long.logic"
kept=$(lits "$long" x | keep)
must_run conj_long "$kept" 300 cpu
must_run conj_long "$kept" 300 emu
{ header; printf 'out(x) <- in(x)'; lits 1000 "x + 0"; printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/conj_emu.logic"
kept=$(lits 1000 "x + 0" | keep)
must_run conj_emu "$kept" 300 emu

# past the limits: truly nested expressions
{ header; printf 'out(x, y) <- in(x), y = '
  awk 'BEGIN { for (i = 0; i < 1200; i++) printf "(x + "; printf "x"; for (i = 0; i < 1200; i++) printf ")" }'
  printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/right_nested.logic"
must_refuse right_nested "expression nested too deeply (more than 1000 levels)"
{ header; printf 'out(x, y) <- in(x), y = '
  awk 'BEGIN { for (i = 0; i < 5000; i++) printf "("; printf "x"; for (i = 0; i < 5000; i++) printf ")" }'
  printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/parens.logic"
must_refuse parens "nested too deeply (more than 4000 levels"
{ header; printf 'out(x) <- in(x), '
  awk 'BEGIN { for (i = 0; i < 5000; i++) printf "!" }'
  printf 'in(x).\nlang:output[`out] = "out".\n'; } > "$tmp/nots.logic"
must_refuse nots "nested too deeply (more than 4000 levels"
# a functional application is an operator of its expression: f[f[...]] stops
# at the 1,000-operator limit (LANGUAGE.md said about 2,000, the parser's)
fnest() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "f["; printf "x"; for (i = 0; i < n; i++) printf "]" }'; }
for n in 1000 1001; do
    { header; printf 'f[x] = y -> int(x), int(y).\nf[x] = x <- in(x).\nout(x, y) <- in(x), y = '; fnest $n
      printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/fnest$n.logic"
done
must_run fnest1000 "1|1 2|2 3|3 " 300 cpu
must_refuse fnest1001 "expression nested too deeply (more than 1000 levels)"
# a negated conjunction's !( takes two of the parser's 4,000 levels: 1,990 fit
{ header; printf 'out(x) <- in(x), '
  awk 'BEGIN { for (i = 0; i < 1990; i++) printf "!("; printf "in(x)"; for (i = 0; i < 1990; i++) printf ")" }'
  printf '.\nlang:output[`out] = "out".\n'; } > "$tmp/notnest.logic"
must_run notnest "1 2 3 " 300 cpu
# assignments substituted into their uses: deeper than the plan takes
nest() { awk -v n="$1" -v inner="$2" 'BEGIN { for (i = 0; i < n; i++) printf "(x + "; printf "%s", inner; for (i = 0; i < n; i++) printf ")" }'; }
{ header; printf 'out(x, y) <- in(x), t1 = '; nest 600 x; printf ', t2 = '; nest 600 t1
  printf ', y = t2 + 1.\nlang:output[`out] = "out".\n'; } > "$tmp/inlined.logic"
must_refuse inlined "expression nested too deeply once the variables it uses are replaced by their definitions"
# ... or larger: each t doubles
{ header; printf 'out(x, y) <- in(x), t1 = x + x'
  awk 'BEGIN { for (i = 2; i <= 40; i++) printf ", t%d = t%d * t%d", i, i - 1, i - 1 }'
  printf ', y = t40 + 1.\nlang:output[`out] = "out".\n'; } > "$tmp/doubling.logic"
must_refuse doubling "expression too large (more than"
# an out-of-range literal drops its rule: its predicate has a wrong rule, not "no rules"
printf 'p(x) -> int(x).\np(x) <- x = 9223372036854775808.\nlang:output[`p] = "out".\n' > "$tmp/literal.logic"
must_refuse literal "integer literal 9223372036854775808 is out of range"
if grep -q "warning" "$tmp/err"; then echo "FAIL: literal: a false warning"; cat "$tmp/err"; fail=1; fi
exit $fail
