#!/bin/sh
# tests/run_man_env.sh SOURCE_DIR: every environment variable the product
# reads (getenv in its C sources, and the MPI launchers' variables it looks
# for in lists) is named in the ENVIRONMENT section of the manual page,
# docs/redfox.1. (RF_NCCL_LIB and the launchers' variables were read and
# not named.) Tests and test helpers are not the product.
set -u
src=$1
fail=0
env=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$src/docs/redfox.1")
[ -n "$env" ] || { echo "FAIL: docs/redfox.1 has no ENVIRONMENT section"; exit 1; }
names=$(find "$src" -path "$src/build*" -prune -o -path "$src/tests" -prune -o \
            \( -name '*.c' -o -name '*.h' -o -name '*.cpp' \) ! -name 'test_*' -print |
        xargs grep -hoE 'getenv\("[A-Za-z_0-9]+"\)|"(OMPI|PMIX|PMI)_[A-Z_]+"' |
        sed -E 's/getenv\("//; s/"\)//; s/"//g' | sort -u)
[ -n "$names" ] || { echo "FAIL: no getenv found under $src"; exit 1; }
for n in $names; do
    printf '%s\n' "$env" | grep -q "$n" || { echo "FAIL: the product reads \$$n, the manual page's ENVIRONMENT does not name it"; fail=1; }
done
# and the other way: a name RF_... that the documents give (an environment
# variable, a CMake option) is one the sources have (docs/BENCHMARKS.md told
# a cold compile to empty RF_GPU_CACHE_DIR, which nothing reads)
docs=$(grep -ohE '\bRF_[A-Z0-9_]+' "$src/README.md" "$src"/docs/*.md "$src/docs/redfox.1" | sort -u)
for n in $docs; do
    find "$src" -path "$src/build*" -prune -o -path "$src/docs" -prune -o -name run_man_env.sh -prune -o -type f \
        \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.cu' -o -name 'CMakeLists.txt' -o -name '*.cmake' \
           -o -name '*.sh' -o -name '*.py' -o -name '*.in' \) -print | xargs grep -qw "$n" ||
        { echo "FAIL: the documents name $n, which no source has"; fail=1; }
done
exit $fail
