/*
** runtime/dist/dist_nccl.c: rows moved GPU to GPU between ranks with NCCL.
**
** Owns: every NCCL call of redfox. The library is opened with
** dlopen("libnccl.so.2") (as the CUDA driver and NVRTC are; RF_NCCL_LIB
** names another, as RF_NVRTC_LIB does for NVRTC), so that one
** redfox binary runs where NCCL is missing: the ranks then move rows through
** host memory, and --profile says why. The communicator is bootstrapped by
** MPI (ncclGetUniqueId on rank 0, MPI_Bcast to the others) and made
** nonblocking, so that nothing NCCL does can hold a rank past the run's
** deadline (rank_timeout_s): its initialization and every exchange are
** polled (ncclCommGetAsyncError, then the stream's progress) and, past the
** deadline, the communicator is aborted (ncclCommAbort) and the world
** marked broken, so that `redfox run` aborts every rank with an error naming
** the exchange. An exchange is one group of ncclSend and ncclRecv calls (an
** all-to-all of unequal parts: the hash of rows, their gather on rank 0, a
** broadcast), bytes as ncclInt8, on the GPU executor's own stream.
*/
#include "dist_nccl.h"
#include "rf_sys.h"

#include <dlfcn.h>
#include <nccl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef ncclResult_t (*fn_get_version)(int *);
typedef ncclResult_t (*fn_get_unique_id)(ncclUniqueId *);
typedef ncclResult_t (*fn_comm_init_rank_config)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
typedef ncclResult_t (*fn_comm)(ncclComm_t);
typedef ncclResult_t (*fn_comm_get_async_error)(ncclComm_t, ncclResult_t *);
typedef ncclResult_t (*fn_send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*fn_recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
typedef ncclResult_t (*fn_group)(void);
typedef const char *(*fn_error_string)(ncclResult_t);
typedef int (*fn_stream_query)(void *); /* the driver's cuStreamQuery: 0 done, 600 not yet */

static struct {
    int tried, ok;
    char why[200];
    int version;
    fn_get_version get_version;
    fn_get_unique_id get_unique_id;
    fn_comm_init_rank_config init_rank_config;
    fn_comm abort_;
    fn_comm_get_async_error async_error;
    fn_send send;
    fn_recv recv;
    fn_group group_start, group_end;
    fn_error_string error_string;
    fn_stream_query stream_query;
} nc;

struct dist_nccl {
    ncclComm_t comm;
    int rank, size;
};

static void *sym(void *h, const char *name, int *ok)
{
    void *p = h ? dlsym(h, name) : NULL;
    if (!p && *ok) {
        *ok = 0;
        snprintf(nc.why, sizeof nc.why, "libnccl.so.2 lacks %s (NCCL older than 2.14?)", name);
    }
    return p;
}

static void load(void)
{
    if (nc.tried) return;
    nc.tried = 1;
    /* RF_NCCL_LIB names the library (and only it), as RF_NVRTC_LIB does
    ** NVRTC's; else the soname, then CUDA's folders, often not on the
    ** loader's path */
    const char *env = getenv("RF_NCCL_LIB");
    const char *names[] = {"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2"};
    void *h = NULL;
    if (env && env[0])
        h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    else
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !h; i++) h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(nc.why, sizeof nc.why, "NCCL is missing: %s cannot be loaded (%.120s)",
                 env && env[0] ? env : "libnccl.so.2", e ? e : "not found");
        return;
    }
    void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); /* already loaded by the GPU executor */
    int ok = 1;
    *(void **)&nc.get_version = sym(h, "ncclGetVersion", &ok);
    *(void **)&nc.get_unique_id = sym(h, "ncclGetUniqueId", &ok);
    *(void **)&nc.init_rank_config = sym(h, "ncclCommInitRankConfig", &ok);
    *(void **)&nc.abort_ = sym(h, "ncclCommAbort", &ok);
    *(void **)&nc.async_error = sym(h, "ncclCommGetAsyncError", &ok);
    *(void **)&nc.send = sym(h, "ncclSend", &ok);
    *(void **)&nc.recv = sym(h, "ncclRecv", &ok);
    *(void **)&nc.group_start = sym(h, "ncclGroupStart", &ok);
    *(void **)&nc.group_end = sym(h, "ncclGroupEnd", &ok);
    *(void **)&nc.error_string = sym(h, "ncclGetErrorString", &ok);
    *(void **)&nc.stream_query = cu ? dlsym(cu, "cuStreamQuery") : NULL;
    if (ok && !nc.stream_query) {
        ok = 0;
        snprintf(nc.why, sizeof nc.why, "the NVIDIA driver's cuStreamQuery cannot be found");
    }
    if (ok && nc.get_version(&nc.version) != ncclSuccess) nc.version = 0;
    nc.ok = ok;
}

int dist_nccl_loadable(char *why, size_t n)
{
    load();
    if (!nc.ok && why && n) snprintf(why, n, "%s", nc.why);
    return nc.ok;
}

void dist_nccl_version(char *buf, size_t n)
{
    load();
    /* NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch (from 2.9) */
    snprintf(buf, n, "%d.%d.%d", nc.version / 10000, nc.version / 100 % 100, nc.version % 100);
}

static const char *errstr(ncclResult_t r) { return nc.error_string ? nc.error_string(r) : "error"; }

/* Polls c's state until it leaves ncclInProgress and, with stream, until
** the stream's work is done; past the deadline aborts the communicator. */
static rf_status wait_comm(dist_nccl *c, rf_rt_dist_world *w, void *stream, double timeout_s, const char *what,
                           rf_diags *d)
{
    double t0 = rf_now();
    long nap = 1000;
    for (;;) {
        ncclResult_t a = ncclSuccess;
        ncclResult_t r = nc.async_error(c->comm, &a);
        if (r != ncclSuccess || (a != ncclSuccess && a != ncclInProgress)) {
            rf_rt_dist_world_break(w);
            rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: NCCL failed during %s: %s", c->rank, c->size, what,
                     errstr(r != ncclSuccess ? r : a));
            nc.abort_(c->comm);
            c->comm = NULL;
            return RF_EUSER;
        }
        int done = a == ncclSuccess;
        if (done && stream) {
            int q = nc.stream_query(stream);
            if (q != 0 && q != 600) {
                rf_rt_dist_world_break(w);
                rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: the GPU failed during %s (CUDA error %d)", c->rank,
                         c->size, what, q);
                return RF_EUSER;
            }
            done = q == 0;
        }
        if (done) return RF_OK;
        if (timeout_s > 0 && rf_now() - t0 > timeout_s) {
            /* the watchdog: a rank that died or hangs leaves NCCL waiting forever */
            rf_rt_dist_world_break(w);
            rf_error(d, rf_mkloc(NULL, 0, 0),
                     "rank %d of %d: no answer from the other ranks within %g s during %s (NCCL): a rank died or "
                     "hangs%s",
                     c->rank, c->size, timeout_s, what, rf_rt_dist_limit_hint(what));
            nc.abort_(c->comm);
            c->comm = NULL;
            return RF_EUSER;
        }
        /* NCCL and the GPU progress by themselves: polling often only cuts
        ** the latency of an exchange's end (yielding for its first 20 ms,
        ** then naps growing to 1 ms) */
        if (rf_now() - t0 < 0.02) {
            sched_yield();
            continue;
        }
        struct timespec ts = {0, nap};
        nanosleep(&ts, NULL);
        if (nap < 1000000) nap *= 2;
    }
}

rf_status dist_nccl_open(rf_rt_dist_world *w, double timeout_s, dist_nccl **out, char *why, size_t nwhy, rf_diags *d)
{
    *out = NULL;
    load();
    dist_nccl *c = rf_calloc(1, sizeof *c);
    if (!c) return RF_ENOMEM;
    c->rank = rf_rt_dist_world_rank(w);
    c->size = rf_rt_dist_world_size(w);
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    /* rank 0's id (an all-zero id from a rank 0 that could not make one
    ** makes every rank give up alike) */
    ncclResult_t r = ncclSuccess;
    if (c->rank == 0 && (r = nc.get_unique_id(&id)) != ncclSuccess) memset(&id, 0, sizeof id);
    rf_status st = rf_rt_dist_bcast(w, timeout_s, "NCCL's bootstrap", &id, (int)sizeof id, 0, d);
    if (st) {
        free(c);
        return st;
    }
    static const ncclUniqueId zero;
    if (!memcmp(&id, &zero, sizeof id)) {
        snprintf(why, nwhy, "NCCL did not start on rank 0: %s", errstr(r));
        free(c);
        return RF_OK;
    }
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0; /* every call returns at once: the deadline stays ours */
    r = nc.init_rank_config(&c->comm, c->size, id, c->rank, &cfg);
    if ((r != ncclSuccess && r != ncclInProgress) || !c->comm) {
        snprintf(why, nwhy, "NCCL did not start on rank %d: %s", c->rank, errstr(r));
        if (c->comm) nc.abort_(c->comm);
        free(c);
        return RF_OK;
    }
    st = wait_comm(c, w, NULL, timeout_s, "NCCL's start", d);
    if (st) {
        free(c);
        return st;
    }
    *out = c;
    return RF_OK;
}

rf_status dist_nccl_sendrecv(dist_nccl *c, rf_rt_dist_world *w, double timeout_s, const char *what,
                             const rf_rt_xbuf *sends, int nsend, const rf_rt_xbuf *recvs, int nrecv, void *stream,
                             rf_diags *d)
{
    if (!c->comm) return RF_EINTERNAL;
    ncclResult_t r = nc.group_start();
    /* in one group, a pair's sends and receives match in the order made */
    for (int i = 0; i < nrecv && (r == ncclSuccess || r == ncclInProgress); i++)
        r = nc.recv((void *)(uintptr_t)recvs[i].ptr, (size_t)recvs[i].bytes, ncclInt8, recvs[i].peer, c->comm,
                    (cudaStream_t)stream);
    for (int i = 0; i < nsend && (r == ncclSuccess || r == ncclInProgress); i++)
        r = nc.send((const void *)(uintptr_t)sends[i].ptr, (size_t)sends[i].bytes, ncclInt8, sends[i].peer, c->comm,
                    (cudaStream_t)stream);
    ncclResult_t e = nc.group_end();
    if (r == ncclSuccess || r == ncclInProgress) r = e;
    if (r != ncclSuccess && r != ncclInProgress) {
        rf_rt_dist_world_break(w);
        rf_error(d, rf_mkloc(NULL, 0, 0), "rank %d of %d: NCCL failed to start %s: %s", c->rank, c->size, what,
                 errstr(r));
        return RF_EUSER;
    }
    return wait_comm(c, w, stream, timeout_s, what, d);
}

void dist_nccl_close(dist_nccl *c)
{
    if (!c) return;
    /* after a completed run every exchange has finished: destroy frees
    ** locally; after a failure, abort does not wait for the others */
    if (c->comm) nc.abort_(c->comm);
    free(c);
}
