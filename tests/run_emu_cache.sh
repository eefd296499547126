#!/bin/sh
# tests/run_emu_cache.sh REDFOX EXAMPLE_DIR: the GPU emulator's compiled
# objects (<cache>/emu/HASH.so) are used only when whole: one cut short (it
# ended the run with SIGBUS), emptied (exit 3 on every run, never built
# again), or replaced by anything else is built again and the run goes on
# with the same answers; a --cache-dir that cannot be used (a file) is
# passed over as --no-cache is, and so is one where the build fails for the
# folder's sake (as a full disk, or the cache deleted while the compiler
# ran, it exited 3). A folder in the object's place is removed when empty;
# one holding a file is left alone, the object built in a temporary folder,
# and one warning a run names it. A cache path holding a
# quote and shell words is a path, never a command. What killed builds left
# in the folder is swept. No run exits 3.
set -u
r=$1
ex=$2
tmp=${TMPDIR:-/tmp}/rf_emucache.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
export RF_GPU_EMULATE=1
c=$tmp/cache
if command -v timeout >/dev/null 2>&1; then to="timeout 120"; else to=; fi
run() { $to "$r" run "$ex/reach.logic" --data "$ex" --device gpu --format csv "$@"; }
run --no-cache >"$tmp/ref" 2>"$tmp/err" || { echo "the emulator cannot run here: skipped"; cat "$tmp/err"; exit 77; }
run --cache-dir "$c" >"$tmp/out" 2>"$tmp/err" || { no "first run: exit $?"; cat "$tmp/err"; }
so=$(ls "$c"/emu/*.so 2>/dev/null | head -n 1)
[ -f "$so" ] || { no "no object cached"; exit 1; }
damaged() { # damaged WHAT MAKE...: the run as ever, the object built again
    what=$1
    shift
    "$@" || { no "$what: could not make it"; return; }
    run --cache-dir "$c" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { no "$what: exit $rc"; cat "$tmp/err"; return; }
    cmp -s "$tmp/ref" "$tmp/out" || no "$what: another answer"
    # (no messages; a sanitized build's note on the emulator's coroutines aside)
    grep -v "^==[0-9]*==WARNING: ASan doesn't fully support makecontext" "$tmp/err" | grep -q . &&
        { no "$what: messages"; cat "$tmp/err"; }
    # built again (not byte for byte the first: its debug information names
    # the temporary source): a regular file of some size, sealed
    [ -f "$so" ] && [ "$(wc -c <"$so")" -gt 10000 ] && tail -c 64 "$so" | grep -q "^redfox cache seal 1 " ||
        no "$what: the object was not built again"
}
# what killed builds left (the source, the object the compiler finished
# after its parent died): a gone process's old ones are swept by the next
# build; a young one, a live process's and another name are kept
sh -c 'exit 0' &
dead=$!
wait
left="$so.$dead.1.cpp $so.$dead.2.tmp"
for f in $left "$so.$dead.3.tmp.keep" "$so.$$.1.cpp"; do echo x >"$f"; touch -d '2 hours ago' "$f"; done
echo x >"$so.$dead.4.tmp"
damaged "an object cut short" truncate -s 1000 "$so"
for f in $left; do [ -e "$f" ] && no "a killed build's $f was not swept"; done
for f in "$so.$dead.3.tmp.keep" "$so.$$.1.cpp" "$so.$dead.4.tmp"; do
    [ -e "$f" ] || no "$f was swept"
    rm -f "$f"
done
damaged "an empty object" sh -c ": >'$so'"
damaged "an object one byte short" truncate -s -1 "$so"
if command -v python3 >/dev/null 2>&1; then
    # junk that carries a seal agreeing with it: passes the check, fails to
    # load, and is built again all the same
    damaged "a sealed object that does not load" python3 - "$so" <<'PY'
import sys, zlib
body = b"not an ELF object\n"
seal = ("\nredfox cache seal 1 %d %08x" % (len(body), zlib.crc32(body))).encode()
seal = seal + b" " * (63 - len(seal)) + b"\n"
open(sys.argv[1], "wb").write(body + seal)
PY
fi
damaged "a named pipe" sh -c "rm -f '$so' && mkfifo '$so'"
# a cache folder that cannot be used: a file in its way
echo x >"$tmp/afile"
run --cache-dir "$tmp/afile" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { no "--cache-dir a file: exit $rc"; cat "$tmp/err"; }
cmp -s "$tmp/ref" "$tmp/out" || no "--cache-dir a file: another answer"
# the object's name taken by an empty folder: removed, and the object
# built in its place (it was built in a temporary folder at every run)
rm -f "$so"
damaged "an empty folder in the object's place" mkdir "$so"
# taken by a folder with a file in it: left alone (not redfox's), the build
# made in a temporary folder, and one warning a run names the folder (it
# was silent: the user never learned why every run compiled again)
rm -rf "$so"
mkdir "$so"
echo keep >"$so/mine"
for n in 1 2; do
    run --cache-dir "$c" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { no "a folder with a file in the object's place, run $n: exit $rc"; cat "$tmp/err"; }
    cmp -s "$tmp/ref" "$tmp/out" || no "a folder with a file in the object's place, run $n: another answer"
    [ -f "$so/mine" ] && [ "$(cat "$so/mine")" = keep ] || no "a folder with a file in the object's place was removed"
    grep -v "^==[0-9]*==WARNING: ASan doesn't fully support makecontext" "$tmp/err" >"$tmp/err2"
    [ "$(grep -c "^$so: warning: a folder with files in it stands where this GPU-code cache entry goes" "$tmp/err2")" = 1 ] ||
        { no "a folder with a file, run $n: not one warning naming it"; cat "$tmp/err"; }
    [ "$(wc -l <"$tmp/err2")" = 1 ] || { no "a folder with a file, run $n: more than the warning said"; cat "$tmp/err"; }
done
rm -rf "$so"
# passed over, the build goes to $TMPDIR (not /tmp whatever it says): a
# compiler that notes where it writes
mkdir -p "$tmp/tmpd"
printf '#!/bin/sh\necho "$@" >>"%s/cxx.log"\nexec c++ "$@"\n' "$tmp" >"$tmp/cxx"
chmod +x "$tmp/cxx"
TMPDIR=$tmp/tmpd RF_GPU_EMU_CXX=$tmp/cxx run --cache-dir "$tmp/afile" >"$tmp/out" 2>"$tmp/err" ||
    { no "--cache-dir a file, \$TMPDIR set: exit $?"; cat "$tmp/err"; }
cmp -s "$tmp/ref" "$tmp/out" || no "--cache-dir a file, \$TMPDIR set: another answer"
grep -q " -o $tmp/tmpd/rf_emu_" "$tmp/cxx.log" || { no "the build not in \$TMPDIR"; cat "$tmp/cxx.log"; }
[ -z "$(ls -A "$tmp/tmpd")" ] || no "the temporary folder in \$TMPDIR left behind"
# something already under the names of this process's build temporaries
# (the shell's pid is redfox's after exec; HASH.so.PID.1.cpp, the source,
# and HASH.so.PID.2.tmp, the object, are its first two): a named pipe there
# made the linker fail (the cache passed over: built in a temporary folder
# at every run) or, with a compiler writing its output in place, wait for
# ever; a symbolic link had the object written through it into the file it
# names, with such a compiler. Now both are replaced by new files: the run
# ends with the same answer, the object cached, the linked file untouched.
# (With the system's compiler, then one that writes in place, through what
# is at its -o.)
printf '#!/bin/sh\nt=$(mktemp) || exit 1\nout=; prev=\nfor a; do [ "$prev" = -o ] && out=$a; prev=$a; done\nc++ "$@" -o "$t" && cat "$t" >"$out"; rc=$?\nrm -f "$t"\nexit $rc\n' >"$tmp/inplace"
chmod +x "$tmp/inplace"
echo precious >"$tmp/victim"
base=$(basename "$so")
for cxx in c++ "$tmp/inplace"; do
    for what in pipe link; do
        pc=$tmp/planted.$what
        rm -rf "$pc"
        mkdir -p "$pc/emu"
        RF_GPU_EMU_CXX=$cxx timeout 60 sh -c '
            t=$1/emu/$2.$$
            if [ "$3" = pipe ]; then mkfifo "$t.2.tmp" "$t.1.cpp" || exit 99
            else ln -s "$4" "$t.2.tmp" && ln -s "$4" "$t.1.cpp" || exit 99; fi
            exec "$5" run "$6/reach.logic" --data "$6" --device gpu --format csv --cache-dir "$1"' \
            sh "$pc" "$base" "$what" "$tmp/victim" "$r" "$ex" >"$tmp/out" 2>"$tmp/err"
        rc=$?
        [ $rc -eq 0 ] || { no "a $what under the build's temporaries ($cxx): exit $rc (124: it hung)"; cat "$tmp/err"; }
        cmp -s "$tmp/ref" "$tmp/out" || no "a $what under the build's temporaries ($cxx): another answer"
        [ "$(cat "$tmp/victim")" = precious ] || no "a $what under the build's temporaries ($cxx): the linked file written"
        [ -f "$pc/emu/$base" ] && [ ! -L "$pc/emu/$base" ] ||
            { no "a $what under the build's temporaries ($cxx): no object cached"; ls -l "$pc/emu"; }
    done
done
# a cache folder whose path holds a quote, a blank and a shell command
q="$tmp/it's; touch $tmp/injected; '"
run --cache-dir "$q" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] || { no "a quote in the cache's path: exit $rc"; cat "$tmp/err"; }
cmp -s "$tmp/ref" "$tmp/out" || no "a quote in the cache's path: another answer"
[ -e "$tmp/injected" ] && no "a quote in the cache's path: its words ran as a command"
ls "$q"/emu/*.so >/dev/null 2>&1 || no "a quote in the cache's path: no object cached there"
[ $fail = 0 ] && echo "the emulator's cache: damaged objects built again, an unusable folder passed over"
exit $fail
