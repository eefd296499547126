/*
** tools/cmd_exec.c: `redfox exec`: one transaction over a redfox database.
**
** Owns: the command line: its options, messages and printing. The
** transaction itself runs through the library (include/redfox.h: rf_open,
** rf_compile_buffers_v2, rf_batch_*, rf_exec, rf_result_write,
** rf_result_exec_profile), as any application would: the program compiled,
** the batches applied, the derived predicates maintained and the new state
** committed by rf_exec (txn/ underneath), then the outputs printed as
** `redfox run` prints them; with --each, the first transaction's file read
** ahead (rf_batch_read_ahead) while the program compiles and each later
** one's read and parsed ahead (rf_batch_parse_ahead) while the transaction
** before it runs, and each commit but the last left ending on a thread
** (async_commit) while the next transaction runs, its outputs printed once
** it ended (rf_exec_wait, or the next rf_exec). Only reading the program
** files (tools/pipeline.c: "-", pipes) and checking the options are the
** command's own.
*/
#include "pipeline.h"
#include "redfox.h"
#include "rf_file.h"
#include "tools.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: redfox exec DB PROG.logic... [--batch FILE]... [--each] [--init]\n"
    "                   [--recompute|--incremental] [--device auto|cpu|gpu]\n"
    "                   [--threads N] [--format table|csv|tbl] [--profile]\n"
    "                   [--profile-kernels] [--show-programs] [--set NAME=VALUE]\n"
    "                   [--gpu-memory N] [--cache-dir DIR | --no-cache]\n"
    "\n"
    "Runs one transaction over the redfox database DB (`redfox import`): the\n"
    "transaction files' inserts and deletes are applied to the program's base\n"
    "predicates (those with lang:input), in order, all or none; the program's\n"
    "derived predicates are kept in DB, brought up to date incrementally; then\n"
    "the program's outputs are printed as `redfox run` prints them. The first\n"
    "exec of a program on DB computes and stores its derived predicates.\n"
    "A transaction file holds one update a line (// comments, blank lines):\n"
    "  +edge(1, 2).          insert a fact\n"
    "  -edge(3, 4).          delete a fact\n"
    "  +price[\"apple\"] = 1.5.  a functional predicate's form\n"
    "Strings in double quotes (\\\" \\\\ \\n \\t), other values as in input files.\n"
    "A fact given twice, or deleting one that is not there, changes nothing; an\n"
    "insert whose key (lang:input:key, or a functional predicate's keys) another\n"
    "row holds aborts the transaction (delete that row first, earlier in the batch).\n"
    "\n"
    "options:\n"
    "  --batch FILE         a transaction file (repeatable: applied in order, all\n"
    "                       of them one transaction); '-' reads one from\n"
    "                       standard input\n"
    "  --each               each --batch is its own transaction instead: applied\n"
    "                       and committed one after another, in this one process\n"
    "                       (the program compiled and the GPU started once; each\n"
    "                       starts from the relations the one before committed,\n"
    "                       kept in memory and on the GPU); the outputs after each,\n"
    "                       under a line `-- transaction K of N: FILE`. A failing\n"
    "                       one stops there: those before it stay committed, the\n"
    "                       error names it. Each batch file (a regular file: not\n"
    "                       a FIFO or -) is read ahead while the transaction\n"
    "                       before it runs, and parsed there (its errors said\n"
    "                       when its transaction is reached), and read again\n"
    "                       if it changed since;\n"
    "                       a copy-on-write commit's syncs, manifest and folder\n"
    "                       exchange end on a thread while the next transaction\n"
    "                       runs (which waits for them before its own commit;\n"
    "                       where they fail, it is not applied either), and each\n"
    "                       transaction's outputs print once it is committed\n"
    "  --init               recompute and store every derived predicate (the\n"
    "                       stored ones are not read)\n"
    "  --recompute          recompute the derived predicates from scratch instead\n"
    "                       of incrementally (to compare)\n"
    "  --incremental        maintain them incrementally whatever the batch's size\n"
    "                       (by default a batch that changes more than an eighth\n"
    "                       of the base predicates' stored rows recomputes\n"
    "                       aggregates and other rules kept by diffs: cheaper;\n"
    "                       not with --init or --recompute); a program that\n"
    "                       cannot be maintained incrementally is recomputed,\n"
    "                       and a note says why\n"
    "  --device D           auto (default), cpu or gpu: where the program runs\n"
    "  --threads N          CPU threads, 1 to 1024 (default: all cores; over four\n"
    "                       times the cores and 64: a note, they take turns)\n"
    "  --format F           table (default), csv or tbl, as `redfox run`\n"
    "  --profile            how the derived predicates were maintained and where\n"
    "                       the time went, on stderr\n"
    "  --profile-kernels    also each run's kernels, as `redfox run --profile`\n"
    "  --show-programs      print the programs exec generates (the delta rules,\n"
    "                       DRed's, the diffs, the outputs') on stderr\n"
    "  --set NAME=VALUE     a tuning setting (see `redfox run --help`)\n"
    "  --gpu-memory N       cap the GPU memory each run uses (bytes, K/M/G/T;\n"
    "                       the same as --set gpu_memory=N)\n"
    "  --cache-dir DIR      where the GPU's compiled code is cached and --device\n"
    "                       auto's placement model kept (default $XDG_CACHE_HOME/\n"
    "                       redfox, else ~/.cache/redfox); --no-cache: neither\n"
    "  -h, --help           this text\n"
    "\n"
    "A SIGINT, SIGTERM or SIGHUP during a commit lets it end (the transaction\n"
    "after it, with --each, stops before its own commit), says on stderr which\n"
    "transactions are committed, and ends exec by the signal (status 130, 143,\n"
    "129); one outside a commit ends it at once. No folder is left beside DB.\n";

/* The generated programs and each run's kernels (--show-programs,
** --profile-kernels), on stderr as they are made. */
static int log_stderr(void *user, const void *bytes, int64_t n)
{
    (void)user;
    return fwrite(bytes, 1, (size_t)n, stderr) == (size_t)n ? 0 : 1;
}

/* --each: transaction k's batch, its file read ahead on a thread of the
** batch's own (not standard input: read in order, when its turn comes;
** rf_batch_read_ahead opens no FIFO), and parsed there for p (NULL: the
** first's, read while p compiles) on threads threads. NULL: out of memory. */
static rf_batch *each_batch(const char *path, const rf_program *p, int threads)
{
    rf_batch *b = rf_batch_new();
    if (b && rf_batch_add_file(b, path)) {
        rf_batch_free(b);
        return NULL;
    }
    /* (only an overlap: where it cannot start, the transaction reads the file) */
    if (b && strcmp(path, "/dev/stdin")) (void)(p ? rf_batch_parse_ahead(b, p, threads) : rf_batch_read_ahead(b));
    return b;
}

/* *gone: the reader of standard output went away (EPIPE, where SIGPIPE is
** ignored: --each), said by nothing here (the caller ends as by SIGPIPE). */
static int print_outputs(const rf_result *res, int fmt, int *gone)
{
    int32_t n = rf_result_count(res);
    for (int32_t i = 0; i < n; i++) {
        int64_t rows = rf_result_rows(res, i);
        if (n > 1 || fmt == REDFOX_FORMAT_TABLE)
            printf("%s%s (%lld row%s)\n", i ? "\n" : "", rf_result_name(res, i), (long long)rows, rows == 1 ? "" : "s");
        int rc = rf_result_write(res, i, fmt, stdout);
        if (rc) {
            *gone = rc == REDFOX_IO && errno == EPIPE;
            if (!*gone)
                fprintf(stderr, "redfox exec: cannot write the output: %s\n",
                        rc == REDFOX_IO ? strerror(errno) : rc == REDFOX_NOMEM ? "out of memory" : "internal error");
            return rc == REDFOX_IO || rc == REDFOX_NOMEM ? RF_EXIT_USER : RF_EXIT_INTERNAL;
        }
    }
    if (fflush(stdout) != 0) {
        *gone = errno == EPIPE;
        if (!*gone) fprintf(stderr, "redfox exec: cannot write the output: %s\n", strerror(errno));
        return RF_EXIT_USER;
    }
    return RF_EXIT_OK;
}

/* Transaction k's profile and outputs (k < 0: the one of a plain exec),
** once committed. */
static int print_transaction(const rf_result *res, int32_t k, int32_t ntx, const char *const *batches, int profile,
                             int fmt, int *gone)
{
    if (k >= 0) {
        printf("%s-- transaction %d of %d: %s\n", k ? "\n" : "", (int)k + 1, (int)ntx, batches[k]);
        if (profile) fprintf(stderr, "exec: transaction %d of %d: %s\n", (int)k + 1, (int)ntx, batches[k]);
    }
    const char *prof = rf_result_exec_profile(res);
    if (prof) fputs(prof, stderr);
    return print_outputs(res, fmt, gone);
}

int rf_tool_exec(int argc, char **argv)
{
    const char *progs[256], *batches[4096], *sets[RF_TOOL_MAX_SETS];
    int32_t nprogs = 0, nbatches = 0;
    int nsets = 0;
    const char *db_dir = NULL, *device = "auto", *format = NULL, *threads = NULL, *batch = NULL;
    int profile = 0, init = 0, force_recompute = 0, force_incremental = 0, kernels = 0, show = 0, each = 0;
    rf_rt_tuning tune; /* the settings checked here as --set gives them, applied by rf_exec */
    rf_rt_tuning_init(&tune);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
        if (!strcmp(a, "--profile-kernels") || !strcmp(a, "--show-programs")) {
            kernels |= a[2] == 'p';
            show |= a[2] == 's';
            continue;
        }
        if (!strcmp(a, "--incremental") || !strcmp(a, "--each")) {
            force_incremental |= a[2] == 'i';
            each |= a[2] == 'e';
            continue;
        }
        if (!strcmp(a, "--profile") || !strcmp(a, "--init") || !strcmp(a, "--recompute")) {
            profile |= a[2] == 'p';
            init |= a[2] == 'i';
            force_recompute |= a[2] == 'r';
            continue;
        }
        if ((m = rf_tool_opt_set("exec", argc, argv, &i, &tune, sets, &nsets)) ||
            (m = rf_tool_opt_value("exec", argc, argv, &i, "--device", &device)) ||
            (m = rf_tool_opt_value("exec", argc, argv, &i, "--format", &format)) ||
            (m = rf_tool_opt_value("exec", argc, argv, &i, "--threads", &threads))) {
            if (m < 0) return RF_EXIT_USAGE;
        } else if ((m = rf_tool_opt_list_value("exec", argc, argv, &i, "--batch", &batch))) {
            if (m < 0) return RF_EXIT_USAGE;
            if (nbatches == 4096) return rf_tool_usage_error("exec", "too many batches (at most 4096)");
            batches[nbatches++] = batch;
        } else if (a[0] == '-' && a[1]) {
            return rf_tool_unknown_option("exec", a, usage);
        } else if (!db_dir) {
            db_dir = a;
        } else if (nprogs == 256) {
            return rf_tool_usage_error("exec", "too many files (at most 256)");
        } else {
            progs[nprogs++] = a;
        }
    }
    if (!db_dir) return rf_tool_usage_error("exec", "no database given");
    if (!nprogs) return rf_tool_usage_error("exec", "no program given");
    /* --batch -: the transaction from standard input, read once */
    int batch_stdin = 0, prog_stdin = 0;
    for (int32_t k = 0; k < nbatches; k++)
        if (!strcmp(batches[k], "-")) {
            batch_stdin++;
            batches[k] = "/dev/stdin";
        }
    for (int32_t k = 0; k < nprogs; k++) prog_stdin |= !strcmp(progs[k], "-");
    if (batch_stdin > 1) return rf_tool_usage_error("exec", "--batch - is given twice: standard input is read once");
    if (batch_stdin && prog_stdin)
        return rf_tool_usage_error("exec", "the program and --batch - cannot both come from standard input");
    rf_rt_options ro; /* the device, threads and format checked as `redfox run` checks them */
    memset(&ro, 0, sizeof ro);
    rf_rt_format rfmt;
    if (!format) format = "table";
    if (!rf_tool_run_options("exec", device, threads, format, &ro, &rfmt)) return RF_EXIT_USAGE;
    rf_tool_apply_tuning(&tune); /* huge pages: process-wide, the command's to set */
    int fmt = rfmt == RF_RT_FORMAT_CSV ? REDFOX_FORMAT_CSV : rfmt == RF_RT_FORMAT_TBL ? REDFOX_FORMAT_TBL : REDFOX_FORMAT_TABLE;
    rf_exec_options o;
    rf_exec_options_init(&o, sizeof o);
    o.device = ro.device == RF_RT_DEVICE_CPU ? REDFOX_DEVICE_CPU : ro.device == RF_RT_DEVICE_GPU ? REDFOX_DEVICE_GPU : REDFOX_DEVICE_AUTO;
    o.threads = ro.threads;
    o.init = init;
    o.recompute = force_recompute;
    o.incremental = force_incremental;
    if (force_recompute && force_incremental)
        return rf_tool_usage_error("exec", "--recompute and --incremental ask for opposite things");
    /* (--init recomputes every derived predicate: nothing is maintained) */
    if (init && force_incremental)
        return rf_tool_usage_error("exec", "--init and --incremental ask for opposite things");
    o.profile = profile;
    o.profile_kernels = kernels;
    o.show_programs = show;
    o.log = log_stderr;
    o.cache_dir = tune.cache_dir;
    o.start = rf_trace_clock();
    /* the library takes the cap only among the settings (rf_exec_options
    ** has no field of its own), and --gpu-memory N is not one of `sets`:
    ** the cap that the options left, last, so that it is the one in force */
    char *settings = rf_tool_settings_text(sets, nsets);
    if (settings && tune.gpu_memory > 0) {
        size_t n = strlen(settings);
        char *with = realloc(settings, n + 48);
        if (!with) free(settings);
        else snprintf(with + n, 48, "%sgpu_memory=%lld", n ? "," : "", (long long)tune.gpu_memory);
        settings = with;
    }
    if (!settings) return rf_tool_finish_api(REDFOX_NOMEM, NULL, 0, NULL, 1);
    o.settings = settings;
    /* the program: its files read here ("-" and pipes), compiled by the library */
    rf_diags d;
    rf_diags_init(&d);
    rf_arena arena;
    rf_arena_init(&arena);
    rf_tool_sources src;
    memset(&src, 0, sizeof src);
    rf_program *p = NULL;
    rf_database *db = NULL;
    rf_batch *b = NULL, *next = NULL; /* --each: the next transaction's, read ahead */
    rf_result *res = NULL;
    int rc = RF_EXIT_OK;
    /* one transaction of every batch, or (--each) one per batch, in order;
    ** the first's file read while the program compiles */
    int multi = each && nbatches > 0;
    int32_t ntx = multi ? nbatches : 1;
    if (multi && !(next = each_batch(batches[0], NULL, 0))) rc = rf_tool_finish_api(REDFOX_NOMEM, NULL, 0, NULL, 1);
    rf_status st = rc ? RF_OK : rf_tool_read_sources(progs, nprogs, &arena, &src, &d);
    for (int32_t i = 0; !st && i < src.n; i++)
        if (rf_tool_source_is_rfx(&src, i)) {
            rf_error(&d, rf_mkloc(src.names[i], 0, 0),
                     "redfox exec takes the program's LogiQL source (it derives the delta rules from its rules), not a .rfx file");
            st = RF_EUSAGE;
        }
    if (st) rc = rf_tool_finish(st, &d);
    if (!rc) {
        int code = rf_compile_buffers_v2(src.names, src.texts, src.lens, src.n, NULL, &p);
        rc = rf_tool_finish_program(code, p, 1);
    }
    /* a folder that is missing or not a database: rf_exec names it; a
    ** database that a killed commit left aside, put back: its note */
    int ocode = rc ? REDFOX_OK : rf_open(db_dir, &db);
    if (ocode == REDFOX_NOMEM) rc = rf_tool_finish_api(REDFOX_NOMEM, NULL, 0, NULL, 1);
    else if (!rc && !ocode && rf_database_diag_count(db)) rc = rf_tool_finish_database(REDFOX_OK, db, 1);
    /* --each: each commit but the last ends on a thread while the next
    ** transaction runs (async_commit); a transaction's outputs are printed
    ** once its commit ended: after the next one's rf_exec, which waits for
    ** it (or rf_exec_wait) */
    rf_result *prev = NULL; /* transaction k-1's, its commit ending */
    /* --each: a closed standard output (| head) is a write error, not a
    ** SIGPIPE that kills the process while a commit ends on its thread
    ** (it would leave that commit's old folder beside DB): the commit under
    ** way ends first, then the process ends as by SIGPIPE */
    int32_t unprinted = -1, committed = 0; /* the transaction whose outputs could not be written, those committed */
    int gone = 0;
    if (multi) signal(SIGPIPE, SIG_IGN);
    for (int32_t k = 0; !rc && k < ntx; k++) {
        /* --each: this one's batch was read ahead; the next one's is read
        ** and parsed while this one runs */
        b = multi ? next : rf_batch_new();
        next = NULL;
        if (!b || (multi && k + 1 < ntx && !(next = each_batch(batches[k + 1], p, o.threads))))
            rc = rf_tool_finish_api(REDFOX_NOMEM, NULL, 0, NULL, 1);
        for (int32_t i = 0; !rc && !multi && i < nbatches; i++)
            if (rf_batch_add_file(b, batches[i])) rc = rf_tool_finish_api(REDFOX_NOMEM, NULL, 0, NULL, 1);
        if (!rc && k) o.start = rf_trace_clock(); /* the first's profile counts the program's compile */
        o.async_commit = multi && k + 1 < ntx;
        int code = REDFOX_OK;
        if (!rc) code = rf_exec(db, p, b, &o, &res);
        /* transaction k-1: committed, unless its commit's end failed (then
        ** this one failed for it, applying nothing) */
        if (!rc && prev && code && rf_exec_wait(db) != REDFOX_OK) {
            if (k == 1)
                fprintf(stderr, "redfox exec: transaction 1 of %d (%s) failed: its commit did not complete; none is "
                                "committed, and those after it are not applied\n", (int)ntx, batches[0]);
            else
                fprintf(stderr, "redfox exec: transaction %d of %d (%s) failed: its commit did not complete; the %d "
                                "before it %s committed, and those after it are not applied\n",
                        (int)k, (int)ntx, batches[k - 1], (int)k - 1, k == 2 ? "is" : "are");
            rc = rf_tool_finish_database(code, db, 1);
            break;
        }
        if (!rc && prev && (rc = print_transaction(prev, k - 1, ntx, batches, profile, fmt, &gone)) != 0) {
            unprinted = k - 1;
            committed = code ? k : k + 1; /* (this one's commit, if any, ends below) */
        }
        rf_result_free(prev);
        prev = NULL;
        /* a SIGINT, SIGTERM or SIGHUP came while a commit was under way
        ** (held: rf_file_hold_signals): that commit ended, this transaction
        ** stopped before its own, not applied; the process ends by it below */
        int sig = rf_file_signal_held();
        if (!rc && code && multi && sig) {
            fprintf(stderr, "redfox exec: transaction %d of %d (%s) stopped by %s before its commit; ", (int)k + 1,
                    (int)ntx, batches[k], rf_file_signal_name(sig));
            if (k == 0) fputs("none is committed\n", stderr);
            else if (k == 1) fputs("the one before it is committed, and those after it are not applied\n", stderr);
            else fprintf(stderr, "the %d before it are committed, and those after it are not applied\n", (int)k);
        } else if (!rc && code && multi && k == 0)
            fprintf(stderr, "redfox exec: transaction 1 of %d (%s) failed; none is committed\n", (int)ntx, batches[k]);
        else if (!rc && code && multi && k == 1)
            fprintf(stderr, "redfox exec: transaction 2 of %d (%s) failed; the one before it is committed\n", (int)ntx,
                    batches[k]);
        else if (!rc && code && multi && k > 1)
            fprintf(stderr, "redfox exec: transaction %d of %d (%s) failed; the %d before it are committed\n",
                    (int)k + 1, (int)ntx, batches[k], (int)k);
        if (!rc) rc = rf_tool_finish_database(code, db, 1); /* (its errors, or its notes) */
        /* ... a signal held during this one's commit: that commit's end
        ** (on a thread: waited for now), its outputs, and no other */
        if (!rc && sig && o.async_commit && rf_exec_wait(db) != REDFOX_OK) {
            fprintf(stderr, "redfox exec: transaction %d of %d (%s) failed: its commit did not complete; ", (int)k + 1,
                    (int)ntx, batches[k]);
            if (k == 0) fputs("none is committed\n", stderr);
            else if (k == 1) fputs("the one before it is committed\n", stderr);
            else fprintf(stderr, "the %d before it are committed\n", (int)k);
            rc = rf_tool_finish_database(REDFOX_ERROR, db, 1);
        } else if (!rc && o.async_commit && !sig) {
            prev = res; /* (printed once its commit ended) */
            res = NULL;
        } else if (!rc && (rc = print_transaction(res, multi ? k : -1, ntx, batches, profile, fmt, &gone)) != 0) {
            unprinted = k;
            committed = k + 1;
        }
        if (!rc && sig) {
            fflush(stdout);
            if (!multi) fprintf(stderr, "redfox exec: stopped by %s once its commit ended: the transaction is committed\n",
                                rf_file_signal_name(sig));
            else if (k + 1 == ntx)
                fprintf(stderr, "redfox exec: stopped by %s once transaction %d of %d (%s) was committed: all %d are "
                                "committed\n", rf_file_signal_name(sig), (int)k + 1, (int)ntx, batches[k], (int)ntx);
            else if (k == 0)
                fprintf(stderr, "redfox exec: stopped by %s once transaction 1 of %d (%s) was committed: it is committed, "
                                "and those after it are not applied\n", rf_file_signal_name(sig), (int)ntx, batches[k]);
            else
                fprintf(stderr, "redfox exec: stopped by %s once transaction %d of %d (%s) was committed: the first %d "
                                "are committed, and those after them are not applied\n", rf_file_signal_name(sig),
                        (int)k + 1, (int)ntx, batches[k], (int)k + 1);
            rc = RF_EXIT_USER; /* (the process ends by the signal below) */
        }
        if (k + 1 < ntx) {
            rf_result_free(res);
            res = NULL;
            rf_batch_free(b);
            b = NULL;
        }
    }
    /* (a commit still ending: its end, before the process's) */
    if (multi && db && rf_exec_wait(db) != REDFOX_OK && unprinted >= 0) committed--;
    rf_result_free(prev);
    if (multi && unprinted >= 0) {
        fflush(stderr);
        if (gone) { /* (as a process killed by SIGPIPE ends, silently) */
            signal(SIGPIPE, SIG_DFL);
            raise(SIGPIPE);
        }
        fprintf(stderr, "redfox exec: the outputs of transaction %d of %d (%s) could not be written; ", (int)unprinted + 1,
                (int)ntx, batches[unprinted]);
        if (committed == ntx) fprintf(stderr, ntx == 1 ? "it is committed\n" : "all %d are committed\n", (int)ntx);
        else
            fprintf(stderr, "the first %d %s committed, and those after %s are not applied\n", (int)committed,
                    committed == 1 ? "is" : "are", committed == 1 ? "it" : "them");
    } else if (!multi && gone) {
        fprintf(stderr, "redfox exec: cannot write the output: %s\n", strerror(EPIPE));
    }
    /* a signal held while a commit ended: every commit under way has ended
    ** and what is committed is said; the process ends by it (as it would
    ** have at once outside a commit: status 128 + the signal in a shell) */
    if (rf_file_signal_held()) {
        fflush(stdout);
        fflush(stderr);
        rf_file_end_by_signal();
        return 128 + rf_file_signal_held(); /* (not reached: no hold is under way) */
    }
    /* committed (or refused) and printed: nothing left but freeing, and on
    ** the GPU the driver's teardown, which the process's end does at once */
    if (rf_tool_exits_early()) return rf_tool_exit_now(rc, 1);
    rf_result_free(res);
    rf_batch_free(b);
    rf_batch_free(next);
    rf_close(db);
    rf_program_free(p);
    free(settings);
    rf_tool_sources_free(&src);
    rf_diags_free(&d);
    rf_arena_free(&arena);
    return rc;
}
