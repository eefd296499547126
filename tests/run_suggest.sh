#!/bin/sh
# tests/run_suggest.sh REDFOX TPCH_GEN_CLI: an unknown option of every command,
# an unknown command (`redfox rnu`, `redfox tpch rn`) and an unknown --set
# setting name the close one ("; did you mean '--device'?", tools/suggest.c:
# a swap, an insertion, a deletion or a substitution each count one; at
# most a third of the typed name apart), only when one is close, and only
# one the command takes (dump takes no --device; run's --set names and
# switches count). Exit 2 each time, the message on one line with the
# pointer to --help. Before, every one said "unknown ..." alone.
set -u
r=$1
gen=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
err=${TMPDIR:-/tmp}/rf_suggest.$$
trap 'rm -f "$err"' EXIT
# expect WANT LINE command...: exit 2 and the first line of stderr is LINE
expect() {
    line=$1
    shift
    "$@" >/dev/null 2>"$err"
    rc=$?
    [ $rc -eq 2 ] || fail "$*: exit $rc, expected 2"
    [ "$(head -n 1 "$err")" = "$line" ] || { fail "$*: not '$line'"; cat "$err"; }
}
expect "redfox run: unknown option '--devcie'; did you mean '--device'?" "$r" run x.logic --devcie gpu
expect "redfox run: unknown option '--devcie=gpu'; did you mean '--device'?" "$r" run x.logic --devcie=gpu
expect "redfox run: unknown option '--thredas'; did you mean '--threads'?" "$r" run x.logic --thredas 2
expect "redfox run: unknown option '--no-fsue'; did you mean '--no-fuse'?" "$r" run x.logic --no-fsue
expect "redfox run: unknown option '--no-cahce'; did you mean '--no-cache'?" "$r" run x.logic --no-cahce
expect "redfox run: unknown option '--hepl'; did you mean '--help'?" "$r" run --hepl
expect "redfox run: unknown option '--frobnicate'" "$r" run x.logic --frobnicate
expect "redfox run: unknown option '-x'" "$r" run x.logic -x
expect "redfox compile: unknown option '--no-lfjt'; did you mean '--no-lftj'?" "$r" compile x.logic --no-lfjt
expect "redfox exec: unknown option '--incremntal'; did you mean '--incremental'?" "$r" exec db x.logic --incremntal
expect "redfox import: unknown option '--thread'; did you mean '--threads'?" "$r" import x.logic --thread 2 --out db
expect "redfox dump: unknown option '--ats'; did you mean '--ast'?" "$r" dump --ats x.logic
# dump's help mentions `redfox run ... --device gpu`, which dump does not take
expect "redfox dump: unknown option '--devic'" "$r" dump --plan x.logic --devic gpu
expect "redfox hold: unknown option '--second'; did you mean '--seconds'?" "$r" hold --second 1
expect "redfox tpch run: unknown option '--dta'; did you mean '--data'?" "$r" tpch run --dta x
expect "redfox tpch bench: unknown option '--qeuries'; did you mean '--queries'?" "$r" tpch bench --data x --qeuries 1
expect "redfox tpch gen: unknown option '--sff'; did you mean '--sf'?" "$r" tpch gen --sff 1 --out x
expect "redfox tpch gen: unknown option '--sff'; did you mean '--sf'?" "$gen" --sff 1 --out x
# commands
expect "redfox: unknown command 'rnu'; did you mean 'run'?" "$r" rnu x.logic
expect "redfox: unknown command 'exce'; did you mean 'exec'?" "$r" exce db x.logic
expect "redfox: unknown command 'frobnicate'" "$r" frobnicate
expect "redfox tpch: unknown command 'rn'; did you mean 'run'?" "$r" tpch rn
expect "redfox tpch: unknown command 'bnech'; did you mean 'bench'?" "$r" tpch bnech
expect "redfox tpch: unknown command 'frobnicate'" "$r" tpch frobnicate
# settings
expect "redfox run: --set: unknown setting 'gpu_pool_md'; did you mean 'gpu_pool_mb'?" "$r" run x.logic --set gpu_pool_md=3
expect "redfox exec: --set: unknown setting 'hugepage'; did you mean 'hugepages'?" "$r" exec db x.logic --set hugepage=off
expect "redfox run: --set: unknown setting 'frobnicate'" "$r" run x.logic --set frobnicate=1
[ $fails -eq 0 ] && echo PASS
[ $fails -eq 0 ]
