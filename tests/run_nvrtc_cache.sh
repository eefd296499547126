#!/bin/sh
# tests/run_nvrtc_cache.sh REDFOX PROG.logic: NVRTC's cache entries
# (<cache>/nvrtc/KEY.ptx) are served only when whole: an entry cut short,
# replaced by junk that looks like PTX, by a named pipe or by a link to
# /dev/zero, or by an empty folder, is compiled again (never copied into the
# .rfx, never waited on, never read without end) and written anew; a sound
# entry is served as it is; a folder holding files is left alone, with one
# warning a compile naming it. The .rfx is the same in every case. Skipped
# (77) without NVRTC.
set -u
r=$1
prog=$2
tmp=${TMPDIR:-/tmp}/rf_nvcache.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }
if command -v timeout >/dev/null 2>&1; then to="timeout 120"; else to=; fi
c=$tmp/cache
"$r" compile "$prog" -o "$tmp/good.rfx" --cache-dir "$c" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
"$r" dump --ptx "$tmp/good.rfx" 2>/dev/null | grep -q "\.target" || { echo "no NVRTC here: skipped"; exit 77; }
e=$(ls "$c"/nvrtc/*.ptx 2>/dev/null | head -n 1)
[ -f "$e" ] || { no "no cache entry written"; exit 1; }
cp "$e" "$tmp/entry"
# a sound entry: served, left as it is
touch -d '2001-01-01' "$e" 2>/dev/null
"$r" compile "$prog" -o "$tmp/again.rfx" --cache-dir "$c" || no "compile from the cache"
cmp -s "$tmp/good.rfx" "$tmp/again.rfx" || no "the .rfx from the cache differs"
[ "$(find "$e" -newer "$tmp/entry" 2>/dev/null)" = "" ] || no "a sound entry was written again"
damage() { # damage WHAT MAKE...: the .rfx as without the cache, the entry whole again
    what=$1
    shift
    rm -f "$e"
    "$@" || { no "$what: could not make it"; return; }
    $to "$r" compile "$prog" -o "$tmp/d.rfx" --cache-dir "$c" 2>"$tmp/err"
    rc=$?
    [ $rc -eq 0 ] || { no "$what: exit $rc (124: it hung)"; cat "$tmp/err"; return; }
    cmp -s "$tmp/good.rfx" "$tmp/d.rfx" || no "$what: the .rfx differs from the one compiled without it"
    [ -f "$e" ] && [ ! -L "$e" ] && cmp -s "$e" "$tmp/entry" || no "$what: the entry was not written anew"
}
damage "an entry cut short" sh -c "head -c 400 '$tmp/entry' >'$e'"
damage "an entry cut by one byte" sh -c "head -c \$((\$(wc -c <'$tmp/entry') - 1)) '$tmp/entry' >'$e'"
damage "junk that looks like PTX" sh -c "printf 'junk .version .target\n' >'$e'"
damage "a byte changed" sh -c "cp '$tmp/entry' '$e' && printf 'X' | dd of='$e' bs=1 seek=5000 conv=notrunc 2>/dev/null"
damage "a named pipe" mkfifo "$e"
[ -c /dev/zero ] && damage "a link to /dev/zero" ln -s /dev/zero "$e"
# an empty folder in the entry's place: removed and the entry written anew
# (it was compiled again at every use, never written); one holding a file
# is left alone, compiled again each time
damage "an empty folder" mkdir "$e"
rm -rf "$e"
mkdir "$e"
echo keep >"$e/mine"
# (said once a run, naming the folder: it was silent, so the user never
# learned why every compile took NVRTC's time)
for n in 1 2; do
    $to "$r" compile "$prog" -o "$tmp/d.rfx" --cache-dir "$c" 2>"$tmp/err" || { no "a folder with a file: exit $?"; cat "$tmp/err"; }
    cmp -s "$tmp/good.rfx" "$tmp/d.rfx" || no "a folder with a file: the .rfx differs"
    [ -f "$e/mine" ] && [ "$(cat "$e/mine")" = keep ] || no "a folder with a file in the entry's place was removed"
    [ "$(grep -c "^$e: warning: a folder with files in it stands where this GPU-code cache entry goes" "$tmp/err")" = 1 ] ||
        { no "a folder with a file, compile $n: not one warning naming it"; cat "$tmp/err"; }
    [ "$(wc -l <"$tmp/err")" = 1 ] || { no "a folder with a file, compile $n: more than the warning said"; cat "$tmp/err"; }
done
rm -rf "$e"
# the temporary of a writer killed between its creation and its rename
# (SIGKILL; about 400 KB of PTX) is removed by the next write into the
# folder once its process is gone and it is a minute old; one of a live
# process, or a recent one, is kept. They stayed for ever.
d=$(dirname "$e")
echo part >"$d/x.ptx.4194000.1.tmp"; echo part >"$d/y.ptx.4194001.1.tmp"; echo part >"$d/z.ptx.$$.1.tmp"
touch -d '1 hour ago' "$d/x.ptx.4194000.1.tmp" "$d/z.ptx.$$.1.tmp"
rm -f "$e"
"$r" compile "$prog" -o "$tmp/d.rfx" --cache-dir "$c" 2>"$tmp/err" || { no "compile after a killed writer"; cat "$tmp/err"; }
[ -e "$d/x.ptx.4194000.1.tmp" ] && no "a stale temporary of a gone writer was kept"
[ -e "$d/y.ptx.4194001.1.tmp" ] || no "a recent temporary was removed"
[ -e "$d/z.ptx.$$.1.tmp" ] || no "a live process's temporary was removed"
[ $fail = 0 ] && echo "NVRTC's cache: damaged entries compiled again, sound ones served, stale temporaries removed"
exit $fail
