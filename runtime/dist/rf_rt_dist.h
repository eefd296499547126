/*
** runtime/dist/rf_rt_dist.h: partitioned execution over MPI ranks (issue
** 22), the interface the CPU executor and the `redfox run` command use.
**
** Owns: the ranks of the process (rf_rt_dist_world: MPI started or not),
** one run's partitioned state (rf_rt_dist: where each variable's rows are,
** what moved, the per-rank profile) and the three operations the executor's
** hook calls: plan the moves before a kernel, move a relation, agree on a
** branch. The design and its limits: runtime/dist/README.md.
*/
#ifndef RF_RT_DIST_H
#define RF_RT_DIST_H

#include "rf_common.h"
#include "rf_harmony.h"
#include "rf_rt_data.h"
#include "rf_rt_xport.h"

/* ---- the ranks of this process (dist_comm.c; dist_comm_none.c without MPI) -- */

typedef struct rf_rt_dist_world rf_rt_dist_world;

/* 1 when this binary was built with MPI. */
int rf_rt_dist_have_mpi(void);
/* 1 when a launcher of several ranks (mpirun) started this process. */
int rf_rt_dist_launched(void);
/* This process's rank as the launcher says (before MPI starts: a command's
** usage errors, which every rank finds alike, are printed by rank 0
** only); 0 when no launcher of several ranks started it. */
int rf_rt_dist_launch_rank(void);
/* 1 once MPI was started in this process (running or ended). */
int rf_rt_dist_mpi_started(void);
/* Starts MPI when the process was launched by mpirun (one of several
** ranks); *w stays NULL for a plain process. Without MPI support, a launch
** by mpirun is an error that says so (RF_EUSAGE); so is MPI already started
** in this process, or ended (MPI starts once a process). */
rf_status rf_rt_dist_world_start(int *argc, char ***argv, rf_rt_dist_world **w, rf_diags *d);
int rf_rt_dist_world_rank(const rf_rt_dist_world *w); /* 0 for NULL */
int rf_rt_dist_world_size(const rf_rt_dist_world *w); /* 1 for NULL */
/* The ranks on this rank's host (they share its cores); 1 for NULL. */
int rf_rt_dist_world_local_size(const rf_rt_dist_world *w);
/* This rank's number among those on its host (0 for NULL): its GPU. */
int rf_rt_dist_world_local_rank(const rf_rt_dist_world *w);
/* Ends MPI: finalizes normally, or aborts every rank with exit_code when a
** collective timed out (the others may be stuck in it). Frees w. */
void rf_rt_dist_world_end(rf_rt_dist_world *w, int exit_code);

/* The rank whose error stopped this process's last run on several ranks
** (its messages are that rank's own; rank 0 names it), or -1 when none did
** (the run succeeded, failed on its own, or timed out waiting): a command
** prints a failed run's messages on rank 0 and on that rank only, not once
** more on every rank the failure merely stopped. A process has one world,
** so one last run; set by the votes that stop a run (dist_run.c). */
int rf_rt_dist_stopped_by(void);
void rf_rt_dist_set_stopped_by(int rank);

/* ---- collectives with a deadline (dist_comm.c) ------------------------- */

/* What every rank contributes to a sync: whether it failed, and eight
** numbers (a branch's "any rows", a count, profile figures). */
#define RF_RT_DIST_VOTE_N 16
typedef struct rf_rt_dist_vote {
    int64_t failed; /* 1: this rank stopped with an error */
    int64_t v[RF_RT_DIST_VOTE_N];
} rf_rt_dist_vote;

/* All ranks' votes (out: size entries, by rank). RF_EUSER with an error in
** d when the others did not answer within timeout_s (<= 0: no limit): the
** world is then marked broken (rf_rt_dist_world_end aborts). */
rf_status rf_rt_dist_allgather_votes(rf_rt_dist_world *w, double timeout_s, const char *what,
                                     const rf_rt_dist_vote *mine, rf_rt_dist_vote *out, rf_diags *d);
/* k numbers of every rank (all: size * k, by rank). The same deadline. */
/* The `what` of an application's barrier (rf_world_barrier): its timeout
** is the caller's, not the rank_timeout_s setting, and a timeout's message
** says so. */
#define RF_RT_DIST_BARRIER_WHAT "a barrier (rf_world_barrier)"
/* What a timeout's message says of its limit, after the limit. */
const char *rf_rt_dist_limit_hint(const char *what);
rf_status rf_rt_dist_allgather_i64(rf_rt_dist_world *w, double timeout_s, const char *what, const int64_t *mine,
                                   int k, int64_t *all, rf_diags *d);
/* Sends send[dst] bytes at sendbuf + sdispl[dst] to each rank and receives
** into a buffer allocated here (*recvbuf, recv[src] bytes from each, laid
** out by rank; the counts known already, from a vote that carried them).
** The same deadline. pieces: the vote saw a part or a rank's total of 2 GiB
** or more (MPI's counts are ints): then every rank sends and receives its
** parts point to point in pieces of 1 GiB instead of one collective. */
rf_status rf_rt_dist_alltoallv(rf_rt_dist_world *w, double timeout_s, const char *what, const char *sendbuf,
                               const int64_t *send, const int64_t *sdispl, char **recvbuf, const int64_t *recv,
                               int pieces, rf_diags *d);

/* The world is broken (a collective or an NCCL exchange timed out): the
** end aborts every rank. */
void rf_rt_dist_world_break(rf_rt_dist_world *w);
/* One int64 to and from every rank (send[j] for rank j; recv[j] from it). */
rf_status rf_rt_dist_alltoall_i64(rf_rt_dist_world *w, double timeout_s, const char *what, const int64_t *send,
                                  int64_t *recv, rf_diags *d);
/* n bytes of root's buf to every rank. */
rf_status rf_rt_dist_bcast(rf_rt_dist_world *w, double timeout_s, const char *what, void *buf, int n, int root,
                           rf_diags *d);
/* Point-to-point sends and receives of host memory (the emulator's device
** memory), every pair's in the same order on both sides, all waited for
** until the deadline. */
rf_status rf_rt_dist_sendrecv(rf_rt_dist_world *w, double timeout_s, const char *what, const rf_rt_xbuf *sends,
                              int nsend, const rf_rt_xbuf *recvs, int nrecv, rf_diags *d);

/* ---- rows to ranks, rows to bytes and back (dist_pack.c) ----------------- */

/* The rank that owns a row hashed by cols (a string by its code where the
** code is shared by every rank, rf_rt_dict_shared, else by its bytes, so
** that every rank agrees whatever its dictionary's other codes), on up
** to threads threads (the same ranks whatever their number). */
void rf_rt_dist_row_ranks(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *cols, int32_t ncols,
                          int nranks, int threads, int32_t *rank_of_row);
/* Packs the rows of r for each destination (dest[i] < 0: row i stays out;
** dest NULL: every row to every rank, packed once): *buf holds nranks parts,
** part j at displ[j] with size[j] bytes (for dest NULL all parts are one).
** A string column of a part whose codes are all shared goes as codes, else
** as bytes: *coded and *uncoded (either may be NULL) count those columns.
** On up to threads threads; the bytes are the same whatever their number. */
rf_status rf_rt_dist_pack(const rf_rt_rel *r, const rf_rt_dict *dict, const int32_t *dest, int nranks, int threads,
                          char **buf, int64_t *size, int64_t *displ, int64_t *coded, int64_t *uncoded);
/* Appends the rows of nparts packed parts (in order) to out (allocated here
** with r's column count and types), interning strings sent as bytes in
** dict on up to threads threads (the codes one thread would give; codes
** sent as codes are kept; *interned, unless NULL, grows by the strings
** sent as bytes). RF_EINTERNAL on a malformed part. */
rf_status rf_rt_dist_unpack(const char *buf, const int64_t *size, int nparts, int32_t ncols, const rf_type *types,
                            rf_rt_dict *dict, int threads, rf_rt_rel *out, int64_t *interned);

/* ---- where rows are: placements and the plan of moves (dist_place.c) ------ */

typedef enum rf_rt_place_kind {
    RF_RT_PLACE_EMPTY,   /* no rows on any rank */
    RF_RT_PLACE_ANY,     /* spread over the ranks, no known rule */
    RF_RT_PLACE_HASH,    /* row on rank hash(cols) */
    RF_RT_PLACE_ROOT,    /* all rows on rank 0 */
    RF_RT_PLACE_REPL     /* every rank holds all rows, in the same order */
} rf_rt_place_kind;

#define RF_RT_PLACE_MAXCOLS 16
typedef struct rf_rt_place {
    rf_rt_place_kind kind;
    int32_t ncols;                        /* HASH */
    int32_t cols[RF_RT_PLACE_MAXCOLS];
} rf_rt_place;

/* One move before a kernel: variable var's rows to placement to. cut (NULL:
** none): a sort with a limit whose input gathers on rank 0; each rank first
** keeps only its first cut->limit rows in that sort's order (rf_rt_dist_topk). */
typedef struct rf_rt_dist_move {
    int32_t var;
    rf_rt_place to;
    const rf_hir_kernel *cut;
} rf_rt_dist_move;

typedef struct rf_rt_dist rf_rt_dist;

/* ---- one partitioned run (dist_run.c) ---------------------------------- */

/* The steps of a rank's run that --profile times (rf_rt_rankstat's
** step_seconds): its kernels, then the host's work around the moves. */
typedef enum rf_rt_dist_step {
    RF_RT_DIST_STEP_KERNELS, /* the device's kernels (as run_kernel calls them) */
    RF_RT_DIST_STEP_PLAN,    /* planning the moves (and the fused spans ahead), votes excluded */
    RF_RT_DIST_STEP_VIEW,    /* a relation's copy to the host for a move through host memory */
    RF_RT_DIST_STEP_HASH,    /* each row's rank (rf_rt_dist_row_ranks) */
    RF_RT_DIST_STEP_PACK,    /* rows packed for their ranks */
    RF_RT_DIST_STEP_UNPACK,  /* rows received unpacked, strings received as bytes interned */
    RF_RT_DIST_STEP_LOAD,    /* the moved rows handed back to the device */
    RF_RT_DIST_STEP_CUT,     /* an ordered, limited output cut on each rank (dist_topk.c) */
    RF_RT_DIST_STEP_DEVMOVE, /* a move on the device, besides moving its rows (cutting into parts, counts) */
    RF_RT_DIST_NSTEPS
} rf_rt_dist_step;

typedef struct rf_rt_rankstat {
    double run_seconds;       /* the rank's interpretation time, waits included */
    double wait_seconds;      /* in the votes every collective starts with: waiting for the slowest rank */
    int64_t bytes_sent, bytes_received; /* through host memory (MPI) */
    int64_t dev_bytes_sent, dev_bytes_received; /* device to device (NCCL; the emulator's MPI) */
    int64_t moves;            /* relations moved */
    int64_t rows_sent, rows_received; /* rows to and from other ranks (host memory and device alike) */
    int64_t read_rows, read_bytes; /* the rank's share of the inputs: rows, and bytes read for them */
    int64_t exchanges;        /* moves whose rows went between ranks (rows sent or received) */
    double xport_seconds;     /* moving those rows: MPI's all-to-all, NCCL, the emulator's MPI */
    double run_xport_seconds; /* of them, the run's (not the load's, which distributes the inputs) */
    int64_t collectives;      /* small MPI collectives: votes (with counts, sizes, tests), gathers */
    double collective_seconds; /* in them (wait_seconds is the part spent in votes) */
    int64_t starts;           /* the transport started for this run (NCCL's communicator): 1, or 0 reused */
    double start_seconds;     /* that start (before the run: not in run_seconds) */
    int64_t talks;            /* moves that asked the other ranks (a vote with counts, then maybe rows) */
    int64_t move_trips;       /* the round trips of those moves: votes with counts, sizes, row exchanges */
    /* moves of relations with string columns: every string sent as a code
    ** shared by the ranks, or some sent as bytes (rank 0's, for the profile) */
    int64_t str_coded, str_bytes;
    /* the load's copies (GPU ranks; 0 on the CPU): input bytes to the
    ** device, the bytes that crossed for them (narrow columns as stored),
    ** and input bytes found on the device from an earlier run (not copied) */
    int64_t load_h2d_bytes, load_wire_bytes, load_found_bytes;
    /* the rank's run time by step besides waiting and moving rows (seconds,
    ** RF_RT_DIST_STEP_*), and the strings it interned from bytes received */
    double step_seconds[RF_RT_DIST_NSTEPS];
    int64_t strings_interned;
    /* moves of relations that may hold a rank's own strings whose rows the
    ** ranks checked (rf_rt_dist_codes_check), and of those the ones that
    ** held shared codes only on every rank (moved on the device) */
    int64_t str_checked, str_checked_shared;
} rf_rt_rankstat;

/* NULL *out when w is NULL or has one rank: the run is a plain one.
** timeout_s: a collective's deadline (<= 0: none); broadcast_bytes: the
** most bytes (all ranks') a join's side may have to be broadcast instead of
** hashed (<= 0: never). */
rf_status rf_rt_dist_new(rf_rt_dist_world *w, const rf_hir_program *p, double timeout_s, int64_t broadcast_bytes,
                         rf_rt_dist **out);
void rf_rt_dist_free(rf_rt_dist *x);
/* The run's threads, on which a move hashes, packs and interns its rows
** (1 until set). */
void rf_rt_dist_set_threads(rf_rt_dist *x, int threads);
int rf_rt_dist_rank(const rf_rt_dist *x);
int rf_rt_dist_size(const rf_rt_dist *x);
/* Rows [*lo, *hi) of an input of nrows rows are this rank's share. */
void rf_rt_dist_share(const rf_rt_dist *x, int64_t nrows, int64_t *lo, int64_t *hi);
/* Every rank's vote (all: size entries, by rank): failed says this rank
** failed; v (RF_RT_DIST_VOTE_N numbers, or NULL) what it contributes. Stops
** the run (RF_EUSER) when a rank failed, only the lowest failed rank keeping
** its messages. A collective. */
rf_status rf_rt_dist_allgather(rf_rt_dist *x, int failed, const int64_t *v, rf_rt_dist_vote *all, const char *what,
                               rf_diags *d);
/* The rows of rel (no variable's: an input's share being checked) hashed by
** cols to their ranks; *out the rows this rank receives, in source-rank
** order, each source's in its order. A collective. */
rf_status rf_rt_dist_hash_rows(rf_rt_dist *x, const rf_rt_rel *rel, rf_rt_dict *dict, const int32_t *cols,
                               int32_t ncols, const char *what, rf_rt_rel *out, rf_diags *d);
/* The inputs are read: the profile's time waiting for other ranks counts
** from here (the run's time does). */
void rf_rt_dist_run_begins(rf_rt_dist *x);
/* Counts an input's share for --profile: its rows, and the bytes read for it. */
void rf_rt_dist_read(rf_rt_dist *x, int64_t rows, int64_t bytes);
/* An input variable now holds this rank's share. */
void rf_rt_dist_loaded(rf_rt_dist *x, int32_t var);
/* An input variable every rank read whole, alike (a database table of one
** block): replicated. */
void rf_rt_dist_loaded_whole(rf_rt_dist *x, int32_t var);
/* The moves kernel k needs first (at most 2 * k->nin + 2 into moves);
** rows: this rank's rows of each of k->in. A join whose sides both need a
** move asks the other ranks for their sizes (a collective: every rank plans
** every kernel). RF_EINTERNAL with an error when k would read an index that
** a move has made stale (cannot happen with the scheduler's order, checked
** anyway). */
rf_status rf_rt_dist_plan(rf_rt_dist *x, const rf_hir_kernel *k, const int64_t *rows, rf_rt_dist_move *moves,
                          int32_t *nmoves, rf_diags *d);
/* A move's cut (dist_topk.c): rel's first k->limit rows in sort k's order
** (strings in byte order through dict) into out, in rel's row order. */
rf_status rf_rt_dist_topk(const rf_hir_kernel *k, const rf_rt_rel *rel, const rf_rt_dict *dict, rf_rt_rel *out);
/* Moves rel (variable m->var) to m->to; *out is the rank's new rows
** (allocated here, types of rel). A collective: every rank calls it for the
** same move. */
rf_status rf_rt_dist_move_rel(rf_rt_dist *x, const rf_rt_dist_move *m, const rf_rt_rel *rel, rf_rt_dict *dict,
                              rf_rt_rel *out, rf_diags *d);
/* The same for n moves of distinct variables (rel[i] moved by m[i] into
** out[i]) at once: one vote with every rank's sizes and one exchange for
** all that talk (two round trips, where one move at a time takes two each). */
rf_status rf_rt_dist_move_rels(rf_rt_dist *x, const rf_rt_dist_move *m, int32_t n, const rf_rt_rel *const *rel,
                               rf_rt_dict *dict, rf_rt_rel *out, rf_diags *d);
/* Whether kernels j0 + 1 ... (the one whose id is last) of block bl need
** no move, once kernel j0 (whose moves are made) has run: planned ahead
** with the placements every rank has, no collective. A fused kernel that
** runs all of those at j0 (the GPU's Kernel Weaver) is only right then: a
** move later in its span would come after the rows were read. 0 also when
** a join there would vote whether to broadcast. */
int rf_rt_dist_span_still(rf_rt_dist *x, const rf_hir_block *bl, int32_t j0, int32_t last);
/* Records where kernel k's output is after it ran. */
void rf_rt_dist_ran(rf_rt_dist *x, const rf_hir_kernel *k);
/* Variable var holds no rows on any rank (the walk did not run the kernel
** that writes it, whose driving input was empty on every rank). */
void rf_rt_dist_emptied(rf_rt_dist *x, int32_t var);
/* The walk is at kernel j of block bl (planned next); rows(dev, v) gives
** this rank's rows of any variable v. A join that weighs a broadcast plans
** the rest of bl ahead with it (no messages) and counts the later moves of
** relations that exist already. */
void rf_rt_dist_at(rf_rt_dist *x, const rf_hir_block *bl, int32_t j, int64_t (*rows)(const void *dev, int32_t var),
                   const void *dev);
/* This rank's run stops at the kernel rf_rt_dist_at named last, a derived
** functional predicate's check having found a clash whose key is key[0..n)
** (rf_rt_fd_fail's), or an aggregate a failing group whose least key it is
** (rf_rt_agg_fail_report's: groups too are whole on one rank). When the ranks that stopped all stopped so, at one
** kernel, the vote that tells them (dist_run.c) keeps the messages of the
** rank with the least key (keys are hashed to ranks, each on one), as one
** process names the least key over all rows; else the lowest failed rank's. */
void rf_rt_dist_fd_clash(rf_rt_dist *x, const char *key, int64_t n);
/* The run's rows of n variables from this rank's (rows, in place): summed
** over the ranks, but a replicated variable's (every rank holds all its
** rows) as they are. A collective (the --max-iterations error's sizes). */
rf_status rf_rt_dist_rows_total(rf_rt_dist *x, int32_t n, const int32_t *vars, int64_t *rows, rf_diags *d);
/* A branch's n tests: some[i] becomes whether any rank holds rows of the
** i-th (local[i]: whether this rank does), *any whether any rank holds rows
** of one of them. A collective (one vote per 1008 tests, and one for none). */
rf_status rf_rt_dist_any_each(rf_rt_dist *x, int32_t n, const uint8_t *local, uint8_t *some, int *any, rf_diags *d);
/* ---- moves on the device (dist_xport.c) ---------------------------------- */

/* The transport for moves a device makes itself (rf_rt_xport.h), for a run
** on GPU ranks: NCCL between the GPUs when every rank has a GPU of its own
** (gpu: its PCI address plus 1, 0 unknown; no two ranks of a host alike)
** and libnccl.so.2 loads; MPI over the emulator's memory when every rank's
** device is the emulator (host_memory). *xp NULL otherwise (rows move
** through host memory). note: one line for --profile saying which and, when
** not NCCL on real GPUs, why. A collective (votes, then NCCL's bootstrap:
** ncclGetUniqueId on rank 0, MPI_Bcast, ncclCommInitRankConfig) the first
** time in a process: the world keeps the choice and the communicator for
** its later runs (no message then), and closes them at its end. */
rf_status rf_rt_dist_xport_open(rf_rt_dist *x, int host_memory, int64_t gpu, rf_rt_xport **xp, char *note,
                                size_t nnote, rf_diags *d);
/* The end of a run's use of the transport (the communicator stays the world's). */
void rf_rt_dist_xport_close(rf_rt_xport *xp);
/* Whether move m exchanges rows between ranks (else each rank keeps some of
** its own: a replicated relation cut, a spread one left); and then *mv,
** what the device does (cols point into m). */
int rf_rt_dist_move_talks(const rf_rt_dist *x, const rf_rt_dist_move *m, rf_rt_xmove *mv, char *what, size_t nwhat);
/* After a move the device made (st: how it went): the placement, and the
** bytes it moved for the profile. */
void rf_rt_dist_moved_on_device(rf_rt_dist *x, const rf_rt_dist_move *m, rf_status st, const rf_rt_xstat *xs);

/* ---- string codes every rank shares (dist_codes.c) ------------------------ */

/* Before the inputs: the program's string constants interned (the start of
** the prefix every rank interns alike; the database's dictionaries follow,
** rf_rt_inputs_shared_strings), the dictionary's shared count reset. */
rf_status rf_rt_dist_codes_begin(rf_rt_dist *x, rf_rt_dict *dict);
/* The prefix's end: past the constants' codes and top (past the codes the
** database's strings got). */
void rf_rt_dist_codes_mark(rf_rt_dist *x, const rf_rt_dict *dict, int64_t top);
/* Input var's share r was read: whether it holds codes past the prefix in
** a column the program reads (read[c]; NULL: every column). */
void rf_rt_dist_codes_input(rf_rt_dist *x, int32_t var, const rf_rt_rel *r, const uint8_t *read);
/* After the inputs, a collective: the ranks compare their prefixes (and
** which inputs hold their own strings); alike, the dictionary's shared
** count becomes the prefix's length, else nothing is shared. */
rf_status rf_rt_dist_codes_agree(rf_rt_dist *x, rf_rt_dict *dict, rf_diags *d);
/* Whether var holds shared codes only, on every rank: its moves may go on
** the device like a relation without strings. */
int rf_rt_dist_codes_shared(const rf_rt_dist *x, int32_t var);
/* One line for --profile: how the ranks' strings moved (stats: every
** rank's, from rf_rt_dist_end), or why as bytes. */
/* Whether the ranks share codes (their prefixes agreed, some codes), so
** that a relation that may hold a rank's own strings can be checked for
** them; the codes below rf_rt_dist_codes_limit are the shared ones. */
int rf_rt_dist_codes_checkable(const rf_rt_dist *x);
int64_t rf_rt_dist_codes_limit(const rf_rt_dist *x);
/* A move of a relation that may hold a rank's own strings: every rank says
** whether its rows hold a code past the shared ones (own; failed: it could
** not tell, its message in d); *none 1 when no rank's rows do, so that the
** relation moves like one of shared codes (on the device). A collective. */
rf_status rf_rt_dist_codes_check(rf_rt_dist *x, int failed, int own, int *none, rf_diags *d);
void rf_rt_dist_codes_note(const rf_rt_dist *x, const rf_rt_rankstat *stats, char *buf, size_t n);

/* After an output's last kernel: the move (if any) that brings it to rank 0. */
int rf_rt_dist_output_move(rf_rt_dist *x, int32_t var, rf_rt_dist_move *m);
/* The rank's work clock (seconds): the time, less what it waited for other
** ranks and moved rows so far, so that a step that votes or moves rows
** counts only its own work. rf_rt_dist_timed: step's work since then (a
** clock read before it), for --profile. */
double rf_rt_dist_clock(const rf_rt_dist *x);
void rf_rt_dist_timed(rf_rt_dist *x, rf_rt_dist_step step, double since);
/* The load's copies on this rank (rf_rt_rankstat's load_*), for the end's profile. */
void rf_rt_dist_copied(rf_rt_dist *x, int64_t h2d_bytes, int64_t wire_bytes, int64_t found_bytes);
/* The end of a run on every rank, st being this rank's status: agrees with
** the others. Returns the run's status: a rank that did not fail but saw
** another fail gets RF_EUSER (rank 0 with an error naming the failed rank,
** the others with no message); of several failed ranks only the lowest
** keeps its messages. stats (size entries, rank 0 only, may be NULL): each
** rank's profile. */
rf_status rf_rt_dist_end(rf_rt_dist *x, rf_status st, double run_seconds, rf_rt_rankstat *stats, rf_diags *d);

#endif
