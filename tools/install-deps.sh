#!/usr/bin/env sh
# tools/install-deps.sh: installs what the build needs (Debian/Ubuntu), when it is missing.
# Owns: the list of build dependencies; README's first command and .ci/run both call it.
# Does nothing when everything is present, so it is cheap to run before every build.
set -eu
missing=""
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v ninja >/dev/null 2>&1 || missing="$missing ninja-build"
command -v flex >/dev/null 2>&1 || missing="$missing flex"
command -v bison >/dev/null 2>&1 || missing="$missing bison"
command -v cc >/dev/null 2>&1 || missing="$missing gcc"
[ -f /usr/include/yaml.h ] || missing="$missing libyaml-dev"
[ -f /usr/include/zlib.h ] || missing="$missing zlib1g-dev"
# Open MPI: several ranks (mpirun -np N redfox run ...; runtime/dist); the build works without it
command -v mpirun >/dev/null 2>&1 || missing="$missing openmpi-bin"
command -v mpicc >/dev/null 2>&1 || missing="$missing libopenmpi-dev"
# strace: tests/run_exec_crash.sh kills exec's in-place commit at each write, sync and rename through its fault injection
command -v strace >/dev/null 2>&1 || missing="$missing strace"
# Graphviz: `redfox dump --plan --format svg` draws with its dot (optional; the CLI test checks it)
command -v dot >/dev/null 2>&1 || missing="$missing graphviz"
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: missing:$missing; install them with your package manager" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
        echo "install-deps: missing:$missing; run as root or install sudo" >&2
        exit 1
    fi
fi
echo "install-deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq $missing >/dev/null
