#!/bin/sh
# tests/run_install.sh BUILD SRC: installs the build into a fresh prefix with
# `cmake --install`, then follows README's quick start with the installed
# command only: the example program over its CSV file, compared with the
# answer kept beside it. Also checks that the manual page and the language
# reference are installed.
set -u
build=$1
src=$2
tmp=${TMPDIR:-/tmp}/rf_install.$$
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
if ! cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/log" 2>&1; then
    echo "FAIL: cmake --install"; cat "$tmp/log"; exit 1
fi
for f in bin/redfox share/man/man1/redfox.1 share/doc/redfox/LANGUAGE.md share/doc/redfox/README.md \
         share/doc/redfox/examples/quickstart/reach.logic share/doc/redfox/examples/quickstart/flights.csv; do
    [ -f "$tmp/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
"$tmp/prefix/bin/redfox" --version >/dev/null || { echo "FAIL: the installed redfox does not run"; exit 1; }
# The quick start, as README writes it, from a folder of the user's own.
mkdir -p "$tmp/work"
cp "$tmp/prefix/share/doc/redfox/examples/quickstart/reach.logic" \
   "$tmp/prefix/share/doc/redfox/examples/quickstart/flights.csv" "$tmp/work/"
(cd "$tmp/work" && "$tmp/prefix/bin/redfox" run reach.logic --device cpu) >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ]; then echo "FAIL: the quick start exited $rc"; cat "$tmp/err"; exit 1; fi
if ! diff -u "$src/examples/quickstart/destinations.expected" "$tmp/out"; then
    echo "FAIL: the quick start's output differs from examples/quickstart/destinations.expected"; exit 1
fi
# README shows the program, the file and the output as they are: its
# indented blocks after each lead-in line equal the example's files.
block() { # the indented block (blank lines inside kept) after the first line holding $1 and a blank line
    awk -v pat="$1" 'found == 2 && /^    / { for (; blank > 0; blank--) print ""; print substr($0, 5); next }
                     found == 2 && /^$/ { blank++; next }
                     found == 2 { exit }
                     found == 1 && /^$/ { found = 2; next }
                     found == 0 && index($0, pat) { found = 1 }' "$src/README.md"
}
block 'examples/quickstart/reach.logic` reads' >"$tmp/readme_prog"
block '`examples/quickstart/flights.csv`:' >"$tmp/readme_csv"
awk '/^    \$ cd examples\/quickstart/ { on = 1; next } on && /^    / { print substr($0, 5); next } on { exit }' \
    "$src/README.md" >"$tmp/readme_out"
diff -u "$src/examples/quickstart/reach.logic" "$tmp/readme_prog" >/dev/null ||
    { echo "FAIL: README's quick start program differs from examples/quickstart/reach.logic"; diff -u "$src/examples/quickstart/reach.logic" "$tmp/readme_prog"; exit 1; }
diff -u "$src/examples/quickstart/flights.csv" "$tmp/readme_csv" >/dev/null ||
    { echo "FAIL: README's flights.csv differs from examples/quickstart/flights.csv"; diff -u "$src/examples/quickstart/flights.csv" "$tmp/readme_csv"; exit 1; }
diff -u "$src/examples/quickstart/destinations.expected" "$tmp/readme_out" >/dev/null ||
    { echo "FAIL: README's quick start output differs from what it prints"; diff -u "$src/examples/quickstart/destinations.expected" "$tmp/readme_out"; exit 1; }
echo ok
