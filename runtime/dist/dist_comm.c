/*
** runtime/dist/dist_comm.c: the ranks of the process over MPI, and the
** collectives the partitioned executor uses, each with a deadline.
**
** Owns: starting and ending MPI (only when mpirun launched the process),
** and every MPI call of redfox. Collectives are nonblocking (MPI_I*) and
** polled until a deadline: a rank that died or hangs makes the others stop
** with an error naming the collective, instead of waiting forever. After
** such a timeout the world is broken (a collective is still pending) and
** rf_rt_dist_world_end aborts all ranks rather than finalizing.
*/
#include "dist_internal.h"
#include "rf_sys.h"
#include "rf_rt_xport.h"

#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct rf_rt_dist_world {
    int rank, size;
    int local_size; /* ranks on this host */
    int local_rank; /* this one's number among them */
    int broken; /* a collective timed out: end by aborting */
    double spin_s; /* a wait yields the core this long before it sleeps (dist_poll_pause) */
    void *xport; /* the transport every run of this process reuses (dist_xport.c) */
};

void **dist_world_xport(rf_rt_dist_world *w) { return w ? &w->xport : NULL; }

int rf_rt_dist_have_mpi(void) { return 1; }

int rf_rt_dist_mpi_started(void)
{
    int started = 0, ended = 0;
    MPI_Initialized(&started);
    MPI_Finalized(&ended);
    return started || ended;
}

rf_status rf_rt_dist_world_start(int *argc, char ***argv, rf_rt_dist_world **w, rf_diags *d)
{
    *w = NULL;
    if (!rf_rt_dist_launched()) return RF_OK;
    /* MPI starts once a process: a second MPI_Init, or one after
    ** MPI_Finalize, aborts every rank instead of failing */
    int started = 0, ended = 0;
    MPI_Initialized(&started);
    MPI_Finalized(&ended);
    if (ended) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "MPI was ended in this process (a world ended, or MPI_Finalize): "
                                          "it cannot start again, and a process has one world");
        return RF_EUSAGE;
    }
    if (started) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "MPI is already started in this process (a world is open, or the "
                                          "application called MPI_Init): a process has one world");
        return RF_EUSAGE;
    }
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "MPI_Init failed: cannot start the ranks");
        return RF_EUSER;
    }
    rf_rt_dist_world *x = rf_calloc(1, sizeof *x);
    if (!x) {
        MPI_Finalize();
        return RF_ENOMEM;
    }
    /* errors come back as codes: a failed call is reported with its rank */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &x->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &x->size);
    MPI_Comm host;
    x->local_size = 1;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) == MPI_SUCCESS) {
        MPI_Comm_size(host, &x->local_size);
        MPI_Comm_rank(host, &x->local_rank);
        MPI_Comm_free(&host);
    }
    /* cores to spare (two or more a rank, as on a GPU host): a wait
    ** yields (and sees the answer within microseconds) for 20 ms, as NCCL's
    ** waits do; ranks that share fewer cores sleep after 1 ms, so as not to
    ** slow the rank being waited for */
    x->spin_s = 2 * x->local_size <= rf_online_cpus() ? 0.02 : 1e-3;
    *w = x;
    return RF_OK;
}

int rf_rt_dist_world_rank(const rf_rt_dist_world *w) { return w ? w->rank : 0; }
int rf_rt_dist_world_size(const rf_rt_dist_world *w) { return w ? w->size : 1; }
int rf_rt_dist_world_local_size(const rf_rt_dist_world *w) { return w ? w->local_size : 1; }
int rf_rt_dist_world_local_rank(const rf_rt_dist_world *w) { return w ? w->local_rank : 0; }

void rf_rt_dist_world_end(rf_rt_dist_world *w, int exit_code)
{
    if (!w) return;
    if (w->broken) MPI_Abort(MPI_COMM_WORLD, exit_code ? exit_code : 1); /* does not return */
    dist_xport_world_end(w->xport); /* NCCL's communicator, before MPI goes */
    free(w);
    MPI_Finalize();
}

/* Between two tests of a pending request. MPI moves a large message only
** while it is tested (Open MPI's nonblocking collectives, and shared
** memory without single-copy, make progress one fragment per call): rows
** in flight (busy) are tested again at once, yielding the core to any
** rank that shares it. A vote waits for the slowest rank: yielding for
** spin_s (the world's: 20 ms when the host has two cores or more a rank,
** else 1 ms), then sleeping a little, growing to 1 ms (ranks may share
** cores: spinning would slow the rank being waited for). A nap ends up to
** its length after the answer came: GPU ranks, whose votes wait
** milliseconds for the other rank's device, could pay up to 1 ms a vote. */
void dist_poll_pause(double waited, double spin_s, int busy, long *nap)
{
    if (busy || waited < spin_s) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, *nap};
    nanosleep(&ts, NULL);
    if (*nap < 1000000) *nap *= 2;
}

const char *rf_rt_dist_limit_hint(const char *what)
{
    return strcmp(what, RF_RT_DIST_BARRIER_WHAT) ? " (--set rank_timeout_s=N changes the limit)"
                                                 : " (the limit is the caller's timeout_s)";
}

/* ---- after a timeout: which ranks never arrived ------------------------------------------- */

/* Point-to-point tags of their own (the moves' are 0; collectives match
** apart from point-to-point messages). */
enum { TAG_ASK = 30001, TAG_HERE = 30002 };
/* A wait this long (in any collective or exchange) answers the asks of a
** rank that timed out: a rank still waiting says so. */
#define ANSWER_AFTER_S 0.05
/* How long a rank that timed out waits for the others' answers. */
#define ASK_GRACE_S 1.0

static const int64_t here_word = 1, ask_word = 1;

/* Answers the asks that came: this rank is here, waiting. The number of
** asks answered. */
static int answer_asks(void)
{
    int n = 0;
    for (int i = 0; i < 1024; i++) {
        int flag = 0;
        MPI_Status s;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_ASK, MPI_COMM_WORLD, &flag, &s) != MPI_SUCCESS || !flag) break;
        int64_t v = 0;
        if (MPI_Recv(&v, 1, MPI_INT64_T, s.MPI_SOURCE, TAG_ASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) break;
        MPI_Request r;
        if (MPI_Isend(&here_word, 1, MPI_INT64_T, s.MPI_SOURCE, TAG_HERE, MPI_COMM_WORLD, &r) == MPI_SUCCESS)
            MPI_Request_free(&r);
        n++;
    }
    return n;
}

/* After this rank's wait timed out: asks every other rank whether it is
** there (a rank waiting anywhere answers, answer_asks) and waits
** ASK_GRACE_S for the answers, answering the others' asks meanwhile (they
** may have timed out too). The ranks that did not answer (they died, hang,
** or never reached a collective: the ones the others waited for) go to buf
** as "rank 2" or "ranks 0 and 2"; their number, 0 when all answered (then
** no rank can be named) or the asks could not be made. *lowest: the lowest
** rank that answered, or this one. The world is broken after: what is left
** pending goes with the abort. */
static int who_missing(rf_rt_dist_world *w, char *buf, size_t nbuf, int *lowest)
{
    *lowest = w->rank;
    int n = w->size, nmiss = 0;
    MPI_Request *req = rf_calloc((size_t)n + 1, sizeof *req);
    int64_t *got = rf_calloc((size_t)n + 1, sizeof *got);
    char *answered = rf_calloc((size_t)n + 1, 1);
    if (!req || !got || !answered) {
        free(req);
        free(got);
        free(answered);
        return 0;
    }
    int ok = 1, left = 0;
    for (int r = 0; r < n; r++) {
        req[r] = MPI_REQUEST_NULL;
        if (r == w->rank || !ok) continue;
        MPI_Request s;
        ok = MPI_Irecv(&got[r], 1, MPI_INT64_T, r, TAG_HERE, MPI_COMM_WORLD, &req[r]) == MPI_SUCCESS &&
             MPI_Isend(&ask_word, 1, MPI_INT64_T, r, TAG_ASK, MPI_COMM_WORLD, &s) == MPI_SUCCESS;
        if (ok) MPI_Request_free(&s);
        left++;
    }
    double t0 = rf_now();
    while (ok && left > 0 && rf_now() - t0 < ASK_GRACE_S) {
        answer_asks();
        for (int r = 0; r < n; r++) {
            int done = 0;
            if (req[r] == MPI_REQUEST_NULL || MPI_Test(&req[r], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done)
                continue;
            answered[r] = 1;
            left--;
            if (r < *lowest) *lowest = r;
        }
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    size_t at = 0;
    buf[0] = 0;
    for (int r = 0; r < n && ok; r++)
        if (r != w->rank && !answered[r]) nmiss++;
    for (int r = 0, k = 0; r < n && ok && nmiss > 0; r++) {
        if (r == w->rank || answered[r]) continue;
        if (req[r] != MPI_REQUEST_NULL) {
            MPI_Cancel(&req[r]);
            MPI_Request_free(&req[r]);
        }
        const char *sep = k == 0 ? (nmiss > 1 ? "ranks " : "rank ") : k == nmiss - 1 ? " and " : ", ";
        int m = snprintf(buf + at, nbuf - at, "%s%d", sep, r);
        if (m > 0 && (size_t)m < nbuf - at) at += (size_t)m;
        k++;
    }
    free(req);
    free(got);
    free(answered);
    return ok ? nmiss : 0;
}

/* A wait's timeout (or another rank's ask: its wait timed out, and the
** collective cannot complete): the error naming the ranks that did not
** answer, where they can be told. It is printed once: by the lowest rank
** still waiting (rank 0 unless rank 0 is the one missing), which the others
** make the rank that stopped the run (rf_rt_run_reports: they say nothing);
** those wait for it to print and end the ranks (its abort) for the time
** it needs, answering its asks, and end them themselves after that. */
static void timed_out(rf_rt_dist_world *w, double timeout_s, const char *what, rf_diags *d)
{
    w->broken = 1;
    char who[512];
    int lowest = w->rank;
    int nmiss = who_missing(w, who, sizeof who, &lowest);
    if (nmiss > 0)
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: no answer from %s within %g s during %s: %s%s", w->rank,
                 w->size, who, timeout_s, what, nmiss > 1 ? "they died, hang or are still busy (a limit too short), the others answered"
                 : "it died, hangs or is still busy (a limit too short), the others answered",
                 rf_rt_dist_limit_hint(what));
    else
        rf_error(d, rf_mkloc(NULL, 0, 0),
                 "rank %d of %d: no answer from the other ranks within %g s during %s: a rank died, hangs or is still "
                 "busy (a limit too short)%s",
                 w->rank, w->size, timeout_s, what, rf_rt_dist_limit_hint(what));
    if (nmiss == 0 || lowest == w->rank) return;
    rf_rt_dist_set_stopped_by(lowest);
    double t0 = rf_now();
    while (rf_now() - t0 < 2 * ASK_GRACE_S + 1) {
        answer_asks();
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* Waits for req until the deadline (busy: rows in flight). */
static rf_status wait_req_as(rf_rt_dist_world *w, MPI_Request *req, double timeout_s, int busy, const char *what,
                             rf_diags *d)
{
    double t0 = rf_now();
    long nap = 1000; /* ns, growing to 1 ms */
    for (;;) {
        int done = 0;
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
            w->broken = 1;
            rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: MPI failed during %s", w->rank, w->size, what);
            return RF_EUSER;
        }
        if (done) return RF_OK;
        double waited = rf_now() - t0;
        if ((timeout_s > 0 && waited > timeout_s) || (waited > ANSWER_AFTER_S && answer_asks())) {
            timed_out(w, timeout_s, what, d);
            return RF_EUSER;
        }
        dist_poll_pause(waited, w->spin_s, busy, &nap);
    }
}

static rf_status wait_req(rf_rt_dist_world *w, MPI_Request *req, double timeout_s, const char *what, rf_diags *d)
{
    return wait_req_as(w, req, timeout_s, 0, what, d);
}

rf_status rf_rt_dist_allgather_votes(rf_rt_dist_world *w, double timeout_s, const char *what,
                                     const rf_rt_dist_vote *mine, rf_rt_dist_vote *out, rf_diags *d)
{
    MPI_Request req;
    if (MPI_Iallgather(mine, RF_RT_DIST_VOTE_N + 1, MPI_INT64_T, out, RF_RT_DIST_VOTE_N + 1, MPI_INT64_T, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        w->broken = 1;
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: MPI failed to start %s", w->rank, w->size, what);
        return RF_EUSER;
    }
    return wait_req(w, &req, timeout_s, what, d);
}

rf_status rf_rt_dist_allgather_i64(rf_rt_dist_world *w, double timeout_s, const char *what, const int64_t *mine,
                                   int k, int64_t *all, rf_diags *d)
{
    MPI_Request req;
    if (MPI_Iallgather(mine, k, MPI_INT64_T, all, k, MPI_INT64_T, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        w->broken = 1;
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: MPI failed to start %s", w->rank, w->size, what);
        return RF_EUSER;
    }
    return wait_req(w, &req, timeout_s, what, d);
}

static rf_status alltoallv_pieces(rf_rt_dist_world *w, double timeout_s, const char *what, const char *sendbuf,
                                  const int64_t *send, const int64_t *sdispl, char **recvbuf, const int64_t *recv,
                                  int64_t all, rf_diags *d);

rf_status rf_rt_dist_alltoallv(rf_rt_dist_world *w, double timeout_s, const char *what, const char *sendbuf,
                               const int64_t *send, const int64_t *sdispl, char **recvbuf, const int64_t *recv,
                               int pieces, rf_diags *d)
{
    *recvbuf = NULL;
    int n = w->size;
    MPI_Request req;
    rf_status st;
    /* MPI's counts are ints: where any part or rank's total is 2 GiB or
    ** more (pieces: every rank saw every count in the vote that carried
    ** them, so all take the same way) the parts go point to point in pieces
    ** of 1 GiB */
    int64_t all = 0;
    for (int j = 0; j < n; j++) all += recv[j];
    pieces |= all > INT_MAX;
    for (int j = 0; j < n; j++) pieces |= send[j] > INT_MAX || sdispl[j] > INT_MAX;
    if (pieces) return alltoallv_pieces(w, timeout_s, what, sendbuf, send, sdispl, recvbuf, recv, all, d);
    int *sc = rf_calloc((size_t)n * 4 + 1, sizeof *sc);
    if (!sc) return RF_ENOMEM; /* the caller's next vote tells the others */
    int *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
    int64_t rtotal = 0;
    for (int j = 0; j < n; j++) {
        sc[j] = (int)send[j];
        sd[j] = (int)sdispl[j];
        rc[j] = (int)recv[j];
        rd[j] = (int)rtotal;
        rtotal += recv[j];
    }
    char *rb = rf_rt_alloc_big((size_t)rtotal + 1);
    if (!rb) {
        free(sc);
        w->broken = 1;
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: out of memory receiving %s", w->rank, w->size, what);
        return RF_ENOMEM;
    }
    if (MPI_Ialltoallv(sendbuf, sc, sd, MPI_BYTE, rb, rc, rd, MPI_BYTE, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        free(sc);
        free(rb);
        w->broken = 1;
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: MPI failed to start %s", w->rank, w->size, what);
        return RF_EUSER;
    }
    st = wait_req_as(w, &req, timeout_s, 1, what, d);
    free(sc);
    if (st) {
        free(rb);
        return st;
    }
    *recvbuf = rb;
    return RF_OK;
}

/* rf_rt_dist_alltoallv's parts of 2 GiB or more: each pair's part as
** point-to-point messages of at most 1 GiB (rf_rt_dist_sendrecv), this
** rank's own part copied; the same layout of the receive buffer. */
static rf_status alltoallv_pieces(rf_rt_dist_world *w, double timeout_s, const char *what, const char *sendbuf,
                                  const int64_t *send, const int64_t *sdispl, char **recvbuf, const int64_t *recv,
                                  int64_t all, rf_diags *d)
{
    int n = w->size;
    char *rb = rf_rt_alloc_big((size_t)all + 1);
    rf_rt_xbuf *xs = rf_calloc((size_t)n * 2 + 1, sizeof *xs);
    if (!rb || !xs) {
        free(rb);
        free(xs);
        w->broken = 1; /* the other ranks may be inside the exchange: abort them */
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: out of memory receiving %s", w->rank, w->size, what);
        return RF_ENOMEM;
    }
    rf_rt_xbuf *xr = xs + n;
    int ns = 0, nr = 0;
    int64_t at = 0;
    for (int j = 0; j < n; j++) {
        if (j == w->rank) {
            memcpy(rb + at, sendbuf + sdispl[j], (size_t)send[j]);
        } else {
            if (send[j]) xs[ns++] = (rf_rt_xbuf){j, (uint64_t)(uintptr_t)(sendbuf + sdispl[j]), send[j]};
            if (recv[j]) xr[nr++] = (rf_rt_xbuf){j, (uint64_t)(uintptr_t)(rb + at), recv[j]};
        }
        at += recv[j];
    }
    rf_status st = rf_rt_dist_sendrecv(w, timeout_s, what, xs, ns, xr, nr, d);
    free(xs);
    if (st) {
        free(rb);
        return st;
    }
    *recvbuf = rb;
    return RF_OK;
}

void rf_rt_dist_world_break(rf_rt_dist_world *w)
{
    if (w) w->broken = 1;
}

rf_status rf_rt_dist_alltoall_i64(rf_rt_dist_world *w, double timeout_s, const char *what, const int64_t *send,
                                  int64_t *recv, rf_diags *d)
{
    MPI_Request req;
    if (MPI_Ialltoall(send, 1, MPI_INT64_T, recv, 1, MPI_INT64_T, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        w->broken = 1;
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: MPI failed to start %s", w->rank, w->size, what);
        return RF_EUSER;
    }
    return wait_req(w, &req, timeout_s, what, d);
}

rf_status rf_rt_dist_bcast(rf_rt_dist_world *w, double timeout_s, const char *what, void *buf, int n, int root,
                           rf_diags *d)
{
    MPI_Request req;
    if (MPI_Ibcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
        w->broken = 1;
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: MPI failed to start %s", w->rank, w->size, what);
        return RF_EUSER;
    }
    return wait_req(w, &req, timeout_s, what, d);
}

/* Pieces of at most 1 GiB: MPI's counts are ints. Both sides of a pair cut
** a buffer of the same size alike, so the pieces match in order. */
#define PIECE ((int64_t)1 << 30)

static int64_t pieces(const rf_rt_xbuf *b, int n)
{
    int64_t k = 0;
    for (int i = 0; i < n; i++) k += (b[i].bytes + PIECE - 1) / PIECE;
    return k;
}

rf_status rf_rt_dist_sendrecv(rf_rt_dist_world *w, double timeout_s, const char *what, const rf_rt_xbuf *sends,
                              int nsend, const rf_rt_xbuf *recvs, int nrecv, rf_diags *d)
{
    int64_t nreq = pieces(sends, nsend) + pieces(recvs, nrecv);
    MPI_Request *req = rf_calloc((size_t)nreq + 1, sizeof *req);
    if (!req) {
        w->broken = 1; /* the others are inside the exchange: abort them */
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: out of memory during %s", w->rank, w->size, what);
        return RF_ENOMEM;
    }
    int64_t k = 0;
    int ok = 1;
    /* receives first, so that every send finds its receive posted */
    for (int i = 0; i < nrecv && ok; i++)
        for (int64_t at = 0; at < recvs[i].bytes && ok; at += PIECE) {
            int len = (int)(recvs[i].bytes - at < PIECE ? recvs[i].bytes - at : PIECE);
            ok = MPI_Irecv((char *)(uintptr_t)recvs[i].ptr + at, len, MPI_BYTE, recvs[i].peer, 0, MPI_COMM_WORLD,
                           &req[k++]) == MPI_SUCCESS;
        }
    for (int i = 0; i < nsend && ok; i++)
        for (int64_t at = 0; at < sends[i].bytes && ok; at += PIECE) {
            int len = (int)(sends[i].bytes - at < PIECE ? sends[i].bytes - at : PIECE);
            ok = MPI_Isend((const char *)(uintptr_t)sends[i].ptr + at, len, MPI_BYTE, sends[i].peer, 0,
                           MPI_COMM_WORLD, &req[k++]) == MPI_SUCCESS;
        }
    if (!ok) {
        free(req);
        w->broken = 1;
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: MPI failed to start %s", w->rank, w->size, what);
        return RF_EUSER;
    }
    /* every request until the deadline, as wait_req waits for one */
    rf_status st = RF_OK;
    double t0 = rf_now();
    long nap = 1000;
    for (;;) {
        int done = 0;
        if (MPI_Testall((int)k, req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
            w->broken = 1;
            rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: MPI failed during %s", w->rank, w->size, what);
            st = RF_EUSER;
            break;
        }
        if (done) break;
        double waited = rf_now() - t0;
        if ((timeout_s > 0 && waited > timeout_s) || (waited > ANSWER_AFTER_S && answer_asks())) {
            timed_out(w, timeout_s, what, d);
            st = RF_EUSER;
            break;
        }
        dist_poll_pause(waited, w->spin_s, 1, &nap);
    }
    free(req);
    return st;
}
