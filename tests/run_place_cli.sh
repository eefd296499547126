#!/bin/sh
# tests/run_place_cli.sh REDFOX ROOT: --device auto's placement model from
# the command line: a run writes its records into <cache>/place/model.txt,
# the next run reads them back (--profile: "model: N records"); without a
# GPU auto runs on the CPU and says so; a damaged model is ignored with a
# warning naming it and written anew (so is a named pipe, a device or a
# huge file in its place, at once); --no-cache writes none; outputs never
# change.
set -u
r=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
ex=$2/examples/quickstart
tmp=${TMPDIR:-/tmp}/rf_place.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
model=$tmp/cache/place/model.txt
# a host with no GPU's driver installed (--device gpu cannot load one), where
# auto's CPU choice says there is no GPU; a file of the driver's name where
# the dynamic loader looks (LD_LIBRARY_PATH: $withlib) is a driver that may
# be there, whose prediction the CPU choice gives, loading nothing
nodriver=0
"$r" run "$ex/reach.logic" --data "$ex" --device gpu --no-cache 2>&1 >/dev/null |
    grep -q "libcuda.so.1 cannot be loaded" && nodriver=1
mkdir -p "$tmp/fakelib"
: >"$tmp/fakelib/libcuda.so.1"
withlib=
[ $nodriver -eq 1 ] && withlib="env LD_LIBRARY_PATH=$tmp/fakelib"

"$r" run "$ex/reach.logic" --data "$ex" --device cpu --format csv --no-cache >"$tmp/cpu" 2>/dev/null || no "cpu run"
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/cache" --profile \
    >"$tmp/a1" 2>"$tmp/e1" || { no "auto run 1: exit $?"; cat "$tmp/e1"; }
cmp -s "$tmp/cpu" "$tmp/a1" || no "auto run 1: another output than the CPU's"
[ -f "$model" ] || no "auto run 1 wrote no model file"
head -n 1 "$model" 2>/dev/null | grep -qx "redfox placement model 2" || no "the model file has no version line"
grep -q "^r [0-9a-f]\{16\} cpu 0 " "$model" 2>/dev/null || no "no run record of the CPU run"
grep -q "^k cpu join_index " "$model" 2>/dev/null || no "--profile left no kernel records"
grep -q "^auto: predicted cpu .* -> chose \(cpu\|gpu\) (model: 0 records)" "$tmp/e1" || { no "run 1: no prediction line"; cat "$tmp/e1"; }
grep -q "^auto: actual " "$tmp/e1" || no "run 1: no actual time"
if grep -q "no usable GPU" "$tmp/e1"; then
    grep -q "note: running on the CPU" "$tmp/e1" || no "auto without a GPU does not say it runs on the CPU"
    grep -q "gpu - (no usable GPU) -> chose cpu" "$tmp/e1" || no "auto without a GPU: no 'no usable GPU' in the prediction"
fi
n1=$(grep -c . "$model")
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/cache" --profile \
    >"$tmp/a2" 2>"$tmp/e2" || no "auto run 2: exit $?"
cmp -s "$tmp/cpu" "$tmp/a2" || no "auto run 2: another output than the CPU's"
want=$((n1 - 1))
grep -q "(model: $want records)" "$tmp/e2" || { no "run 2 did not read the $want records back"; cat "$tmp/e2"; }
[ "$(grep -c . "$model")" -gt "$n1" ] || no "run 2 added no records"
# without --profile: a run record only
n2=$(grep -c . "$model")
"$r" run "$ex/reach.logic" --data "$ex" --device cpu --format csv --cache-dir "$tmp/cache" >/dev/null 2>&1
[ "$(grep -c . "$model")" -eq $((n2 + 1)) ] || no "a run without --profile should add one run record"
# damaged: a warning naming the file, the run as ever, the file written anew
printf 'redfox placement model 2\nr 12 cpu zz\n' >"$model"
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/cache" --profile >"$tmp/a3" \
    2>"$tmp/e3" || no "auto with a damaged model: exit $?"
cmp -s "$tmp/cpu" "$tmp/a3" || no "auto with a damaged model: another output"
grep -q "model.txt:2:1: warning: the placement model is damaged" "$tmp/e3" || { no "no warning naming the damaged model"; cat "$tmp/e3"; }
# the choice from the defaults: a tiny program on the CPU, no driver loaded
grep -q "^auto: predicted .* -> chose cpu (model: 0 records); the GPU's driver not loaded" "$tmp/e3" ||
    { no "a damaged model: not the defaults' choice"; cat "$tmp/e3"; }
# no driver installed: the CPU choice says there is no GPU, not a
# prediction against one (before: "predicted faster than the GPU"), and
# still loads no driver; with a driver's name on the loader's path, the
# prediction
if [ $nodriver -eq 1 ]; then
    grep -q "note: running on the CPU: no usable GPU (no NVIDIA driver: libcuda.so.1 is installed nowhere" "$tmp/e3" &&
        grep -q "^auto: predicted cpu [0-9.]* s, gpu - (no usable GPU) -> chose cpu (model: 0 records); the GPU's driver not loaded" "$tmp/e3" &&
        grep -q "libcuda.so.1 not loaded in this process" "$tmp/e3" ||
        { no "no driver installed: auto does not say there is no GPU"; cat "$tmp/e3"; }
    grep -q "predicted faster than the GPU" "$tmp/e3" && no "no driver installed: a prediction against a GPU"
    $withlib "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --no-cache \
        --profile >/dev/null 2>"$tmp/e3b" || no "auto, a driver's name on the loader's path: exit $?"
    grep -q "note: running on the CPU: predicted faster than the GPU" "$tmp/e3b" &&
        grep -q "libcuda.so.1 not loaded in this process" "$tmp/e3b" ||
        { no "a driver's name on the loader's path: not the prediction"; cat "$tmp/e3b"; }
fi
[ "$(grep -c "^r " "$model")" -eq 1 ] && ! grep -q "zz" "$model" || no "the damaged model was not written anew"
# another version: ignored likewise
printf 'redfox placement model 0\n' >"$model"
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/cache" >/dev/null 2>"$tmp/e4"
grep -q "warning: the placement model is damaged or of another version" "$tmp/e4" || no "another version: no warning"
# not a model file at all: a named pipe, a device, a file far past any
# model's size (a sparse 2 GiB one), a named pipe at model.bin. Each is
# passed over at once (never waited on, never read whole) with a warning,
# and written anew; --device cpu (which only adds its record) as well
if command -v timeout >/dev/null 2>&1; then to="timeout 60"; else to=; fi
odd() { # odd WHAT DEVICE WARN MAKE...: the run's exit, time, warning and the file written anew
    what=$1 dev=$2 warn=$3
    shift 3
    rm -rf "$tmp/c3"
    mkdir -p "$tmp/c3/place"
    "$@" || { no "$what: could not make it"; return; }
    $to "$r" run "$ex/reach.logic" --data "$ex" --device "$dev" --format csv --cache-dir "$tmp/c3" >"$tmp/a9" 2>"$tmp/e9"
    rc=$?
    [ $rc -eq 0 ] || { no "$what: exit $rc (124: it hung)"; cat "$tmp/e9"; return; }
    cmp -s "$tmp/cpu" "$tmp/a9" || no "$what: another output"
    if [ -n "$warn" ]; then
        grep -q "place/model.txt: warning: the placement model $warn" "$tmp/e9" || { no "$what: no warning"; cat "$tmp/e9"; }
    fi
    m3=$tmp/c3/place/model.txt
    [ -f "$m3" ] && [ ! -L "$m3" ] && [ "$(head -n 1 "$m3")" = "redfox placement model 2" ] &&
        [ "$(wc -c <"$m3")" -lt 100000 ] || no "$what: the model was not written anew"
}
odd "model.txt a named pipe" cpu "is not a regular file" mkfifo "$tmp/c3/place/model.txt"
odd "model.txt a named pipe (auto)" auto "is not a regular file" mkfifo "$tmp/c3/place/model.txt"
if [ -c /dev/zero ]; then
    odd "model.txt a link to /dev/zero" cpu "is not a regular file" ln -s /dev/zero "$tmp/c3/place/model.txt"
    odd "model.txt a link to /dev/zero (auto)" auto "is not a regular file" ln -s /dev/zero "$tmp/c3/place/model.txt"
fi
big() { printf 'redfox placement model 2\n' >"$tmp/c3/place/model.txt" && truncate -s 2G "$tmp/c3/place/model.txt"; }
if command -v truncate >/dev/null 2>&1; then
    odd "model.txt of 2 GiB" cpu "is larger than a model can be" big
    odd "model.txt of 2 GiB (auto)" auto "is larger than a model can be" big
fi
binfifo() {
    "$r" run "$ex/reach.logic" --data "$ex" --device cpu --format csv --cache-dir "$tmp/c3" >/dev/null 2>&1 &&
        "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c3" >/dev/null 2>&1 &&
        rm -f "$tmp/c3/place/model.bin" && mkfifo "$tmp/c3/place/model.bin"
}
odd "model.bin a named pipe (auto)" auto "" binfifo
[ -p "$tmp/c3/place/model.bin" ] && no "model.bin a named pipe: not made again"
# --no-cache: no model at all
HOME=$tmp/home XDG_CACHE_HOME=$tmp/xdg "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --no-cache \
    >/dev/null 2>&1 || no "auto --no-cache: exit $?"
[ -e "$tmp/xdg/redfox/place" ] || [ -e "$tmp/home/.cache/redfox/place" ] && no "--no-cache wrote a model"
# the runs a process makes (issue 27): a synthetic model of this program,
# CPU 0.15 s a run, the GPU 0.001 s after a fresh start of 0.3 s: one run
# stays on the CPU without loading the GPU's driver; three runs
# (--repeat 3) pay the start once and choose the GPU (here, without one:
# the CPU, saying so)
rm -rf "$tmp/c2"
"$r" run "$ex/reach.logic" --data "$ex" --device cpu --format csv --cache-dir "$tmp/c2" >/dev/null 2>&1
m2=$tmp/c2/place/model.txt
set -- $(grep "^r " "$m2" | head -n 1)
synth() {
    printf 'redfox placement model 2\nr %s cpu 0 %s %s %s 0 0 0.15\nr %s gpu 1 %s %s %s 0.3 0 0.001\n' \
        "$2" "$5" "$6" "$7" "$2" "$5" "$6" "$7" >"$m2"
}
synth "$@"
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c2" --profile \
    >"$tmp/a5" 2>"$tmp/e5" || no "auto, one run: exit $?"
cmp -s "$tmp/cpu" "$tmp/a5" || no "auto, one run: another output"
# (a host with no driver installed: the GPU's figure is that there is none,
# found without loading a driver)
grep -q "^auto: predicted cpu 0.150000 s, gpu \(0.30[0-9]* s\|- (no usable GPU)\) -> chose cpu (model: 2 records); the GPU's driver not loaded" \
    "$tmp/e5" || { no "one run: not the CPU without the driver"; cat "$tmp/e5"; }
grep -q "libcuda.so.1 not loaded in this process" "$tmp/e5" || no "one run: the driver was loaded"
synth "$@"
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c2" --profile --repeat 3 \
    >"$tmp/a6" 2>"$tmp/e6" || no "auto, three runs: exit $?"
cmp -s "$tmp/cpu" "$tmp/a6" || no "auto, three runs: another output"
grep -q "^run 1 of 3: auto: expected 3 runs: cpu 0.450000 s, gpu 0.30[0-9]* s in all" "$tmp/e6" ||
    { no "three runs: no totals weighed"; cat "$tmp/e6"; }
grep -q "^run 1 of 3: auto: predicted .* -> chose gpu\|no usable GPU" "$tmp/e6" ||
    { no "three runs: the GPU not chosen"; cat "$tmp/e6"; }
# the host record: what the look for the GPU found; a host without a usable
# GPU is not looked at again by auto
if grep -q "no usable GPU" "$tmp/e6"; then
    grep -q "^h [^ ]* none -$" "$m2" || { no "no host record of a host without a GPU"; cat "$m2"; }
    hrec=$(grep "^h " "$m2")
    synth "$@"
    echo "$hrec" >>"$m2"
    "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c2" --profile --repeat 3 \
        >"$tmp/a7" 2>"$tmp/e7" || no "auto, a host without a GPU: exit $?"
    cmp -s "$tmp/cpu" "$tmp/a7" || no "auto, a host without a GPU: another output"
    grep -q "^run 1 of 3: auto: predicted .* gpu - (no usable GPU) -> chose cpu .*; the GPU's driver not loaded" "$tmp/e7" ||
        { no "the host record was not followed"; cat "$tmp/e7" "$m2"; }
    [ "$(grep -c "^h " "$m2")" -eq 1 ] || no "a host record written again with nothing new"
    # where the CPU is predicted faster anyway, the note still gives the reason that holds
    synth "$@"
    echo "$hrec" >>"$m2"
    "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c2" \
        >"$tmp/a8" 2>"$tmp/e8" || no "auto, a host without a GPU, one run: exit $?"
    grep -q "note: running on the CPU: no usable GPU (none on this host" "$tmp/e8" ||
        { no "a host without a GPU: the note gives the prediction, not the missing GPU"; cat "$tmp/e8"; }
else
    grep -q "^h [^ ]* gpu [^ -]" "$m2" || { no "no host record of the GPU found"; cat "$m2"; }
fi
# the emulator (RF_GPU_EMULATE) is weighed as a real GPU that has not run in
# this process yet, its start included (before: as one already started, at
# 0.001 s, and chosen for one run); --repeat 3's first run weighs the start
# once, and the next runs find it started; the actual line gives the wait
# for the program's kernels (the emulator's object) apart from the copies
synth "$@"
RF_GPU_EMULATE=1 "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c2" --profile \
    >"$tmp/a5e" 2>"$tmp/e5e" || no "emulated auto, one run: exit $?"
cmp -s "$tmp/cpu" "$tmp/a5e" || no "emulated auto, one run: another output"
grep -q "^auto: predicted cpu 0.150000 s, gpu 0.30[0-9]* s -> chose cpu (model: 2 records); the GPU emulated (RF_GPU_EMULATE): predicted as a real GPU, its start included" \
    "$tmp/e5e" || { no "emulated auto, one run: its start not weighed"; cat "$tmp/e5e"; }
synth "$@"
RF_GPU_EMULATE=1 "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c2" --profile \
    --repeat 3 >"$tmp/a6e" 2>"$tmp/e6e" || no "emulated auto, three runs: exit $?"
cmp -s "$tmp/cpu" "$tmp/a6e" || no "emulated auto, three runs: another output"
grep -q "^run 1 of 3: auto: predicted cpu 0.150000 s, gpu 0.30[0-9]* s -> chose gpu (model: 2 records); the GPU emulated (RF_GPU_EMULATE): predicted as a real GPU, its start included" \
    "$tmp/e6e" &&
    grep -q "^auto: predicted cpu 0.150000 s, gpu 0.00[0-9]* s -> chose gpu (model: 2 records); the GPU emulated (RF_GPU_EMULATE): predicted as a real GPU, started in this process" \
        "$tmp/e6e" &&
    grep -q "^auto: actual gpu [0-9.]* s (reading [0-9.]* s, start not hidden [0-9.]* s, the program's kernels waited for [0-9.]* s, copies" \
        "$tmp/e6e" || { no "emulated auto, three runs: not weighed as a GPU started by its first run"; cat "$tmp/e6e"; }
# a prediction far past any real time (a record of this program's GPU run
# on next to no rows): the line whole, not cut off in its GPU figure
set -- $(grep "^r " "$m2" | head -n 1)
printf 'redfox placement model 2\nr %s gpu 1 1e-290 %s %s 0.3 0 1\n' "$2" "$6" "$7" >"$m2"
$withlib "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c2" --profile \
    >"$tmp/a10" 2>"$tmp/e10" || no "auto, a huge prediction: exit $?"
cmp -s "$tmp/cpu" "$tmp/a10" || no "auto, a huge prediction: another output"
grep -q "^auto: predicted cpu [0-9.]* s, gpu [0-9]\{200,\}\.[0-9]\{6\} s -> chose cpu (model: 1 records)" "$tmp/e10" ||
    { no "a huge prediction: the profile's line cut short"; cat "$tmp/e10"; }
# numbers no run measures (a time of 1e308 s): damage, not a record to trust
printf 'redfox placement model 2\nr %s cpu 0 %s %s %s 0 0 1e308\n' "$2" "$5" "$6" "$7" >"$m2"
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c2" --profile \
    >"$tmp/a11" 2>"$tmp/e11" || no "auto, a time of 1e308 s: exit $?"
grep -q "model.txt:2:1: warning: the placement model is damaged" "$tmp/e11" || { no "a time of 1e308 s: no warning"; cat "$tmp/e11"; }
grep -q "^auto: predicted .* -> chose cpu (model: 0 records)" "$tmp/e11" || { no "a time of 1e308 s: trusted"; cat "$tmp/e11"; }
# a model that cannot be written: --profile says this run's records were
# not kept, and where (before: nothing, and auto silently never learned);
# no cache folder at all likewise; --no-cache asks for none and hears nothing
rm -rf "$tmp/c4"
mkdir -p "$tmp/c4"
echo x >"$tmp/c4/place" # (a file where the folder should be: unwritable even for root)
"$r" run "$ex/reach.logic" --data "$ex" --device cpu --format csv --cache-dir "$tmp/c4" --profile >"$tmp/a12" 2>"$tmp/e12" ||
    no "an unwritable model: exit $?"
cmp -s "$tmp/cpu" "$tmp/a12" || no "an unwritable model: another output"
grep -q "^placement model: this run's records not kept ($tmp/c4/place/model.txt: Not a directory)" "$tmp/e12" ||
    { no "an unwritable model: --profile does not say the records were not kept"; cat "$tmp/e12"; }
env -u HOME -u XDG_CACHE_HOME "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --profile >"$tmp/a13" \
    2>"$tmp/e13" || no "no cache folder: exit $?"
grep -q "^placement model: this run's records not kept (no cache folder" "$tmp/e13" ||
    { no "no cache folder: --profile does not say so"; cat "$tmp/e13"; }
(cd "$tmp/cwd" 2>/dev/null || cd "$tmp"; env -u HOME XDG_CACHE_HOME=relcache "$r" run "$ex/reach.logic" --data "$ex" \
    --device cpu --format csv --profile >/dev/null 2>"$tmp/e16")
grep -q "^placement model: this run's records not kept (no cache folder: \$HOME is not set, nor \$XDG_CACHE_HOME to an absolute" \
    "$tmp/e16" || { no "no cache folder (a relative XDG_CACHE_HOME): --profile does not say so"; cat "$tmp/e16"; }
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --profile --no-cache >/dev/null 2>"$tmp/e14"
grep -q "records not kept" "$tmp/e14" && no "--no-cache: told the records were not kept"
# a relative $XDG_CACHE_HOME is ignored (the XDG spec): the model goes
# under $HOME, not into a folder of that name wherever redfox runs
mkdir -p "$tmp/cwd"
(cd "$tmp/cwd" && HOME=$tmp/home7 XDG_CACHE_HOME=relcache "$r" run "$ex/reach.logic" --data "$ex" --device cpu \
    --format csv >/dev/null 2>&1) || no "a relative XDG_CACHE_HOME: exit $?"
[ -e "$tmp/cwd/relcache" ] && no "a relative XDG_CACHE_HOME: a cache made in the working folder"
[ -f "$tmp/home7/.cache/redfox/place/model.txt" ] || no "a relative XDG_CACHE_HOME: the model not under \$HOME"
# a damaged model in a folder that cannot be written: the warning that it
# is written anew is followed by one that it cannot be, naming the reason
# (not testable as root, who may write anywhere)
if [ "$(id -u)" != 0 ]; then
    rm -rf "$tmp/c5"
    mkdir -p "$tmp/c5/place"
    printf 'redfox placement model 2\nzz\n' >"$tmp/c5/place/model.txt"
    chmod a-w "$tmp/c5/place"
    "$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c5" >/dev/null 2>"$tmp/e15"
    grep -q "model.txt: warning: the placement model cannot be written anew (Permission denied)" "$tmp/e15" ||
        { no "a damaged, unwritable model: no warning that it stays so"; cat "$tmp/e15"; }
    chmod u+w "$tmp/c5/place"
fi
# --repeat: a damaged model is found (and written anew) by the first run;
# its warning was lost, the library keeping only the last run's messages
mkdir -p "$tmp/c7/place"
printf 'redfox placement model 2\nzz\n' >"$tmp/c7/place/model.txt"
"$r" run "$ex/reach.logic" --data "$ex" --device auto --format csv --cache-dir "$tmp/c7" --repeat 3 \
    >"$tmp/a17" 2>"$tmp/e17" || no "auto --repeat 3, a damaged model: exit $?"
cmp -s "$tmp/cpu" "$tmp/a17" || no "auto --repeat 3, a damaged model: another output"
[ "$(grep -c "model.txt:2:1: warning: the placement model is damaged" "$tmp/e17")" = 1 ] ||
    { no "--repeat 3: the first run's warning of a damaged model not printed once"; cat "$tmp/e17"; }
# a warning every run gives (here the emulated GPU's cap, which sends each
# run to the CPU): once, not again for the last run (it came twice)
RF_GPU_EMULATE=1 "$r" run "$ex/reach.logic" --data "$ex" --device gpu --gpu-memory 1 --format csv \
    --cache-dir "$tmp/c7" --repeat 3 >"$tmp/a18" 2>"$tmp/e18" || no "gpu --repeat 3 under a cap: exit $?"
cmp -s "$tmp/cpu" "$tmp/a18" || no "gpu --repeat 3 under a cap: another output"
[ "$(grep -c "warning: .*out of GPU memory" "$tmp/e18")" = 1 ] ||
    { no "--repeat 3: a warning of every run not printed once"; cat "$tmp/e18"; }
# something already under the name of this process's temporary (the
# shell's pid is redfox's after exec): a named pipe there hung the rewrite
# for ever, a symbolic link had the model written into the file it names
if command -v timeout >/dev/null 2>&1 && command -v mkfifo >/dev/null 2>&1; then
    mkdir -p "$tmp/c9/place" "$tmp/c10/place"
    echo precious >"$tmp/victim"
    printf 'redfox placement model 2\nzz\n' >"$tmp/c9/place/model.txt"
    cp "$tmp/c9/place/model.txt" "$tmp/c10/place/model.txt"
    timeout 30 sh -c 'mkfifo "$1/place/model.txt.$$.1.tmp" && exec "$2" run "$3/reach.logic" --data "$3" \
        --device auto --format csv --cache-dir "$1"' sh "$tmp/c9" "$r" "$ex" >"$tmp/a19" 2>/dev/null ||
        no "a named pipe under the temporary's name: exit $? (124: hung)"
    cmp -s "$tmp/cpu" "$tmp/a19" || no "a named pipe under the temporary's name: another output"
    timeout 30 sh -c 'ln -s "$4" "$1/place/model.txt.$$.1.tmp" && exec "$2" run "$3/reach.logic" --data "$3" \
        --device auto --format csv --cache-dir "$1"' sh "$tmp/c10" "$r" "$ex" "$tmp/victim" >/dev/null 2>&1 ||
        no "a link under the temporary's name: exit $?"
    [ "$(cat "$tmp/victim")" = precious ] || no "a link under the temporary's name: the file it names written"
    grep -q "^r " "$tmp/c10/place/model.txt" || no "a link under the temporary's name: no model written"
fi
# the emulated GPU's runs are not recorded (its times are no GPU's), as
# the docs say; a CPU run is
rm -rf "$tmp/c11"
RF_GPU_EMULATE=1 "$r" run "$ex/reach.logic" --data "$ex" --device gpu --format csv --cache-dir "$tmp/c11" \
    >"$tmp/a20" 2>/dev/null || no "emulated --device gpu: exit $?"
cmp -s "$tmp/cpu" "$tmp/a20" || no "emulated --device gpu: another output"
grep -q "^r " "$tmp/c11/place/model.txt" 2>/dev/null && no "the emulated GPU's run was recorded"
"$r" run "$ex/reach.logic" --data "$ex" --device cpu --format csv --cache-dir "$tmp/c11" >/dev/null 2>&1
[ "$(grep -c "^r [0-9a-f]* cpu " "$tmp/c11/place/model.txt")" = 1 ] || no "a CPU run after an emulated one: not one record"
# tpch run: the choice for all its queries reads the model first (and
# writes a damaged one anew); its warning was dropped, the first query's
# run then finding a sound, empty model
if "$r" tpch gen --sf 0.01 --tables lineitem --out "$tmp/tp" >/dev/null 2>&1; then
    mkdir -p "$tmp/c8/place"
    printf 'redfox placement model 2\nzz\n' >"$tmp/c8/place/model.txt"
    "$r" tpch run --data "$tmp/tp" --queries 6 --device auto --format csv --cache-dir "$tmp/c8" >/dev/null \
        2>"$tmp/e18" || no "tpch run --device auto, a damaged model: exit $?"
    [ "$(grep -c "model.txt:2:1: warning: the placement model is damaged" "$tmp/e18")" = 1 ] ||
        { no "tpch run: the warning of a damaged model not printed once"; cat "$tmp/e18"; }
    # its line on the GPU code compiled ahead: with no driver installed, that
    # there is no GPU (it said the CPU was predicted faster); with a driver's
    # name on the loader's path, the prediction
    if [ $nodriver -eq 1 ]; then
        "$r" tpch run --data "$tmp/tp" --queries 6 --device auto --profile --no-cache >/dev/null 2>"$tmp/e18b" ||
            no "tpch run --device auto --profile: exit $?"
        grep -q "^auto: no usable GPU (no NVIDIA driver: libcuda.so.1 is installed nowhere the dynamic loader looks): no GPU code compiled ahead" \
            "$tmp/e18b" || { no "tpch run, no driver installed: not said"; cat "$tmp/e18b"; }
        $withlib "$r" tpch run --data "$tmp/tp" --queries 6 --device auto --profile --no-cache >/dev/null \
            2>"$tmp/e18c" || no "tpch run --device auto --profile, a driver's name: exit $?"
        grep -q "^auto: the CPU predicted faster for every query" "$tmp/e18c" ||
            { no "tpch run, a driver's name on the loader's path: not the prediction"; cat "$tmp/e18c"; }
    fi
else
    no "tpch gen for tpch run"
fi
# `redfox exec`: its programs read the transaction's states from memory
# (no file, no table): their rows were estimated as none, so a model that
# measured them 10 s on the CPU and 1 ms on the GPU still predicted the CPU
# at 0 s and chose it ("predicted faster than the GPU (0 s against 0.3 s)")
tc=$ex/../../tests/exec/tc.logic
mkdir -p "$tmp/x/data"
awk 'BEGIN { for (i = 0; i < 300; i++) printf "%d,%d\n", i % 97, (i * 7) % 101 }' >"$tmp/x/data/edge.csv"
if "$r" import "$tc" --data "$tmp/x/data" --out "$tmp/x/db" >/dev/null 2>&1; then
    cp -r "$tmp/x/db" "$tmp/x/db2"
    "$r" exec "$tmp/x/db" "$tc" --device cpu --format csv --cache-dir "$tmp/c6" >"$tmp/x/cpu" 2>/dev/null ||
        no "exec --device cpu: exit $?"
    m6=$tmp/c6/place/model.txt
    grep -q "^r [0-9a-f]* cpu 0 [1-9]" "$m6" || { no "exec: a run record without the rows read from memory"; cat "$m6"; }
    { echo "redfox placement model 2"
      grep "^r " "$m6" | while read -r _ h _ _ rows bytes k _; do
          echo "r $h cpu 0 $rows $bytes $k 0 0 10"
          echo "r $h gpu 0 $rows $bytes $k 0 0 0.001"
      done; } >"$tmp/x/m" && mv "$tmp/x/m" "$m6"
    "$r" exec "$tmp/x/db2" "$tc" --device auto --format csv --cache-dir "$tmp/c6" >"$tmp/x/auto" 2>"$tmp/e16" ||
        no "exec --device auto: exit $?"
    cmp -s "$tmp/x/cpu" "$tmp/x/auto" || no "exec --device auto: another output than the CPU's"
    grep -q "running on the CPU: predicted faster" "$tmp/e16" &&
        { no "exec --device auto: the CPU predicted faster against the model's runs"; cat "$tmp/e16"; }
    grep -q "running on the GPU\|no usable GPU" "$tmp/e16" || { no "exec --device auto: no note of the GPU"; cat "$tmp/e16"; }
else
    no "import for exec"
fi
[ $fail = 0 ] && echo "placement model: written, read back, damage ignored, auto says where it runs"
exit $fail
