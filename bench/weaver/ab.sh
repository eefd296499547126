#!/bin/sh
# bench/weaver/ab.sh: the Kernel Weaver patterns with and without a tuning
# setting (`--set NAME=VALUE`, rf_rt_tuning.h), on one machine and the same
# data: the measurement that decides a setting's default, or whether an
# experiment stays.
#
# usage: bench/weaver/ab.sh BUILD OUT NAME=VALUE [bench/weaver/run.sh options]
#
# Runs bench/weaver/run.sh into OUT/a with the defaults, then into OUT/b
# with --set NAME=VALUE (OUT/a's data, linked, not generated again), and prints
# and writes to OUT/ab.txt, one file (the GPU machine brings back few):
# each pattern's median ms without and with the setting, their ratio, and
# with --ncu the fused runs' kernels, one line per kernel (ncu's GPU time of
# the second of two runs), a then b. Both runs check that fused and
# --no-fuse outputs are identical; the fused outputs of a and b must be too.
set -eu
if [ $# -lt 3 ]; then
    sed -n '6p' "$0" | sed 's/^# //' >&2
    exit 2
fi
build=$1
out=$2
setting=$3
shift 3
case $setting in
*=*) ;;
*) echo "ab.sh: NAME=VALUE expected, not $setting" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/a" "$out/b"
sh "$here/run.sh" "$build" "$out/a" "$@" >"$out/a.txt" 2>&1 || { cat "$out/a.txt" >&2; exit 1; }
for d in "$out"/a/data-sf*; do
    [ -d "$d" ] && [ ! -e "$out/b/$(basename "$d")" ] && ln -s "$d" "$out/b/$(basename "$d")"
done
sh "$here/run.sh" "$build" "$out/b" "$@" --set "$setting" >"$out/b.txt" 2>&1 || { cat "$out/b.txt" >&2; exit 1; }
for f in "$out"/a/*.fused.out; do
    g=$out/b/$(basename "$f")
    cmp -s "$f" "$g" || { echo "ab.sh: FAIL: $(basename "$f") differs with $setting" >&2; exit 1; }
done
{
    echo "Kernel Weaver patterns: a = the defaults, b = with --set $setting (median ms)"
    printf "%-11s %6s %-7s %10s %10s %7s\n" pattern sf mode "a ms" "b ms" "b / a"
    awk -F, 'NR == FNR { if (FNR > 1) a[$1 "," $2 "," $3] = $4; next }
             FNR > 1 && ($1 "," $2 "," $3) in a {
                 k = $1 "," $2 "," $3
                 printf "%-11s %6s %-7s %10.3f %10.3f %7.3f\n", $1, $2, $3, a[k], $4, (a[k] > 0 ? $4 / a[k] : 0) }' \
        "$out/a/weaver.csv" "$out/b/weaver.csv"
    for side in a b; do
        for f in "$out/$side"/*.ncu.csv; do
            [ -f "$f" ] || continue
            echo "== $side $(basename "$f" .ncu.csv): kernels of the second run, ns"
            awk -F'","' '{ v = $NF; gsub(/[",]/, "", v); k[NR] = $5; t[NR] = v }
                         END { for (i = int(NR / 2) + 1; i <= NR; i++) printf "  %-40s %12s\n", substr(k[i], 1, 40), t[i] }' "$f"
        done
    done
} >"$out/ab.txt"
cat "$out/ab.txt"
