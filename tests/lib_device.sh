# tests/lib_device.sh: sourced by the test scripts that run either on the
# machine's GPU (their --real) or on the emulator, and by those that check a
# program stays on the GPU under memory caps.
# use_device REAL REDFOX TMP: REAL 1: the GPU, where `redfox run --device gpu`
# works on a one-fact program (else the script is skipped: exit 77); else
# RF_GPU_EMULATE=1 for what follows.
use_device() {
    if [ "$1" = 1 ]; then
        unset RF_GPU_EMULATE
        printf 'a(1).\nlang:output[`a] = "a".\n' >"$3/probe.logic"
        "$2" run "$3/probe.logic" --device gpu >/dev/null 2>"$3/probe.err" ||
            { echo "SKIP: no usable GPU: $(cat "$3/probe.err")"; exit 77; }
    else
        RF_GPU_EMULATE=1
        export RF_GPU_EMULATE
    fi
}

# caps_stay_on_gpu REDFOX PROG DATA TMP SHOW ARGS CAP...: PROG runs on the CPU,
# then on the GPU chosen above (use_device) under each --gpu-memory CAP with
# the extra options ARGS (split into words; "" for none). Under every cap the
# run must exit 0, give the CPU's output byte for byte and stay on the GPU:
# no warning, no CPU profile (a move to the CPU under a cap is a failure
# here). Prints each cap's --profile text matching SHOW (grep's pattern: the
# ranges or partitions it ran in); returns 1 when a cap failed.
caps_stay_on_gpu() {
    csg_redfox=$1 csg_prog=$2 csg_data=$3 csg_tmp=$4 csg_show=$5 csg_args=$6
    shift 6
    "$csg_redfox" run "$csg_prog" --data "$csg_data" --device cpu --format tbl >"$csg_tmp/cpu" 2>"$csg_tmp/cpu.err" ||
        { echo "FAIL: cpu run"; cat "$csg_tmp/cpu.err"; return 1; }
    csg_fail=0
    for csg_cap in "$@"; do
        # shellcheck disable=SC2086
        "$csg_redfox" run "$csg_prog" --data "$csg_data" --device gpu --format tbl --profile \
            --gpu-memory "$csg_cap" $csg_args >"$csg_tmp/out" 2>"$csg_tmp/err"
        csg_rc=$?
        if [ $csg_rc -ne 0 ]; then echo "FAIL: cap $csg_cap exited $csg_rc"; cat "$csg_tmp/err"; csg_fail=1; continue; fi
        if ! cmp -s "$csg_tmp/cpu" "$csg_tmp/out"; then echo "FAIL: cap $csg_cap: output differs from the CPU's"; csg_fail=1; fi
        if grep -q 'warning\|^profile (device cpu)' "$csg_tmp/err"; then
            echo "FAIL: cap $csg_cap: left the GPU"; grep warning "$csg_tmp/err"; csg_fail=1; continue
        fi
        echo "cap $csg_cap: $(grep -e "$csg_show" "$csg_tmp/err")"
    done
    return $csg_fail
}
