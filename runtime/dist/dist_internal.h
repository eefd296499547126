/*
** runtime/dist/dist_internal.h: the state of one partitioned run, shared by
** dist_place.c (placements and plans) and dist_run.c (moves, votes).
**
** Owns: the layout of rf_rt_dist and of one variable's placement record.
*/
#ifndef RF_DIST_INTERNAL_H
#define RF_DIST_INTERNAL_H

#include "rf_rt_dist.h"

typedef struct dist_var {
    rf_rt_place place;
    int64_t gen;              /* moves so far: an index made before a move is stale */
    /* an index variable: the relations it indexes, their moves and
    ** placements when it was made, whether a join's sides were hashed by
    ** their keys, and where a gather by its left rows puts them */
    int32_t idx_in[2];
    int64_t idx_gen[2];
    rf_rt_place idx_place[2];
    int copart;
    rf_rt_place gather_place;
    rf_rt_place insert_place; /* an INSERT into an empty set: the placement it takes */
    /* a recursive set's hash (dist_place_prepare): the columns its delta's
    ** join copies to the same place in its output, so that the output is
    ** already where the set's rows of it are (no move for the membership
    ** test); kind EMPTY: none, the whole tuple */
    rf_rt_place pref;
    /* a partial total's rows (dist_place_prepare): one per rank, which the
    ** combining total reads on every rank (broadcast, not gathered) */
    int partial_total;
    /* a partial aggregate's rows whose combined groups all go to rank 0
    ** (an output's sort without a limit reads them, through maps only):
    ** gathered there at once instead of hashed by the groups first */
    int gather_first;
} dist_var;

struct rf_rt_dist {
    rf_rt_dist_world *w;
    const rf_hir_program *p;
    int rank, size;
    double timeout_s;
    int64_t broadcast_bytes;  /* a join side broadcast: at most this many bytes (<= 0: never) */
    int threads;              /* the run's threads: a move's hashing, packing and interning */
    dist_var *vars;
    int stopped;              /* the ranks agreed that one failed: no more collectives */
    int dry;                  /* planning ahead (rf_rt_dist_span_still): no vote, no message */
    int dry_weighed;          /* planning ahead: the last join planned would weigh a broadcast */
    rf_rt_rankstat stat;
    double xport_before_run;  /* stat.xport_seconds when the run began: the load's moves */
    /* by kernel id (dist_place_prepare): bit i set when the kernel's input i
    ** is read again in later rounds of a loop that does not change it */
    uint8_t *reused;
    int32_t nkernel_ids;
    /* by kernel id (dist_topk_prepare): 1 for a sort with a limit whose
    ** input each rank may cut to its first rows before the gather */
    uint8_t *cut;
    /* string codes (dist_codes.c): the dictionary's prefix every rank
    ** interned alike and its hash; whether the ranks found it alike; by
    ** variable, non-zero when it may hold a rank's own codes (1 an input
    ** share's, 2 computed, 4 copied from such) */
    int64_t prefix;
    uint64_t prefix_hash;
    int codes_same;
    const rf_rt_dict *dict;   /* the run's (rf_rt_dist_codes_begin): the own strings' lengths */
    uint8_t *local;
    /* where the walk is (rf_rt_dist_at): kernel at_j of block at_block is
    ** the next to run, rows_of(rows_dev, v) this rank's rows of v; a
    ** join's broadcast is weighed with the moves the rest of the block
    ** would need after it (dist_place.c) */
    const rf_hir_block *at_block;
    int32_t at_j;
    int64_t (*rows_of)(const void *dev, int32_t var);
    const void *rows_dev;
    /* the kernels the walk reached (rf_rt_dist_at, alike on every rank),
    ** and the clash this rank's functional-dependency check stopped at
    ** (rf_rt_dist_fd_clash): its key's bytes (NULL: none) and the kernel */
    int64_t kernels;
    char *clash;
    int64_t clash_len, clash_at;
};

/* The program's shape the placements use (dist_place.c), once per run:
** each recursive set's preferred hash, the loop-invariant join sides. */
rf_status dist_place_prepare(rf_rt_dist *x);

/* The sorts with a limit whose input may be cut on each rank first
** (dist_topk.c), once per run; whether k is one. */
rf_status dist_topk_prepare(rf_rt_dist *x);
int dist_topk_cuts(const rf_rt_dist *x, const rf_hir_kernel *k);

/* Every rank's vote (dist_run.c): stops the run when one failed, keeping
** only the lowest failed rank's messages. v: RF_RT_DIST_VOTE_N numbers or NULL. */
rf_status dist_vote(rf_rt_dist *x, int failed, const int64_t *v, rf_rt_dist_vote *all, const char *what, rf_diags *d);
/* "the hash of variable r": what a move is called in messages. */
void dist_move_what(const rf_rt_dist *x, const rf_rt_dist_move *m, char *buf, size_t n);
/* Every rank's vote with its counts for each rank (send: size numbers):
** recv[j] becomes what rank j sends this one, *silent 1 when no rank sends
** another more than empty (a part of no rows: the exchange can be skipped
** on every rank alike), *big
** 1 when a count or a rank's total reaches 2 GiB (MPI's ints). One
** collective where a vote and an all-to-all of counts were two. */
rf_status dist_vote_counts(rf_rt_dist *x, int failed, const int64_t *send, int64_t empty, int64_t *recv, int *silent,
                           int *big, const char *what, rf_diags *d);
/* Between two polls of a pending exchange or vote (dist_comm.c): waited so
** far, spin_s how long to yield before sleeping (the world's), busy when
** rows are in flight (polled again at once, the core yielded), nap the
** next sleep's ns. */
void dist_poll_pause(double waited, double spin_s, int busy, long *nap);
/* The world's slot for the transport its runs reuse (NULL without MPI), and
** its end (dist_xport.c): NCCL's communicator closed before MPI ends. */
void **dist_world_xport(rf_rt_dist_world *w);
void dist_xport_world_end(void *cached);
/* The mean length of this rank's own strings (codes past the shared
** prefix), from a sample of at most 64 (dist_codes.c): what a string
** column that may hold them costs a move per row, beside its length. */
int64_t dist_codes_own_len(const rf_rt_dist *x);
/* Every rank's n numbers (at most RF_RT_DIST_VOTE_N) summed (a collective
** with the failure vote). */
rf_status dist_sum_votes(rf_rt_dist *x, int n, const int64_t *local, int64_t *sum, const char *what, rf_diags *d);

#endif
