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
exit $fail
