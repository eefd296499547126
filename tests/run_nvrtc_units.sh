#!/bin/sh
# tests/run_nvrtc_units.sh [--real] REDFOX: a program of about 200 kernels
# (bench/compile/many_rules.sh: filters, joins, aggregates over a recursive
# rule, strings) is compiled by NVRTC in units at once
# (skeletons/cuda/nvrtc_units.c), and the units' PTX put together must be
# whole: one header, every kernel of the generated CUDA source declared once
# (no more, no fewer), more than two units, and ptxas (where the CUDA
# toolkit has it) assembling it. The .rfx then runs on the emulated GPU
# (--real: the machine's GPU; exit 77 without one) with the CPU's outputs,
# and compiling again gives the same bytes. Skipped (77) without NVRTC.
set -u
real=0
[ "${1:-}" = "--real" ] && { real=1; shift; }
r=$1
tmp=${TMPDIR:-/tmp}/rf_nvunits.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
if command -v timeout >/dev/null 2>&1; then to="timeout 900"; else to=; fi

. "$(dirname "$0")/lib_device.sh"
use_device $real "$r" "$tmp" # (first: without a GPU, --real is skipped at once)
p=$tmp/many.logic
sh "$(dirname "$0")/../bench/compile/many_rules.sh" 25 "$p" || { echo "FAIL: the program's generator"; exit 1; }

$to "$r" compile "$p" -o "$tmp/a.rfx" --no-cache 2>"$tmp/err" || { cat "$tmp/err"; echo "FAIL: compile"; exit 1; }
"$r" dump --ptx "$tmp/a.rfx" >"$tmp/a.ptx" 2>/dev/null
grep -q '^\.target' "$tmp/a.ptx" || { echo "no NVRTC here: skipped"; exit 77; }
"$r" dump --cuda "$p" >"$tmp/a.cu" 2>"$tmp/err" || { cat "$tmp/err"; echo "FAIL: dump --cuda"; exit 1; }

# every kernel of the source once, none other
sed -n 's/.*__global__ void __launch_bounds__([0-9, ]*) \([A-Za-z0-9_]*\)(.*/\1/p' "$tmp/a.cu" | sort >"$tmp/src.names"
sed -n 's/^\.visible \.entry \([A-Za-z0-9_]*\)(.*/\1/p' "$tmp/a.ptx" | sort >"$tmp/ptx.names"
nk=$(wc -l <"$tmp/src.names")
[ "$nk" -ge 150 ] || no "the program has only $nk kernels: too few to be cut into units"
[ -z "$(uniq -d "$tmp/ptx.names")" ] || no "kernels declared twice in the PTX: $(uniq -d "$tmp/ptx.names" | head -3)"
cmp -s "$tmp/src.names" "$tmp/ptx.names" ||
    no "the PTX's kernels differ from the source's: $(diff "$tmp/src.names" "$tmp/ptx.names" | head -6)"
for h in .version .target .address_size; do
    n=$(grep -c "^\\$h" "$tmp/a.ptx")
    [ "$n" = 1 ] || no "$n '$h' lines in the PTX (one expected)"
done
units=$(grep -c '^// redfox: unit [0-9]' "$tmp/a.ptx")
[ "$units" -ge 2 ] || no "the source was compiled in $((units + 1)) unit(s); more than two expected"
ptxas=$(command -v ptxas || true)
[ -z "$ptxas" ] && [ -x /usr/local/cuda/bin/ptxas ] && ptxas=/usr/local/cuda/bin/ptxas
if [ -n "$ptxas" ]; then
    "$ptxas" -arch=sm_80 "$tmp/a.ptx" -o "$tmp/a.cubin" 2>"$tmp/err" || { no "ptxas refuses the PTX"; head -5 "$tmp/err"; }
fi

# the same bytes again (the cut does not depend on the machine's cores)
$to "$r" compile "$p" -o "$tmp/b.rfx" --no-cache 2>/dev/null || no "second compile"
cmp -s "$tmp/a.rfx" "$tmp/b.rfx" || no "two compiles of the program differ"

# the outputs on the GPU (emulated, or the machine's) are the CPU's
"$r" run "$tmp/a.rfx" --device cpu --out "$tmp/cpu" 2>"$tmp/err" || { cat "$tmp/err"; no "the CPU's run"; }
$to "$r" run "$tmp/a.rfx" --device gpu --out "$tmp/gpu" 2>"$tmp/err" || { cat "$tmp/err"; no "the GPU's run"; }
diff -r "$tmp/cpu" "$tmp/gpu" >/dev/null || no "the GPU's outputs differ from the CPU's: $(diff -r "$tmp/cpu" "$tmp/gpu" | head -5)"
[ "$(ls "$tmp/cpu" | wc -l)" -eq "$(grep -c '^lang:output' "$p")" ] || no "not one output file for each of the program's outputs"
[ $fail = 0 ] && echo "ok: $nk kernels in $((units + 1)) units"
exit $fail
