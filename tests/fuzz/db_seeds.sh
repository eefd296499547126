#!/bin/sh
# tests/fuzz/db_seeds.sh REDFOX OUTDIR: fuzz_db seeds: the e2e programs'
# inputs imported into databases, each packed as fuzz_db reads it (a flags
# byte, then u8 name length, name, u32 size, bytes per file); flag 1 (the
# target fixes the manifest's checksums) so that mutations reach the decoder.
# Each program twice: as import stores it, and with every string column plain
# in blocks of 8 rows (NAME.plain.db).
set -eu
redfox=$1
out=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "$root"/tests/e2e/*.logic; do
    grep -q 'lang:input\[' "$f" || continue
    b=$(basename "$f" .logic)
    for n in "$b" "$b.plain"; do
    if [ "$n" = "$b" ]; then opts=""; else opts="--strings plain --block-rows 8"; fi
    # shellcheck disable=SC2086
    "$redfox" import "$f" --data "$root/tests/e2e/data" --out "$tmp/$n" $opts >/dev/null 2>&1 || continue
    python3 - "$tmp/$n" "$out/$n.db" <<'PY'
import os, struct, sys
d, dst = sys.argv[1], sys.argv[2]
parts = [b'\x01']
for name in ['manifest.rfdb'] + sorted(x for x in os.listdir(d) if x != 'manifest.rfdb'):
    data = open(os.path.join(d, name), 'rb').read()
    parts.append(bytes([len(name)]) + name.encode() + struct.pack('<I', len(data)) + data)
open(dst, 'wb').write(b''.join(parts))
PY
    done
done
