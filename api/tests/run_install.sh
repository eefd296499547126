#!/bin/sh
# api/tests/run_install.sh BUILD SRC TPCH_DATA [CFLAGS]: `cmake --install`
# into a temporary prefix, then, against the INSTALLED tree only:
#  - examples/api/example.c built with `pkg-config --cflags --libs redfox`
#    (the shared library), and again with libredfox.a (--static);
#  - the same built by a CMake project through find_package(redfox);
#  - examples/api/example.py with the installed Python package;
# each must print what the installed `redfox run --format csv` prints for
# transitive closure and TPC-H Q3 (Q3 only where TPCH_DATA exists).
# CFLAGS: extra compiler flags (the sanitizers, in a sanitizer build).
set -eu
build=$1 src=$2 data=$3 cflags=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" || { cat "$tmp/install.log"; exit 1; }
for f in bin/redfox include/redfox.h; do
    [ -f "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done
pc=$(find "$prefix" -name redfox.pc | head -1)
[ -n "$pc" ] || { echo "not installed: redfox.pc"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
for f in libredfox.so libredfox.a cmake/redfox/redfoxConfig.cmake; do
    [ -e "$libdir/$f" ] || { echo "not installed: $libdir/$f"; exit 1; }
done
export PKG_CONFIG_PATH="$(dirname "$pc")"
example=$src/examples/api
if [ -f "$data/lineitem.tbl" ]; then
    args="$data $src/tpch/queries/schema.logic $src/tpch/queries/q03.logic"
else
    echo "note: no TPC-H data at $data: transitive closure only"
    args=""
fi

# What the command line prints.
"$prefix/bin/redfox" run "$example/tc.logic" --data "$example" --format csv --device cpu > "$tmp/expected"
if [ -n "$args" ]; then
    echo >> "$tmp/expected"
    "$prefix/bin/redfox" run "$src/tpch/queries/schema.logic" "$src/tpch/queries/q03.logic" --data "$data" \
        --format csv --device cpu >> "$tmp/expected"
fi
[ "$(wc -l < "$tmp/expected")" -gt 5 ] || { echo "the command line printed too little"; exit 1; }

compare() { # NAME FILE
    if ! cmp -s "$tmp/expected" "$2"; then
        echo "$1 differs from the command line:"
        diff "$tmp/expected" "$2" | head -20
        exit 1
    fi
    echo "ok: $1"
}

# C, shared, with pkg-config and nothing else (its run-time path finds the library).
cc $cflags "$example/example.c" $(pkg-config --cflags --libs redfox) -o "$tmp/example_shared"
# shellcheck disable=SC2086
env -u LD_LIBRARY_PATH "$tmp/example_shared" "$example" $args > "$tmp/out_shared"
compare "C example (libredfox.so, pkg-config)" "$tmp/out_shared"

# C, static: the archive and what pkg-config --static adds.
cc $cflags "$example/example.c" $(pkg-config --cflags redfox) "$libdir/libredfox.a" \
    $(pkg-config --static --libs-only-L --libs-only-l redfox | sed 's/-lredfox//') -o "$tmp/example_static"
# shellcheck disable=SC2086
"$tmp/example_static" "$example" $args > "$tmp/out_static"
compare "C example (libredfox.a)" "$tmp/out_static"

# CMake: find_package(redfox).
mkdir -p "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.22)
project(use_redfox C)
find_package(redfox 0.1 REQUIRED)
add_executable(example "$example/example.c")
target_compile_options(example PRIVATE $cflags)
target_link_options(example PRIVATE $cflags)
target_link_libraries(example PRIVATE redfox::redfox)
CM
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$prefix" > "$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; exit 1; }
cmake --build "$tmp/cm/build" > "$tmp/cm.log" 2>&1 || { cat "$tmp/cm.log"; exit 1; }
# shellcheck disable=SC2086
"$tmp/cm/build/example" "$example" $args > "$tmp/out_cmake"
compare "C example (find_package)" "$tmp/out_cmake"

# Python, from the installed package (not under the sanitizers: python3 is not built with them).
pkg=$(find "$prefix" -name __init__.py -path '*redfox*' | head -1)
if [ -z "$cflags" ] && [ -n "$pkg" ] && command -v python3 > /dev/null; then
    # shellcheck disable=SC2086
    PYTHONPATH="$(dirname "$(dirname "$pkg")")" python3 "$example/example.py" "$example" $args > "$tmp/out_python"
    compare "Python example (installed package)" "$tmp/out_python"
elif [ -z "$pkg" ]; then
    echo "not installed: the Python package"
    exit 1
fi
