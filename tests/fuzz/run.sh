#!/bin/sh
# tests/fuzz/run.sh [SECONDS] [TARGET]: builds the libFuzzer targets with clang
# (AddressSanitizer and UndefinedBehaviorSanitizer on) in build-fuzz/ and runs
# TARGET (default fuzz_frontend) for SECONDS (default 600), seeded with the
# test programs. Crashes land in fuzz-out/TARGET/ as crash-* files: turn each
# into a regression test under tests/bad/ or tests/logiql/.
set -eu
secs=${1:-600}
target=${2:-fuzz_frontend}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build-fuzz
CC=clang cmake -S "$root" -B "$build" -G Ninja -DRF_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target "$target"
out=$root/fuzz-out/$target
mkdir -p "$out/corpus"
case "$target" in
fuzz_frontend)
    dict=$root/tests/fuzz/logiql.dict
    cp "$root"/tests/logiql/*.logic "$root"/tests/bad/*.logic "$root"/tests/e2e/*.logic "$out/corpus/" 2>/dev/null || true
    [ -d "$root/tpch/queries" ] && cp "$root"/tpch/queries/*.logic "$out/corpus/" 2>/dev/null || true
    ;;
fuzz_hirs)
    # seeds: the HIRS sections of the compiled test programs
    dict=/dev/null
    cmake --build "$build" --target redfox >/dev/null
    for f in "$root"/tests/e2e/*.logic "$root"/tests/logiql/*.logic; do
        "$build/tools/redfox" compile "$f" -o "$out/seed.rfx" 2>/dev/null || continue
        python3 - "$out/seed.rfx" "$out/corpus/$(basename "$f" .logic).hirs" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
count, table = struct.unpack_from('<I', data, 32)[0], struct.unpack_from('<Q', data, 24)[0]
for i in range(count):
    tag, crc, off, size = struct.unpack_from('<4sIQQ', data, table + 24 * i)
    if tag == b'HIRS':
        open(sys.argv[2], 'wb').write(data[off:off + size])
PY
    done
    rm -f "$out/seed.rfx"
    ;;
fuzz_gplan)
    # seeds: the test programs with their GPU plans (test_gplan --seed)
    dict=/dev/null
    cmake --build "$build" --target test_gplan >/dev/null
    for f in "$root"/tests/e2e/*.logic; do
        "$build/skeletons/cuda/test_gplan" --seed "$out/corpus/$(basename "$f" .logic).gpln" "$f" >/dev/null 2>&1 || true
    done
    ;;
fuzz_deep)
    # seeds: a recipe per shape (shape byte, 16-bit size, choices)
    dict=/dev/null
    cp "$root"/tests/fuzz/regress/deep/* "$out/corpus/"
    ;;
fuzz_load)
    dict=/dev/null
    # seeds: two type bytes, then the e2e data files and lines of the reference data
    for f in "$root"/tests/e2e/data/*.tbl "$root"/tests/logiql/data/*.tbl; do
        { printf '\003\002'; cat "$f"; } > "$out/corpus/$(basename "$f").seed"
    done
    # and the CSV files, read with ',' (second byte 0x42)
    for f in "$root"/tests/e2e/data/*.csv; do
        { printf '\003\102'; cat "$f"; } > "$out/corpus/$(basename "$f").seed"
    done
    ;;
fuzz_db)
    dict=/dev/null
    cmake --build "$build" --target redfox >/dev/null
    sh "$root/tests/fuzz/db_seeds.sh" "$build/tools/redfox" "$out/corpus"
    ;;
fuzz_rfx)
    dict=$root/tests/fuzz/rfx.dict
    cmake --build "$build" --target test_rfx >/dev/null
    "$build/harmony/rfx/test_rfx" seeds "$out/corpus" >/dev/null
    ;;
*)
    dict=/dev/null
    ;;
esac
cd "$out"
dictarg=
[ "$dict" != /dev/null ] && dictarg=-dict=$dict
exec "$build/tests/fuzz/$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
     -max_len=8192 $dictarg -print_final_stats=1 corpus
