#!/bin/sh
# runtime/test_layers.sh ROOT: the runtime's layering (runtime/README.md):
# the CPU executor (runtime/cpu) and the GPU executor (runtime/gpu) include
# nothing of each other (no include cycle between them), and neither calls
# the driver (runtime/rt_run.c, rt_inputs.c) back: a device is reached
# through rt_device.h and reaches nothing. Test drivers (test_*.c) may run
# the driver. Exit 1 naming each breach.
root=${1:?usage: test_layers.sh ROOT}
rc=0
cd "$root/runtime" || exit 2
# The headers of folder $2 included by the sources of folder $1.
check_includes() {
    for h in $(cd "$2" && ls *.h 2>/dev/null); do
        hits=$(grep -l "^[[:space:]]*#[[:space:]]*include[[:space:]]*[\"<]\([^\"]*/\)\{0,1\}$h[\">]" "$1"/*.c "$1"/*.h 2>/dev/null)
        for f in $hits; do
            echo "FAIL: runtime/$f includes runtime/$2/$h"
            rc=1
        done
    done
}
check_includes cpu gpu
check_includes gpu cpu
for dir in cpu gpu; do
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -e "$f" ] || continue
        case "$(basename "$f")" in test_*) continue ;; esac
        if grep -nE '#[[:space:]]*include[[:space:]]*"([^"]*/)?rt_inputs\.h"' "$f"; then
            echo "FAIL: runtime/$f includes the driver's rt_inputs.h"
            rc=1
        fi
        if grep -nE '\brf_rt_(run|run_on|inputs_[a-z_]+|cache_[a-z_]+|result_free)[[:space:]]*\(' "$f"; then
            echo "FAIL: runtime/$f calls the driver back (above)"
            rc=1
        fi
    done
done
[ $rc = 0 ] && echo "runtime layers: cpu and gpu include nothing of each other; neither calls the driver"
exit $rc
