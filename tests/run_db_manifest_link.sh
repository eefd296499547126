#!/bin/sh
# tests/run_db_manifest_link.sh REDFOX: a folder whose manifest.rfdb is a
# symbolic link that names nothing (or a loop) is a database without its
# manifest (docs/DATABASE.md: a folder is a database when it holds
# manifest.rfdb): every reader (run, tpch run, import --data) and every
# writer (import --out, tpch gen --out in either format, exec, run --out)
# refuses it with an error naming DIR/manifest.rfdb and exit 1, and leaves
# the folder as it was. It was read as a folder of text files (exit 0), and
# a run --out or tpch gen wrote into it.
set -u
redfox=$1
tmp=${TMPDIR:-/tmp}/rf_db_manifest_link.$$
mkdir -p "$tmp/src"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
cat >"$tmp/p.logic" <<'EOF'
t(x, y) -> int(x), int(y).
lang:input[`t] = "t.tbl".
s(x) <- t(x, _).
lang:output[`s] = "s".
EOF
printf '1|2|\n3|4|\n' >"$tmp/src/t.tbl"
# the text folder itself reads
"$redfox" run "$tmp/p.logic" --data "$tmp/src" --device cpu --format csv >"$tmp/out" 2>"$tmp/err" ||
    { cat "$tmp/err"; fail "run of the text folder"; }
[ "$(cat "$tmp/out")" = "$(printf 'x\n1\n3')" ] || { cat "$tmp/out"; fail "the text folder's outputs"; }

# fresh KIND: $tmp/d holds t.tbl and a manifest.rfdb linking to nothing
# (dangling) or to itself (loop)
fresh() {
    rm -rf "$tmp/d" "$tmp"/d.tmp.* "$tmp/e"
    mkdir "$tmp/d"
    cp "$tmp/src/t.tbl" "$tmp/d/"
    if [ "$1" = loop ]; then ln -s manifest.rfdb "$tmp/d/manifest.rfdb"; else ln -s nowhere "$tmp/d/manifest.rfdb"; fi
    ls -l "$tmp/d" | sed 's/ [A-Z][a-z][a-z] .* / /' >"$tmp/before"
}
# refused KIND WHAT CMD...: exit 1, the error names d/manifest.rfdb, d as it was
refused() {
    kind=$1 what=$2
    shift 2
    fresh "$kind"
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/err"; fail "$kind: $what: exit $rc, not 1"; }
    grep -q "$tmp/d/manifest.rfdb: error: a symbolic link whose target cannot be reached" "$tmp/err" ||
        { cat "$tmp/err"; fail "$kind: $what: no error naming d/manifest.rfdb"; }
    ls -l "$tmp/d" | sed 's/ [A-Z][a-z][a-z] .* / /' >"$tmp/after"
    cmp -s "$tmp/before" "$tmp/after" || { cat "$tmp/before" "$tmp/after"; fail "$kind: $what: the folder changed"; }
    ls "$tmp" | grep -q '^d\.tmp\.' && fail "$kind: $what: a temporary folder was left"
    return 0
}
for kind in dangling loop; do
    # readers
    refused $kind "run --data" "$redfox" run "$tmp/p.logic" --data "$tmp/d" --device cpu --format csv
    [ -s "$tmp/out" ] && fail "$kind: run --data printed outputs"
    refused $kind "tpch run --data" "$redfox" tpch run --data "$tmp/d" --queries 6 --device cpu
    refused $kind "import --data" "$redfox" import "$tmp/p.logic" --data "$tmp/d" --out "$tmp/e"
    [ -e "$tmp/e" ] && fail "$kind: import --data wrote its --out"
    # writers: neither a database to replace nor a folder to write into
    refused $kind "import --out" "$redfox" import "$tmp/p.logic" --data "$tmp/src" --out "$tmp/d"
    refused $kind "tpch gen --format db" "$redfox" tpch gen --sf 0.01 --tables region --format db --out "$tmp/d"
    refused $kind "tpch gen --format tbl" "$redfox" tpch gen --sf 0.01 --tables region --out "$tmp/d"
    refused $kind "exec" "$redfox" exec "$tmp/d" "$tmp/p.logic" --device cpu --format csv
    refused $kind "run --out" "$redfox" run "$tmp/p.logic" --data "$tmp/src" --out "$tmp/d" --device cpu --format csv
done
echo "ok: a manifest.rfdb linking to nothing (or to itself) refused by every reader and writer, the folder unchanged"
