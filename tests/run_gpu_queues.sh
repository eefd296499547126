#!/bin/sh
# tests/run_gpu_queues.sh REDFOX ROOT FAKECUDA_DIR: the GPU's driver starts
# with one hardware work queue (CUDA_DEVICE_MAX_CONNECTIONS=1, which shortens
# the context's creation; redfox uses one stream), unless the user set the
# variable. FAKECUDA_DIR holds a stand-in libcuda.so.1 (tests/fakecuda) that
# writes the value it finds when a run loads it; that run then fails (it
# "lacks cuInit"), which is expected here. The ranks `--gpus N` starts get
# the user's value (or none), not redfox's.
set -u
r=$1
ex=$2/examples/quickstart
fake=$3
tmp=${TMPDIR:-/tmp}/rf_queues.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
unset RF_GPU_EMULATE CUDA_DEVICE_MAX_CONNECTIONS
[ -f "$fake/libcuda.so.1" ] || { echo "FAIL: no stand-in driver in $fake"; exit 1; }
LD_LIBRARY_PATH=$fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
RF_TEST_FAKECUDA_ENV=$tmp/env
export LD_LIBRARY_PATH RF_TEST_FAKECUDA_ENV
"$r" run "$ex/reach.logic" --data "$ex" --device gpu --out "$tmp/o" 2>"$tmp/e1" && no "the stand-in driver started"
grep -q "no usable GPU" "$tmp/e1" || { no "no 'no usable GPU' from the stand-in driver"; cat "$tmp/e1"; }
[ "$(cat "$tmp/env" 2>/dev/null)" = "CUDA_DEVICE_MAX_CONNECTIONS=1" ] ||
    { no "the driver would start with $(cat "$tmp/env" 2>/dev/null), not one queue"; }
rm -f "$tmp/env"
CUDA_DEVICE_MAX_CONNECTIONS=4 "$r" run "$ex/reach.logic" --data "$ex" --device gpu --out "$tmp/o" 2>/dev/null
[ "$(cat "$tmp/env" 2>/dev/null)" = "CUDA_DEVICE_MAX_CONNECTIONS=4" ] ||
    { no "the user's CUDA_DEVICE_MAX_CONNECTIONS=4 became $(cat "$tmp/env" 2>/dev/null)"; }
# --gpus N starts its ranks under mpirun from this process: they get the
# user's environment, not the one queue redfox chose for itself. A stand-in
# mpirun records what it was given.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/mpirun" <<EOF
#!/bin/sh
echo "\${CUDA_DEVICE_MAX_CONNECTIONS-unset}" >"$tmp/mpi_env"
EOF
chmod +x "$tmp/bin/mpirun"
PATH=$tmp/bin:$PATH RF_GPU_EMULATE=1 "$r" run "$ex/reach.logic" --data "$ex" --gpus 2 --out "$tmp/o" 2>"$tmp/e3"
[ "$(cat "$tmp/mpi_env" 2>/dev/null)" = unset ] ||
    { no "the ranks of --gpus 2 got CUDA_DEVICE_MAX_CONNECTIONS=$(cat "$tmp/mpi_env" 2>/dev/null)"; cat "$tmp/e3"; }
rm -f "$tmp/mpi_env"
PATH=$tmp/bin:$PATH CUDA_DEVICE_MAX_CONNECTIONS=4 RF_GPU_EMULATE=1 "$r" run "$ex/reach.logic" --data "$ex" --gpus 2 \
    --out "$tmp/o" 2>"$tmp/e3"
[ "$(cat "$tmp/mpi_env" 2>/dev/null)" = 4 ] ||
    { no "the user's CUDA_DEVICE_MAX_CONNECTIONS=4 reached the ranks as $(cat "$tmp/mpi_env" 2>/dev/null)"; cat "$tmp/e3"; }
[ $fail = 0 ] && echo "the GPU's driver starts with one work queue unless the user set another"
exit $fail
