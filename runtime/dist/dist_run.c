/*
** runtime/dist/dist_run.c: one partitioned run: moving relations between
** ranks, agreeing on branches and on failure, the per-rank profile.
**
** Owns: the protocol every collective follows (each starts with a vote in
** which a rank that failed says so, so that all ranks stop at the same
** point and only the lowest failed rank's messages are kept), the moves
** themselves (hash, gather on rank 0, broadcast; moves out of a replicated
** relation need no communication; the moves through host memory before
** one kernel go together: one vote, one exchange), each input's share, and
** the rank's time (by step: rf_rt_dist_clock), bytes and round trips for
** --profile; relations' sizes over every rank (rf_rt_dist_rows_total); the
** rank whose error stopped the last run (rf_rt_dist_stopped_by)
** and the launcher's rank before MPI starts (rf_rt_dist_launch_rank).
*/
#include "dist_internal.h"
#include "rf_sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int rf_rt_dist_launched(void)
{
    /* the launch context (Open MPI's mpirun, or a PMI/PMIx launcher such as
    ** srun), not a behaviour switch */
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

static int stopped_by = -1; /* rf_rt_dist_stopped_by: the world's runs are on one thread */

int rf_rt_dist_stopped_by(void) { return stopped_by; }
void rf_rt_dist_set_stopped_by(int rank) { stopped_by = rank; }

int rf_rt_dist_launch_rank(void)
{
    if (!rf_rt_dist_launched()) return 0;
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (!v || *v < '0' || *v > '9') continue;
        char *end;
        long r = strtol(v, &end, 10);
        if (!*end && r >= 0 && r <= INT32_MAX) return (int)r;
    }
    return 0;
}

rf_status rf_rt_dist_new(rf_rt_dist_world *w, const rf_hir_program *p, double timeout_s, int64_t broadcast_bytes,
                         rf_rt_dist **out)
{
    *out = NULL;
    if (!w || rf_rt_dist_world_size(w) < 2) return RF_OK;
    rf_rt_dist *x = rf_calloc(1, sizeof *x);
    if (!x) return RF_ENOMEM;
    x->vars = rf_calloc((size_t)p->nvars + 1, sizeof *x->vars);
    if (!x->vars) {
        free(x);
        return RF_ENOMEM;
    }
    x->w = w;
    x->p = p;
    x->rank = rf_rt_dist_world_rank(w);
    x->size = rf_rt_dist_world_size(w);
    x->timeout_s = timeout_s;
    x->broadcast_bytes = broadcast_bytes;
    x->threads = 1;
    for (int32_t v = 0; v < p->nvars; v++) x->vars[v].idx_in[0] = x->vars[v].idx_in[1] = -1;
    if (dist_place_prepare(x) || dist_topk_prepare(x)) {
        rf_rt_dist_free(x);
        return RF_ENOMEM;
    }
    *out = x;
    return RF_OK;
}

void rf_rt_dist_free(rf_rt_dist *x)
{
    if (!x) return;
    free(x->reused);
    free(x->cut);
    free(x->local);
    free(x->vars);
    free(x->clash);
    free(x);
}

void rf_rt_dist_set_threads(rf_rt_dist *x, int threads)
{
    if (x) x->threads = threads < 1 ? 1 : threads;
}

int rf_rt_dist_rank(const rf_rt_dist *x) { return x ? x->rank : 0; }
int rf_rt_dist_size(const rf_rt_dist *x) { return x ? x->size : 1; }

void rf_rt_dist_share(const rf_rt_dist *x, int64_t nrows, int64_t *lo, int64_t *hi)
{
    int64_t per = nrows / x->size, extra = nrows % x->size;
    *lo = x->rank * per + (x->rank < extra ? x->rank : extra);
    *hi = *lo + per + (x->rank < extra);
}

void rf_rt_dist_fd_clash(rf_rt_dist *x, const char *key, int64_t n)
{
    free(x->clash);
    x->clash = n > 0 ? rf_malloc((size_t)n) : NULL;
    x->clash_len = x->clash ? n : 0;
    if (x->clash) memcpy(x->clash, key, (size_t)n);
    x->clash_at = x->kernels;
}

/* A vote's failed flag: 0 this rank did not fail; else 2 + 2k where it
** stopped at a functional dependency's clash at kernel k
** (rf_rt_dist_fd_clash), 3 + 2k where it failed otherwise at or after
** kernel k, the last its walk reached (rf_rt_dist_at: alike on every rank,
** so that the earliest failure is the one one process would meet). */
static int64_t failed_flag(const rf_rt_dist *x, int failed)
{
    return !failed ? 0 : x->clash ? 2 + 2 * x->clash_at : 3 + 2 * x->kernels;
}

/* Every candidate rank (flag[r * stride] == at) stopped at a clash of one
** kernel: *first becomes the one with the least key (the lowest rank of
** equal ones: a replicated relation's). Two collectives every rank makes
** (all saw the same flags): the keys' lengths, then the keys. */
static rf_status least_clash(rf_rt_dist *x, const int64_t *flag, int64_t stride, int64_t at, int *first, rf_diags *d)
{
    int n = x->size;
    const char *what = "the ranks' clashes of a functional dependency";
    int64_t mine = flag[x->rank * stride] == at ? x->clash_len : 0;
    int64_t *len = rf_calloc((size_t)n * 3 + 1, sizeof *len), *send = len ? len + n : NULL, *displ = len ? len + 2 * n : NULL;
    if (!len) return RF_ENOMEM;
    double t0 = rf_now();
    rf_status st = rf_rt_dist_allgather_i64(x->w, x->timeout_s, what, &mine, 1, len, d);
    char *got = NULL;
    for (int j = 0; j < n; j++) send[j] = mine; /* (displ: all 0, the one key to every rank) */
    if (!st) st = rf_rt_dist_alltoallv(x->w, x->timeout_s, what, x->clash ? x->clash : "", send, displ, &got, len, 0, d);
    x->stat.collectives += 2;
    x->stat.collective_seconds += rf_now() - t0;
    int64_t off = 0, best_off = 0;
    int best = -1;
    for (int r = 0; r < n && !st; r++) {
        if (len[r] > 0 && (best < 0 || rf_rt_fd_clash_key_cmp(got + off, len[r], got + best_off, len[best]) < 0)) {
            best = r;
            best_off = off;
        }
        off += len[r];
    }
    if (best >= 0) *first = best;
    free(got);
    free(len);
    return st;
}

/* After a vote (failed[r]: rank r's flag): stops the run when a rank failed.
** Of the ranks that failed at the earliest kernel (one process stops at
** its first failure: ranks without a move between two kernels may each
** pass one and fail at the other), the lowest keeps its messages, or where
** every one of them stopped at a functional dependency's clash there, the
** one with the least key (least_clash); rank 0, when it did not fail, names
** that rank; everyone else says nothing more. */
static rf_status vote_outcome(rf_rt_dist *x, const int64_t *failed, int64_t stride, rf_diags *d)
{
    int first = -1, clashes = 1, at_least = 0;
    int64_t least = INT64_MAX; /* the earliest kernel's: (flag - 2) / 2 */
    for (int r = 0; r < x->size; r++) {
        int64_t f = failed[r * stride];
        if (!f || (f - 2) / 2 > least) continue;
        if ((f - 2) / 2 < least) least = (f - 2) / 2, first = r, clashes = 1, at_least = 0;
        if (f & 1) clashes = 0;
        at_least++;
    }
    if (first < 0) return RF_OK;
    x->stopped = 1;
    if (clashes && at_least > 1) {
        rf_status st = least_clash(x, failed, stride, 2 + 2 * least, &first, d);
        if (st) {
            rf_rt_dist_world_break(x->w); /* (the ranks may disagree on who reports) */
            return st;
        }
    }
    rf_rt_dist_set_stopped_by(first);
    if (first != x->rank) {
        /* another rank reports; this one's own messages would repeat or
        ** confuse. Rank 0 names it; the others say the same to their
        ** caller (rf_errmsg), which a command does not print again */
        rf_diags_free(d);
        rf_diags_init(d);
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d stopped with an error (its message is %s); all ranks stopped",
                 first, x->size, x->rank == 0 ? "above or below" : "that rank's");
    } else if (x->size > 1) {
        rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(NULL, 0, 0), "on rank %d of %d; the other ranks stopped", x->rank,
                    x->size);
    }
    return RF_EUSER;
}

/* A vote's time: the rank waited there for the slowest one. */
static void count_vote(rf_rt_dist *x, double t0)
{
    double dt = rf_now() - t0;
    x->stat.wait_seconds += dt;
    x->stat.collectives++;
    x->stat.collective_seconds += dt;
}

rf_status dist_vote(rf_rt_dist *x, int failed, const int64_t *v, rf_rt_dist_vote *all, const char *what, rf_diags *d)
{
    rf_rt_dist_vote mine;
    memset(&mine, 0, sizeof mine);
    mine.failed = failed_flag(x, failed);
    for (int i = 0; i < RF_RT_DIST_VOTE_N && v; i++) mine.v[i] = v[i];
    double t0 = rf_now();
    rf_status st = rf_rt_dist_allgather_votes(x->w, x->timeout_s, what, &mine, all, d);
    count_vote(x, t0);
    if (st) {
        x->stopped = 1;
        return st;
    }
    return vote_outcome(x, &all[0].failed, (int64_t)(sizeof *all / sizeof all->failed), d);
}

rf_status dist_vote_counts(rf_rt_dist *x, int failed, const int64_t *send, int64_t empty, int64_t *recv, int *silent,
                           int *big, const char *what, rf_diags *d)
{
    int n = x->size;
    /* counts[r * n + j]: what rank r sends rank j */
    int64_t *counts = rf_calloc((size_t)n * (size_t)n + 1, sizeof *counts);
    rf_rt_dist_vote *all = rf_calloc((size_t)n, sizeof *all);
    if (!counts || !all) {
        free(counts);
        free(all);
        return RF_ENOMEM; /* the next vote (rf_rt_dist_end) tells the others */
    }
    /* every collective starts with a vote of one shape (a failed rank's
    ** next is the end's): the counts ride in it where they fit */
    int inside = n <= RF_RT_DIST_VOTE_N;
    int64_t v[RF_RT_DIST_VOTE_N] = {0};
    for (int j = 0; j < n && inside; j++) v[j] = send[j];
    x->stat.talks++;
    x->stat.move_trips += inside ? 1 : 2;
    rf_status st = dist_vote(x, failed, inside ? v : NULL, all, what, d);
    if (!st && inside) {
        for (int r = 0; r < n; r++)
            for (int j = 0; j < n; j++) counts[(size_t)r * n + j] = all[r].v[j];
    } else if (!st) {
        double t0 = rf_now();
        st = rf_rt_dist_allgather_i64(x->w, x->timeout_s, what, send, n, counts, d);
        double dt = rf_now() - t0;
        x->stat.collectives++;
        x->stat.collective_seconds += dt;
        x->stat.wait_seconds += dt;
        if (st) x->stopped = 1;
    }
    *silent = 1;
    *big = 0;
    for (int r = 0; r < n && !st; r++) {
        int64_t in = 0;
        for (int j = 0; j < n; j++) {
            int64_t c = counts[(size_t)r * n + j];
            if (j != r && c > empty) *silent = 0;
            if (c > INT32_MAX) *big = 1;
            in += counts[(size_t)j * n + r];
        }
        if (in > INT32_MAX) *big = 1;
        recv[r] = counts[(size_t)r * n + x->rank];
    }
    free(counts);
    free(all);
    return st;
}

/* Rows of r whose hash rank is this rank (from a replicated relation). */
static rf_status keep_rows(rf_rt_dist *x, const rf_rt_rel *r, const rf_rt_dict *dict, const rf_rt_place *to,
                           rf_rt_rel *out)
{
    double t0 = rf_rt_dist_clock(x);
    int32_t *dest = rf_malloc((size_t)(r->nrows + 1) * sizeof *dest);
    if (!dest) return RF_ENOMEM;
    int64_t lo = 0, hi = 0;
    if (to->kind == RF_RT_PLACE_HASH) rf_rt_dist_row_ranks(r, dict, to->cols, to->ncols, x->size, x->threads, dest);
    else if (to->kind == RF_RT_PLACE_ANY) rf_rt_dist_share(x, r->nrows, &lo, &hi);
    int64_t n = 0;
    for (int64_t i = 0; i < r->nrows; i++) {
        int mine = to->kind == RF_RT_PLACE_HASH ? dest[i] == x->rank
                   : to->kind == RF_RT_PLACE_ANY ? i >= lo && i < hi
                   : x->rank == 0;
        if (mine) dest[n++] = (int32_t)i; /* dest is reused for the kept rows: n <= i */
    }
    rf_status st = rf_rt_rel_alloc(out, r->ncols, r->types, n);
    for (int32_t c = 0; c < r->ncols && !st && n; c++) {
        int w = rf_rt_type_width(r->types[c]);
        for (int64_t i = 0; i < n; i++)
            memcpy((char *)out->cols[c] + i * w, (const char *)r->cols[c] + (int64_t)dest[i] * w, (size_t)w);
    }
    free(dest);
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_HASH, t0);
    return st;
}

static const char *kind_name(rf_rt_place_kind k)
{
    switch (k) {
    case RF_RT_PLACE_HASH: return "hash";
    case RF_RT_PLACE_ROOT: return "gather on rank 0";
    case RF_RT_PLACE_REPL: return "broadcast";
    default: return "spread";
    }
}

void dist_move_what(const rf_rt_dist *x, const rf_rt_dist_move *m, char *buf, size_t n)
{
    snprintf(buf, n, "the %s of variable %s", kind_name(m->to.kind), x->p->vars[m->var]->name);
}

/* One relation of an exchange, packed for every rank. */
typedef struct packed {
    char *buf;
    int64_t *size, *displ; /* by destination rank */
    int64_t own;           /* its rows that stay on this rank */
} packed;

/* rel packed where `to` says (hashed by its columns, all to rank 0, or to
** every rank) into *pk. */
static rf_status pack_for(rf_rt_dist *x, const rf_rt_rel *rel, rf_rt_dict *dict, const rf_rt_place *to, packed *pk)
{
    rf_status st = RF_OK;
    int32_t *dest = NULL;
    pk->size = rf_calloc((size_t)x->size * 2 + 1, sizeof *pk->size);
    pk->displ = pk->size ? pk->size + x->size : NULL;
    if (!pk->size) return RF_ENOMEM;
    double t0 = rf_rt_dist_clock(x);
    if (to->kind != RF_RT_PLACE_REPL) {
        dest = rf_malloc((size_t)(rel->nrows + 1) * sizeof *dest);
        if (!dest) return RF_ENOMEM;
        if (to->kind == RF_RT_PLACE_HASH) rf_rt_dist_row_ranks(rel, dict, to->cols, to->ncols, x->size, x->threads, dest);
        else memset(dest, 0, (size_t)rel->nrows * sizeof *dest); /* all to rank 0 */
    }
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_HASH, t0);
    t0 = rf_rt_dist_clock(x);
    /* this rank's own rows (they stay): the rest are sent */
    pk->own = rel->nrows;
    if (dest) {
        pk->own = 0;
        for (int64_t i = 0; i < rel->nrows; i++) pk->own += dest[i] == x->rank;
    }
    int64_t coded = 0, uncoded = 0;
    st = rf_rt_dist_pack(rel, dict, dest, x->size, x->threads, &pk->buf, pk->size, pk->displ, &coded, &uncoded);
    if (!st && uncoded) x->stat.str_bytes++;
    else if (!st && coded) x->stat.str_coded++;
    free(dest);
    rf_rt_dist_timed(x, RF_RT_DIST_STEP_PACK, t0);
    return st;
}

/* The bytes of a part of rel with no rows (its count, a tag per string
** column); -1 for a relation without columns, whose rows are its count. */
static int64_t empty_part(const rf_rt_rel *rel)
{
    if (rel->ncols == 0) return -1;
    int64_t b = 8;
    for (int32_t c = 0; c < rel->ncols; c++) b += rel->types[c] == RF_TYPE_STRING ? 4 : 0;
    return b;
}

/* The rows of n relations (rel[i] sent where to[i] says), out[i] the rows
** this rank receives of each: one collective, which starts with the
** failure vote carrying every rank's sizes, then one exchange for them all
** (none when no rank sends another a row). A part to a rank holds, for
** each relation in order, its packed part's size (int64) and the part;
** one relation's part is its packed part alone, sent from the buffer it
** was packed in and unpacked where it was received (no copy on either
** side), and the packed rows are freed before the received ones unpack:
** a rank holds the relation, its packed parts and what it received, then
** what it received and its new rows, not all four. */
static rf_status exchange_many(rf_rt_dist *x, int n, const rf_rt_rel *const *rel, const rf_rt_place *const *to,
                               rf_rt_dict *dict, const char *what, rf_rt_rel *out, rf_diags *d)
{
    int N = x->size;
    rf_status st = RF_OK;
    packed *pk = rf_calloc((size_t)n + 1, sizeof *pk);
    int64_t *cnt = rf_calloc((size_t)N * 4 + 1, sizeof *cnt), *send = cnt, *sdispl = cnt ? cnt + N : NULL,
            *recv = cnt ? cnt + 2 * N : NULL, *rsize = cnt ? cnt + 3 * N : NULL;
    char *sbuf = NULL, *rbuf = NULL, *part = NULL;
    if (!pk || !cnt) st = RF_ENOMEM;
    int64_t empty = 0;
    for (int i = 0; i < n && !st; i++) {
        st = pack_for(x, rel[i], dict, to[i], &pk[i]);
        int64_t e = empty_part(rel[i]), head = n > 1 ? 8 : 0;
        empty = e < 0 || empty < 0 ? -1 : empty + head + e;
        for (int j = 0; j < N && !st; j++) send[j] += head + pk[i].size[j];
    }
    /* the parts for each rank, relation by relation (made before the vote,
    ** so that a rank out of memory says so there) */
    int64_t total = 0;
    double tp = cnt ? rf_rt_dist_clock(x) : 0;
    for (int j = 0; j < N && !st; j++) sdispl[j] = total, total += send[j];
    if (!st && n == 1) {
        /* one relation: its packed parts as they are (a broadcast's one part to all) */
        sbuf = pk[0].buf;
        pk[0].buf = NULL;
        for (int j = 0; j < N; j++) sdispl[j] = to[0]->kind == RF_RT_PLACE_REPL ? 0 : pk[0].displ[j];
    } else if (!st && !(sbuf = rf_rt_alloc_big((size_t)total + 1))) st = RF_ENOMEM;
    for (int j = 0; j < N && !st && n > 1; j++) {
        char *p = sbuf + sdispl[j];
        for (int i = 0; i < n; i++) {
            int64_t sz = pk[i].size[j];
            memcpy(p, &sz, 8);
            memcpy(p + 8, pk[i].buf + (to[i]->kind == RF_RT_PLACE_REPL ? 0 : pk[i].displ[j]), (size_t)sz);
            p += 8 + sz;
        }
    }
    for (int i = 0; i < n && pk; i++) {
        free(pk[i].buf); /* (sbuf holds them now) */
        pk[i].buf = NULL;
    }
    if (cnt) rf_rt_dist_timed(x, RF_RT_DIST_STEP_PACK, tp);
    if (st) rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d: out of memory packing %s", x->rank, what);
    int silent = 0, big = 0;
    rf_status vst = cnt ? dist_vote_counts(x, st != RF_OK, send, empty, recv, &silent, &big, what, d) : RF_ENOMEM;
    x->stat.talks += n - 1; /* (the vote counted one) */
    double tu = rf_rt_dist_clock(x);
    if (!vst && silent) {
        /* no rank sends another anything: this rank keeps its own parts */
        const char *p = sbuf + sdispl[x->rank];
        for (int i = 0; i < n && !vst; i++) {
            int64_t sz = send[x->rank];
            if (n > 1) memcpy(&sz, p, 8), p += 8;
            vst = rf_rt_dist_unpack(p, &sz, 1, rel[i]->ncols, rel[i]->types, dict, x->threads, &out[i],
                                    &x->stat.strings_interned);
            p += sz;
        }
        if (vst) rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d: %s: %s", x->rank, what,
                          vst == RF_ENOMEM ? "out of memory" : "malformed rows");
    } else if (!vst) {
        double t0 = rf_now();
        vst = rf_rt_dist_alltoallv(x->w, x->timeout_s, what, sbuf, send, sdispl, &rbuf, recv, big, d);
        x->stat.xport_seconds += rf_now() - t0;
        tu = rf_rt_dist_clock(x);
        if (!vst) {
            free(sbuf); /* sent: before the rows received unpack */
            sbuf = NULL;
        }
        x->stat.move_trips++;
        x->stat.exchanges += n;
        if (vst) x->stopped = 1;
        for (int r = 0; r < N && !vst; r++)
            if (r != x->rank) {
                x->stat.bytes_sent += send[r];
                x->stat.bytes_received += recv[r];
            }
        /* relation i: its part from each rank, in rank order, together;
        ** at[j] where source j's next relation starts, end[j] its end */
        int64_t *at = rf_calloc((size_t)N * 2 + 1, sizeof *at), *end = at ? at + N : NULL;
        if (!vst && !at) vst = RF_ENOMEM;
        for (int j = 0; j < N && !vst; j++) {
            at[j] = j ? end[j - 1] : 0;
            end[j] = at[j] + recv[j];
        }
        if (!vst && n == 1) {
            /* one relation: the parts from each rank lie in order */
            vst = rf_rt_dist_unpack(rbuf, recv, N, rel[0]->ncols, rel[0]->types, dict, x->threads, &out[0],
                                    &x->stat.strings_interned);
            for (int j = 0; j < N; j++) at[j] = end[j];
            if (!vst) {
                x->stat.rows_sent += to[0]->kind == RF_RT_PLACE_REPL ? rel[0]->nrows * (N - 1) : rel[0]->nrows - pk[0].own;
                x->stat.rows_received += out[0].nrows - pk[0].own;
            }
        }
        for (int i = 0; i < n && !vst && n > 1; i++) {
            int64_t sum = 0;
            for (int j = 0; j < N && !vst; j++) {
                if (end[j] - at[j] < 8) vst = RF_EINTERNAL;
                else memcpy(&rsize[j], rbuf + at[j], 8);
                if (!vst && (rsize[j] < 0 || rsize[j] > end[j] - at[j] - 8)) vst = RF_EINTERNAL;
                sum += vst ? 0 : rsize[j];
            }
            free(part);
            part = vst ? NULL : rf_rt_alloc_big((size_t)sum + 1);
            if (!vst && !part) vst = RF_ENOMEM;
            int64_t p = 0;
            for (int j = 0; j < N && !vst; j++) {
                memcpy(part + p, rbuf + at[j] + 8, (size_t)rsize[j]);
                p += rsize[j];
                at[j] += 8 + rsize[j];
            }
            if (!vst) vst = rf_rt_dist_unpack(part, rsize, N, rel[i]->ncols, rel[i]->types, dict, x->threads,
                                              &out[i], &x->stat.strings_interned);
            if (!vst) {
                x->stat.rows_sent += to[i]->kind == RF_RT_PLACE_REPL ? rel[i]->nrows * (N - 1) : rel[i]->nrows - pk[i].own;
                x->stat.rows_received += out[i].nrows - pk[i].own;
            }
        }
        for (int j = 0; j < N && !vst; j++)
            if (at[j] != end[j]) vst = RF_EINTERNAL; /* bytes past the last relation */
        free(at);
        if (vst && vst != RF_EUSER && !x->stopped)
            rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d: %s: %s", x->rank, what,
                     vst == RF_ENOMEM ? "out of memory" : "malformed rows received");
    }
    if (!vst) rf_rt_dist_timed(x, RF_RT_DIST_STEP_UNPACK, tu);
    for (int i = 0; i < n && pk; i++) {
        free(pk[i].buf);
        free(pk[i].size);
    }
    free(part);
    free(pk);
    free(rbuf);
    free(sbuf);
    free(cnt);
    return st ? st : vst;
}

static rf_status exchange(rf_rt_dist *x, const rf_rt_rel *rel, rf_rt_dict *dict, const rf_rt_place *to,
                          const char *what, rf_rt_rel *out, rf_diags *d)
{
    return exchange_many(x, 1, &rel, &to, dict, what, out, d);
}

/* Whether move m needs no message: every rank holds what it needs already. */
static int move_is_local(const rf_rt_dist *x, const rf_rt_dist_move *m)
{
    rf_rt_place_kind from = x->vars[m->var].place.kind;
    return from == RF_RT_PLACE_REPL || from == RF_RT_PLACE_EMPTY || m->to.kind == RF_RT_PLACE_ANY;
}

/* Such a move: a replicated relation cut to this rank's rows, others kept. */
static rf_status move_local(rf_rt_dist *x, const rf_rt_dist_move *m, const rf_rt_rel *rel, rf_rt_dict *dict,
                            rf_rt_rel *out)
{
    rf_rt_place_kind from = x->vars[m->var].place.kind;
    rf_status st;
    if (from == RF_RT_PLACE_REPL) st = keep_rows(x, rel, dict, &m->to, out);
    else st = rf_rt_rel_alloc(out, rel->ncols, rel->types, 0);
    if (!st && from != RF_RT_PLACE_REPL && rel->nrows) {
        /* a spread relation placed "any": it is already; keep its rows */
        rf_rt_rel_free(out);
        st = rf_rt_rel_alloc(out, rel->ncols, rel->types, rel->nrows);
        for (int32_t c = 0; c < rel->ncols && !st; c++)
            memcpy(out->cols[c], rel->cols[c], (size_t)(rel->nrows * rf_rt_type_width(rel->types[c])));
    }
    return st;
}

rf_status rf_rt_dist_move_rels(rf_rt_dist *x, const rf_rt_dist_move *m, int32_t n, const rf_rt_rel *const *rel,
                               rf_rt_dict *dict, rf_rt_rel *out, rf_diags *d)
{
    for (int32_t i = 0; i < n; i++) memset(&out[i], 0, sizeof out[i]);
    /* the moves that talk, together: one vote, one exchange */
    const rf_rt_rel **trel = rf_calloc((size_t)n + 1, sizeof *trel);
    const rf_rt_place **tto = rf_calloc((size_t)n + 1, sizeof *tto);
    rf_rt_rel *tout = rf_calloc((size_t)n + 1, sizeof *tout);
    int32_t *ti = rf_calloc((size_t)n + 1, sizeof *ti);
    int32_t k = 0;
    rf_status st = trel && tto && tout && ti ? RF_OK : RF_ENOMEM;
    for (int32_t i = 0; i < n && !st; i++)
        if (!move_is_local(x, &m[i])) {
            trel[k] = rel[i];
            tto[k] = &m[i].to;
            ti[k++] = i;
        }
    if (!st && k) {
        char what[128];
        dist_move_what(x, &m[ti[0]], what, sizeof what);
        if (k > 1) snprintf(what + strlen(what), sizeof what - strlen(what), " and %d more", (int)(k - 1));
        st = exchange_many(x, k, trel, tto, dict, what, tout, d);
        for (int32_t j = 0; j < k; j++) out[ti[j]] = tout[j];
    }
    /* then the others, which send nothing (a failure here is told by the next vote) */
    for (int32_t i = 0; i < n && !st; i++)
        if (move_is_local(x, &m[i])) st = move_local(x, &m[i], rel[i], dict, &out[i]);
    for (int32_t i = 0; i < n; i++) {
        x->stat.moves++;
        if (st) continue;
        x->vars[m[i].var].place = m[i].to;
        x->vars[m[i].var].gen++;
    }
    if (st)
        for (int32_t i = 0; i < n; i++) rf_rt_rel_free(&out[i]);
    free(trel);
    free(tto);
    free(tout);
    free(ti);
    return st;
}

rf_status rf_rt_dist_move_rel(rf_rt_dist *x, const rf_rt_dist_move *m, const rf_rt_rel *rel, rf_rt_dict *dict,
                              rf_rt_rel *out, rf_diags *d)
{
    return rf_rt_dist_move_rels(x, m, 1, &rel, dict, out, d);
}

rf_status rf_rt_dist_allgather(rf_rt_dist *x, int failed, const int64_t *v, rf_rt_dist_vote *all, const char *what,
                               rf_diags *d)
{
    return dist_vote(x, failed, v, all, what, d);
}

rf_status rf_rt_dist_hash_rows(rf_rt_dist *x, const rf_rt_rel *rel, rf_rt_dict *dict, const int32_t *cols,
                               int32_t ncols, const char *what, rf_rt_rel *out, rf_diags *d)
{
    memset(out, 0, sizeof *out);
    rf_rt_place to;
    memset(&to, 0, sizeof to);
    to.kind = RF_RT_PLACE_HASH;
    to.ncols = ncols < RF_RT_PLACE_MAXCOLS ? ncols : RF_RT_PLACE_MAXCOLS; /* a prefix still co-locates */
    for (int32_t i = 0; i < to.ncols; i++) to.cols[i] = cols[i];
    return exchange(x, rel, dict, &to, what, out, d);
}

void rf_rt_dist_run_begins(rf_rt_dist *x)
{
    /* the inputs' votes (their shares' line counts) were the start's */
    x->stat.wait_seconds = 0;
    x->xport_before_run = x->stat.xport_seconds;
    x->stat.collectives = 0;
    x->stat.collective_seconds = 0;
    x->stat.talks = 0;
    x->stat.move_trips = 0;
    x->stat.str_coded = 0;
    x->stat.str_bytes = 0;
    memset(x->stat.step_seconds, 0, sizeof x->stat.step_seconds);
    x->stat.strings_interned = 0;
    x->stat.str_checked = 0;
    x->stat.str_checked_shared = 0;
}

void rf_rt_dist_read(rf_rt_dist *x, int64_t rows, int64_t bytes)
{
    x->stat.read_rows += rows;
    x->stat.read_bytes += bytes;
}

/* Bits of a vote's numbers that carry a test's emptiness (not the sign bit). */
#define TEST_BITS 63

rf_status rf_rt_dist_any_each(rf_rt_dist *x, int32_t n, const uint8_t *local, uint8_t *some, int *any, rf_diags *d)
{
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all) return RF_ENOMEM;
    rf_status st = RF_OK;
    *any = 0;
    /* one vote per RF_RT_DIST_VOTE_N * TEST_BITS tests, and one for none:
    ** every rank votes alike (they run one program) */
    int32_t per = RF_RT_DIST_VOTE_N * TEST_BITS, i0 = 0;
    do {
        int32_t m = n - i0 < per ? n - i0 : per;
        int64_t v[RF_RT_DIST_VOTE_N] = {0};
        for (int32_t i = 0; i < m; i++)
            if (local[i0 + i]) v[i / TEST_BITS] |= INT64_C(1) << (i % TEST_BITS);
        if ((st = dist_vote(x, 0, v, all, "a loop's test", d))) break;
        for (int32_t i = 0; i < m; i++) {
            int64_t bit = INT64_C(1) << (i % TEST_BITS);
            some[i0 + i] = 0;
            for (int r = 0; r < x->size && !some[i0 + i]; r++) some[i0 + i] = (all[r].v[i / TEST_BITS] & bit) != 0;
            *any |= some[i0 + i];
        }
        i0 += per;
    } while (i0 < n);
    free(all);
    return st;
}

rf_status rf_rt_dist_rows_total(rf_rt_dist *x, int32_t n, const int32_t *vars, int64_t *rows, rf_diags *d)
{
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all) return RF_ENOMEM;
    rf_status st = RF_OK;
    /* (a vote carries RF_RT_DIST_VOTE_N numbers: one per chunk of variables) */
    for (int32_t i0 = 0; i0 < n && !st; i0 += RF_RT_DIST_VOTE_N) {
        int32_t m = n - i0 < RF_RT_DIST_VOTE_N ? n - i0 : RF_RT_DIST_VOTE_N;
        int64_t v[RF_RT_DIST_VOTE_N] = {0};
        for (int32_t i = 0; i < m; i++) v[i] = rows[i0 + i];
        if ((st = dist_vote(x, 0, v, all, "a recursion's sizes", d))) break;
        for (int32_t i = 0; i < m; i++) {
            int32_t var = vars[i0 + i];
            /* replicated: every rank holds all its rows, this one's are the run's */
            if (var >= 0 && var < x->p->nvars && x->vars[var].place.kind == RF_RT_PLACE_REPL) continue;
            rows[i0 + i] = 0;
            for (int r = 0; r < x->size; r++) rows[i0 + i] += all[r].v[i];
        }
    }
    free(all);
    return st;
}

rf_status dist_sum_votes(rf_rt_dist *x, int n, const int64_t *local, int64_t *sum, const char *what, rf_diags *d)
{
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all) return RF_ENOMEM;
    int64_t v[RF_RT_DIST_VOTE_N] = {0};
    if (n > RF_RT_DIST_VOTE_N) n = RF_RT_DIST_VOTE_N;
    for (int i = 0; i < n; i++) v[i] = local[i];
    x->stat.move_trips++; /* a join's sizes, which decide its moves */
    rf_status st = dist_vote(x, 0, v, all, what, d);
    for (int i = 0; i < n; i++) sum[i] = 0;
    for (int r = 0; r < x->size && !st; r++)
        for (int i = 0; i < n; i++) sum[i] += all[r].v[i];
    free(all);
    return st;
}

double rf_rt_dist_clock(const rf_rt_dist *x)
{
    return rf_now() - x->stat.wait_seconds - x->stat.xport_seconds;
}

void rf_rt_dist_timed(rf_rt_dist *x, rf_rt_dist_step step, double since)
{
    if (x && step >= 0 && step < RF_RT_DIST_NSTEPS) x->stat.step_seconds[step] += rf_rt_dist_clock(x) - since;
}

void rf_rt_dist_copied(rf_rt_dist *x, int64_t h2d_bytes, int64_t wire_bytes, int64_t found_bytes)
{
    x->stat.load_h2d_bytes = h2d_bytes;
    x->stat.load_wire_bytes = wire_bytes;
    x->stat.load_found_bytes = found_bytes;
}

rf_status rf_rt_dist_end(rf_rt_dist *x, rf_status st, double run_seconds, rf_rt_rankstat *stats, rf_diags *d)
{
    if (x->stopped) return st ? st : RF_EUSER;
    x->stat.run_seconds = run_seconds;
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all) return RF_ENOMEM;
    /* the profile travels in the last vote: seconds as microseconds */
    const rf_rt_rankstat *m = &x->stat;
    int64_t v[RF_RT_DIST_VOTE_N] = {(int64_t)(run_seconds * 1e6), (int64_t)(m->wait_seconds * 1e6), m->bytes_sent,
                                    m->bytes_received, m->dev_bytes_sent, m->dev_bytes_received, m->read_rows,
                                    m->read_bytes, m->exchanges | m->talks << 32,
                                    (int64_t)(m->xport_seconds * 1e6) | m->str_bytes << 40,
                                    m->collectives | m->move_trips << 32,
                                    (int64_t)(m->collective_seconds * 1e6), m->rows_sent,
                                    (int64_t)(m->start_seconds * 1e6) | m->str_coded << 32, m->moves * 2 + (m->starts != 0),
                                    m->rows_received};
    rf_status vst = dist_vote(x, st != RF_OK, v, all, "the end of the run", d);
    if (!vst && stats)
        for (int r = 0; r < x->size; r++) {
            const int64_t *a = all[r].v;
            rf_rt_rankstat *s = &stats[r];
            s->run_seconds = (double)a[0] / 1e6;
            s->wait_seconds = (double)a[1] / 1e6;
            s->bytes_sent = a[2];
            s->bytes_received = a[3];
            s->dev_bytes_sent = a[4];
            s->dev_bytes_received = a[5];
            s->read_rows = a[6];
            s->read_bytes = a[7];
            s->exchanges = a[8] & 0xffffffff; /* (with the moves that talked: counts below 2^31) */
            s->talks = a[8] >> 32;
            /* (counts that share a number: each below 2^31, or 2^23 for str_bytes) */
            s->xport_seconds = (double)(a[9] & ((INT64_C(1) << 40) - 1)) / 1e6;
            s->str_bytes = a[9] >> 40;
            s->collectives = a[10] & 0xffffffff; /* the end's own vote not counted */
            s->move_trips = a[10] >> 32;
            s->collective_seconds = (double)a[11] / 1e6;
            s->rows_sent = a[12];
            s->start_seconds = (double)(a[13] & 0xffffffff) / 1e6;
            s->str_coded = a[13] >> 32;
            s->moves = a[14] / 2;
            s->starts = a[14] % 2;
            s->rows_received = a[15];
        }
    free(all);
    /* the load's copies: the vote has no room left, so a gather of their
    ** own, made by every rank whenever the vote passed (an outcome every
    ** rank shares) */
    /* (with the steps' times, as nanoseconds, and the strings interned) */
    enum { NE = 7 + RF_RT_DIST_NSTEPS };
    int64_t mine[NE] = {m->load_h2d_bytes, m->load_wire_bytes, m->load_found_bytes, m->strings_interned,
                        m->str_checked, m->str_checked_shared};
    for (int i = 0; i < RF_RT_DIST_NSTEPS; i++) mine[6 + i] = (int64_t)(m->step_seconds[i] * 1e9);
    mine[NE - 1] = (int64_t)((m->xport_seconds - x->xport_before_run) * 1e9);
    int64_t *copies = vst ? NULL : rf_calloc((size_t)x->size * NE + 1, sizeof *copies);
    if (!vst && !copies) vst = RF_ENOMEM;
    if (!vst) vst = rf_rt_dist_allgather_i64(x->w, x->timeout_s, "the end of the run", mine, NE, copies, d);
    for (int r = 0; r < x->size && !vst && stats; r++) {
        const int64_t *c = copies + (size_t)r * NE;
        stats[r].load_h2d_bytes = c[0];
        stats[r].load_wire_bytes = c[1];
        stats[r].load_found_bytes = c[2];
        stats[r].strings_interned = c[3];
        stats[r].str_checked = c[4];
        stats[r].str_checked_shared = c[5];
        for (int i = 0; i < RF_RT_DIST_NSTEPS; i++) stats[r].step_seconds[i] = (double)c[6 + i] / 1e9;
        stats[r].run_xport_seconds = (double)c[NE - 1] / 1e9;
    }
    free(copies);
    x->stopped = 1;
    return st ? st : vst;
}
