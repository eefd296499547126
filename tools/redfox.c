/*
** tools/redfox.c: the `redfox` command: dispatch to subcommands, --help and
** --version.
*/
#include "rf_file.h"
#include "rf_rt_dist.h"
#include "rf_rt_gpu.h"
#include "tools.h"
#include "rf_sys.h"

#include <errno.h>
#include <stdlib.h>
#include <malloc.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *usage =
    "usage: redfox <command> [options]\n"
    "\n"
    "redfox compiles LogiQL (Datalog) programs to GPU code and runs them on an\n"
    "NVIDIA GPU, or on the CPU where there is none.\n"
    "\n"
    "commands:\n"
    "  compile PROG.logic [-o PROG.rfx]      check a program and compile it\n"
    "  run PROG.rfx|PROG.logic --data DIR    run a program on input files (or a database)\n"
    "  import PROG --data DIR --out DB       input files into a redfox database\n"
    "  exec DB PROG --batch FILE             a transaction: inserts and deletes applied to DB,\n"
    "                                        derived predicates maintained incrementally\n"
    "  dump --ast|--rules|--plan PROG.logic  print an intermediate form\n"
    "  tpch gen|run|bench ...                TPC-H data, the 22 queries, their timings\n"
    "  hold [--seconds N]                    keep the NVIDIA driver started for the redfox\n"
    "                                        processes that follow (a fresh GPU run's 0.1 s)\n"
    "\n"
    "options:\n"
    "  -h, --help       this text; `redfox <command> --help` for a command\n"
    "  --version        print the version\n"
    "\n"
    "An option that takes one value, given twice with different values\n"
    "(--device cpu --device gpu), is a usage error; --set and exec --batch\n"
    "are lists.\n"
    "\n"
    "exit status: 0 success, 1 error in the program or data, 2 bad usage,\n"
    "3 internal error\n"
    "\n"
    "The language: LANGUAGE.md, installed with README.md and the examples in\n"
    "share/doc/redfox (docs/ and examples/ of the source); `man redfox`.\n";

int rf_tool_exit_code(rf_status st)
{
    switch (st) {
    case RF_OK: return RF_EXIT_OK;
    case RF_EUSER:
    case RF_EIO:
    case RF_ENOMEM:
    case RF_EDEVMEM: return RF_EXIT_USER;
    case RF_EUSAGE: return RF_EXIT_USAGE;
    default: return RF_EXIT_INTERNAL;
    }
}

#if defined(__SANITIZE_ADDRESS__)
#define RF_FULL_CLEANUP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define RF_FULL_CLEANUP 1
#endif
#endif

int rf_tool_exits_early(void)
{
#ifdef RF_FULL_CLEANUP
    return 0;
#else
    return 1;
#endif
}

int rf_tool_exit_now(int rc, int64_t nranks)
{
    if (!rf_tool_exits_early()) return rc;
    /* the outputs' own writes checked their flush; what is left is lines of
    ** --profile and the like, flushed as exit() would */
    fflush(stdout);
    fflush(stderr);
    if (nranks <= 1 && rf_rt_gpu_started() && !rf_rt_gpu_emulated()) rf_tool_detach_teardown("/dev/nvidia");
    _exit(rc);
}

int rf_tool_finish(rf_status st, rf_diags *d)
{
    rf_diags_print(d, stderr);
    st = rf_diags_status(d, st);
    if (st == RF_ENOMEM) fprintf(stderr, "redfox: error: out of memory\n");
    if (st == RF_EINTERNAL && !d->nerrors) fprintf(stderr, "redfox: internal error\n");
    return rf_tool_exit_code(st);
}

int rf_tool_stdout_ok(const char *cmd)
{
    errno = 0;
    int e = fflush(stdout) != 0 ? errno : 0;
    if (!e && !ferror(stdout)) return 1;
    /* an earlier flush failed (its bytes are gone) where this one had nothing left */
    fprintf(stderr, "redfox %s: cannot write the output: %s\n", cmd, e ? strerror(e) : "a write to it failed");
    return 0;
}

int rf_tool_same_file(const char *out, const char *in)
{
    struct stat so, si;
    if (!out || !in || !strcmp(in, "-")) return 0;
    if (stat(out, &so) != 0 || !S_ISREG(so.st_mode) || stat(in, &si) != 0) return 0;
    return so.st_dev == si.st_dev && so.st_ino == si.st_ino;
}

int rf_tool_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    /* digits, after a minus at most: strtoll also takes leading blanks and
    ** a plus (--gpus ' 2' ran 2 ranks), as rf_parse_decimal no longer does */
    if (!((s[0] >= '0' && s[0] <= '9') || (s[0] == '-' && s[1] >= '0' && s[1] <= '9'))) return 0;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

/* The process's memory policy. A query plan allocates and frees columns,
** index vectors and hash tables of hundreds of megabytes, one after another.
** glibc serves such blocks with mmap and returns them with munmap, so every
** kernel pays a page fault and the zeroing of each page on first touch, and
** every munmap interrupts the worker threads to flush their TLBs. Keeping
** freed memory in one heap lets the next kernel reuse pages already mapped
** (TPC-H q21 at SF 1, one thread: system time 2.1-2.4 -> 1.6 s, run 1.27 ->
** 1.12 s). Memory goes back to the system when the process ends. Malloc
** settings in GLIBC_TUNABLES take precedence. */
static void set_memory_policy(void)
{
#ifdef M_MMAP_MAX
    const char *t = getenv("GLIBC_TUNABLES");
    if (t && strstr(t, "malloc")) return;
    mallopt(M_MMAP_MAX, 0);              /* large blocks from the heap (mmap only as a backup) */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);  /* keep up to 1 GiB of free heap mapped */
    mallopt(M_ARENA_MAX, 1);             /* one heap, so that worker threads reuse it too */
#endif
}

/* The GPU context's hardware work queues (CUDA_DEVICE_MAX_CONNECTIONS,
** 8 by the driver's default): the context's creation builds each of them,
** and redfox issues all its work on one stream, so one is all it uses. On
** an H100 host the context took 133-208 ms with 8 and 52-80 ms with 1, a
** fresh q06 at SF 10 0.32-0.39 s against 0.22-0.26 s. Set here, while the
** process has one thread (the driver reads it at its start); the user's own
** value stands. Ranks keep the driver's default: NCCL's streams run beside
** ours there, and that has not been measured with one queue; so `--gpus N`,
** which starts its ranks from this process, takes the value back first
** (rf_tool_gpu_queues_set). */
int rf_tool_gpu_queues_set;

static void set_gpu_queues(void)
{
    if (rf_rt_dist_launched() || getenv("CUDA_DEVICE_MAX_CONNECTIONS")) return;
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "1", 1);
    rf_tool_gpu_queues_set = 1;
}

double rf_tool_start;

static int command(int argc, char **argv);

int main(int argc, char **argv)
{
    int rc = command(argc, argv);
    /* a usage error, which every rank of an mpirun finds alike before MPI
    ** starts: rank 0 says it and exits with it (mpirun's status); the
    ** others end quietly, since mpirun stops every rank as soon as one
    ** exits non-zero, which could end rank 0 before it said it */
    if (rc == RF_EXIT_USAGE && rf_rt_dist_launch_rank() != 0 && !rf_rt_dist_mpi_started()) return RF_EXIT_OK;
    /* a success whose text did not reach standard output (--help, --version
    ** into a full disk) is none; commands that print results check their own */
    if (rc == RF_EXIT_OK && !rf_tool_stdout_ok(argc > 1 ? argv[1] : "")) return RF_EXIT_USER;
    return rc;
}

static int command(int argc, char **argv)
{
    rf_tool_start = rf_now(); /* --profile's phases count from here */
    set_memory_policy();
    set_gpu_queues();
    rf_file_cleanup_on_signals(); /* no temporaries left behind by ^C or kill */
    if (argc < 2) {
        fputs(usage, stderr);
        return RF_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return RF_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("redfox %s\n", RF_VERSION_STRING);
        return RF_EXIT_OK;
    }
    int ranked = !strcmp(cmd, "run") || (!strcmp(cmd, "tpch") && argc > 2 && !strcmp(argv[2], "run"));
    if (!ranked && rf_rt_dist_launched()) {
        /* N copies of another command would each do all of it (and write
        ** the same files); said once, by rank 0 */
        if (rf_rt_dist_launch_rank() == 0)
            fprintf(stderr, "redfox %s: started by mpirun: only `redfox run` and `redfox tpch run` run on several "
                    "ranks\n", cmd);
        return RF_EXIT_USAGE;
    }
    if (!strcmp(cmd, "compile")) return rf_tool_compile(argc - 1, argv + 1);
    if (!strcmp(cmd, "run")) return rf_tool_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "import")) return rf_tool_import(argc - 1, argv + 1);
    if (!strcmp(cmd, "exec")) return rf_tool_exec(argc - 1, argv + 1);
    if (!strcmp(cmd, "dump")) return rf_tool_dump(argc - 1, argv + 1);
    if (!strcmp(cmd, "tpch")) return rf_tool_tpch(argc - 1, argv + 1);
    if (!strcmp(cmd, "hold")) return rf_tool_hold(argc - 1, argv + 1);
    static const char *const commands[] = {"compile", "run", "import", "exec", "dump", "tpch", "hold", "help"};
    const char *near = rf_tool_suggest(cmd, strlen(cmd), commands, sizeof commands / sizeof commands[0]);
    if (near) fprintf(stderr, "redfox: unknown command '%s'; did you mean '%s'?\n\n%s", cmd, near, usage);
    else fprintf(stderr, "redfox: unknown command '%s'\n\n%s", cmd, usage);
    return RF_EXIT_USAGE;
}
