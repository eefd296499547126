/*
** tools/tools.h: the subcommands of the `redfox` command and the small
** helpers they share. Only tools/ prints and exits; every subcommand returns
** its exit status: 0 success, 1 an error in the user's program or data,
** 2 bad usage, 3 internal error.
*/
#ifndef RF_TOOLS_H
#define RF_TOOLS_H

#include "rf_common.h"

struct rf_rt_options;

enum { RF_EXIT_OK = 0, RF_EXIT_USER = 1, RF_EXIT_USAGE = 2, RF_EXIT_INTERNAL = 3 };

int rf_tool_compile(int argc, char **argv);
int rf_tool_run(int argc, char **argv);
/* `redfox run --gpus N` outside mpirun: runs argv (run's own, argv[0] "run")
** again as N ranks under mpirun (tools/run_ranks.c). Returns only on failure. */
/* cmd ("run" or "tpch run") started again as N ranks under mpirun with
** argv[1..]: returns only when mpirun cannot be run (a message printed). */
int rf_tool_run_ranks(const char *cmd, int argc, char **argv, int64_t n);
/* 1 where redfox itself set CUDA_DEVICE_MAX_CONNECTIONS=1 at its start (not
** the user): the ranks `--gpus N` starts get the environment as the user gave it */
extern int rf_tool_gpu_queues_set;
/* --gpus N's bound on the ranks it starts: this many per GPU of the host
** (several ranks share a GPU, rank r on GPU r mod the count). */
#define RF_TOOL_RANKS_PER_GPU 8
/* rf_world_mpi (include/redfox.h) under mpirun, with the ranks' time limit
** (rank_timeout_s among sets, "NAME=VALUE" each, else its default) on
** MPI's own start: past it, the rank names itself on stderr and the process
** ends with status 1 (tools/world_start.c). */
struct rf_world;
int rf_tool_world_start(int *argc, char ***argv, const char *const *sets, int nsets, struct rf_world **world);
int rf_tool_import(int argc, char **argv);
int rf_tool_exec(int argc, char **argv);
int rf_tool_dump(int argc, char **argv);
int rf_tool_hold(int argc, char **argv);
int rf_tool_tpch(int argc, char **argv);
int rf_tool_tpch_gen(int argc, char **argv);
int rf_tool_tpch_run(int argc, char **argv);
int rf_tool_tpch_bench(int argc, char **argv);

/* A process that ends right after its work (`redfox run`, `tpch run`) need
** not free what it built nor close the device: rf_tool_exit_now flushes
** stdout and stderr and ends the process with status rc at once (_exit),
** leaving the teardown to the system. rf_tool_exits_early says whether it
** does: not in sanitizer builds, which free everything so that leak checks
** keep working (there rf_tool_exit_now returns rc). A single process that
** started the CUDA driver (not the emulator, not one of several ranks,
** whose launcher waits for every process it started) leaves the driver's
** teardown to a child (rf_tool_detach_teardown), so it ends when its
** outputs are written. */
int rf_tool_exits_early(void);
int rf_tool_exit_now(int rc, int64_t nranks);
/* Forks a child that closes every descriptor whose file's path does not
** begin with keep ("/dev/nvidia": the driver's), waits for this process to
** be gone, and exits: the last close of the kept files, and the driver's
** freeing that comes with it, happen in the child (tools/exit_detach.c).
** Returns in the parent at once; nothing happens if fork fails. */
void rf_tool_detach_teardown(const char *keep);
/* Prints diagnostics to stderr and maps a status to an exit code. */
int rf_tool_finish(rf_status st, rf_diags *d);
int rf_tool_exit_code(rf_status st);
/* A library call's outcome (include/redfox.h) as a command reports it: its
** diagnostics printed to stderr (when print) as rf_tool_finish prints the
** stages' own, the exit code of its REDFOX_* code (tools/api_report.c). */
struct rf_diagnostic;
struct rf_program;
struct rf_database;
struct rf_trace;
typedef const struct rf_diagnostic *(*rf_tool_diag_at_fn)(const void *obj, int64_t i);
int rf_tool_finish_api(int code, const void *obj, int64_t n, rf_tool_diag_at_fn at, int print);
int rf_tool_finish_program(int code, const struct rf_program *p, int print);
int rf_tool_finish_database(int code, const struct rf_database *db, int print);
/* The same, leaving out the warnings seen holds (rf_tool_print_new_warnings'
** list: --repeat's earlier runs printed them). */
int rf_tool_finish_database_seen(int code, const struct rf_database *db, int print, const char *seen);
/* 1 when this rank prints a failed run's messages (several ranks): rank 0,
** and the rank whose error stopped them all (runtime/dist), not every rank
** that error merely stopped (each said "the run failed" once more); also
** every rank when no rank's error stopped the run (a timeout: each names
** itself). 1 for a process alone. */
int rf_tool_run_reports(int rank);
int rf_tool_finish_trace(int code, const struct rf_trace *t, int print);
/* The lines of res's profile that pick accepts (a line without its end,
** len bytes), each on stderr after prefix (tools/api_report.c). */
struct rf_result;
/* --repeat N: the warnings among db's messages of a run before the last
** (the library keeps only the last call's), printed now, each text once
** (*seen: those printed so far, owned; NULL at first). A warning of the
** first run only (a damaged placement model, written anew by it) was lost. */
void rf_tool_print_new_warnings(const struct rf_database *db, char **seen);
void rf_tool_profile_lines(const struct rf_result *res, const char *prefix, int (*pick)(const char *line, size_t len));
/* For rf_tool_profile_lines: the load's lines, what was read and copied
** (the phases, the GPU's input cache, each rank's read and copies): one
** run's of several (--repeat --profile). */
int rf_tool_pick_load(const char *line, size_t len);
/* "redfox CMD: message" on stderr, and the hint to use --help; returns 2. */
int rf_tool_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Flushes standard output; 1 when everything printed on it reached it, else
** 0 after "redfox CMD: cannot write the output: REASON" on stderr (a full
** disk, a closed pipe: exit 1, never a silent one). */
int rf_tool_stdout_ok(const char *cmd);
/* Matches --name VALUE and --name=VALUE; advances *i. Returns 1 when matched,
** -1 when the value is missing or empty, or when the option was given before
** with another value (a usage error naming both was printed: a
** single-valued option given twice is taken once, never the last winning;
** the same value twice is accepted). */
int rf_tool_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value);
/* The same for an option that is a list by design (--set): each given
** value is the caller's to keep. */
int rf_tool_opt_list_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value);
/* rf_tool_opt_value for an option that names a file or folder to write
** (-o, --out, --trace, --json): "-" is refused (-1, a usage error), not
** taken as a name. Outputs are written aside and renamed into place, which
** standard output cannot be; a file of that name is ./-. */
int rf_tool_opt_out(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value);
/* Where stderr is a terminal, o reports a long fixpoint and a long load of
** an input file there, as one line redrawn in place (tools/progress.c). */
void rf_tool_show_progress(struct rf_rt_options *o);
/* rf_run_options.progress for a terminal: the same line from the library's
** record (redfox.h's rf_progress); user is unused. */
struct rf_progress;
void rf_tool_draw_progress(void *user, const struct rf_progress *p);
/* That line: text fitted to the terminal, drawn over the last; cleared. */
void rf_tool_progress_line(const char *text);
void rf_tool_progress_clear(void);
/* 1 when writing the output path out would replace the input file in: out
** is there as a regular file, and it is in (the same device and inode: any
** spelling of the path, ./x, dir/../x, a hard link). A command refuses such an
** output (exit 2, naming its option) instead of destroying its input with
** exit 0. An output that is not there yet names no input (a file that was
** read is there); a device, a FIFO or "-" is never replaced by a write. */
int rf_tool_same_file(const char *out, const char *in);
/* tools/suggest.c: "did you mean". The optimal string alignment distance
** of two names (an insertion, deletion, substitution or swap of neighbours
** each one). */
int64_t rf_tool_name_distance(const char *a, size_t na, const char *b, size_t nb);
/* The name of names[0, n) closest to word[0, len) where it is close (at
** most a third of word's length apart, leading dashes not counted; at
** least 1, at most 3; the first of equals), else NULL; NULL too where word
** is one of them. */
const char *rf_tool_suggest(const char *word, size_t len, const char *const *names, int64_t n);
/* The usage error "unknown option 'ARG'", with "; did you mean '--NAME'?"
** where one of the options usage names (its synopsis, its "  --NAME"
** lines, --help) is close to ARG (before any '='); returns 2. */
int rf_tool_unknown_option(const char *cmd, const char *arg, const char *usage);
/* --threads: the most any command takes (rf_run_options' and
** rf_exec_options' bound too); the count above which, where it is also over
** four times the online CPUs, a note says that they take turns. */
#define RF_TOOL_MAX_THREADS 1024
#define RF_TOOL_THREADS_NOTE_MIN 64
/* --threads S of command cmd into *threads: 1 when it is a number from 1
** to RF_TOOL_MAX_THREADS (a note on stderr when it is many more than the
** CPUs), else 0 after the usage error naming the bound. */
int rf_tool_threads(const char *cmd, const char *s, int *threads);
/* 1 when s is a whole decimal number in [lo, hi] (digits, a leading minus
** at most: no blanks, no plus), stored in *out. */
int rf_tool_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);

#endif
