# tests/lib_device.sh: sourced by the test scripts that run either on the
# machine's GPU (their --real) or on the emulator.
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
