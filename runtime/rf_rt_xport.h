/*
** runtime/rf_rt_xport.h: moves of rows between ranks that a device makes
** itself (runtime/rt_device.h's exchange operation), and the transport
** runtime/dist hands it for them.
**
** Owns: the types both sides share: a buffer of a grouped exchange, the
** transport (counts, then buffers), what one move does and what it sent.
** Only types: the device (runtime/gpu) and runtime/dist include it, neither
** includes the other.
*/
#ifndef RF_RT_XPORT_H
#define RF_RT_XPORT_H

#include "rf_common.h"

/* ---- moves between ranks on the device itself (runtime/dist) -------------
** Several ranks move a relation's rows through host memory (the view op)
** unless the device moves them itself: GPU to GPU over NCCL, or in the GPU
** emulator (whose device memory is host memory) over MPI. The driver hands
** the device the move and a transport, which runtime/dist provides. */

/* One buffer of a grouped exchange: bytes at device address ptr, to or
** from rank peer (never this rank: the device copies its own part). */
typedef struct rf_rt_xbuf {
    int peer;
    uint64_t ptr;
    int64_t bytes;
} rf_rt_xbuf;

typedef struct rf_rt_xport {
    void *ctx;
    int rank, size;
    /* Every rank's count for every other (send[j]: for rank j) -> recv[j]:
    ** from rank j. Starts with the ranks' vote (failed: this rank failed
    ** before the exchange, its message in d): a collective. */
    rf_status (*counts)(void *ctx, int failed, const int64_t *send, int64_t *recv, const char *what, rf_diags *d);
    /* One grouped exchange: every send and receive, in the same order on
    ** every rank for each pair; stream: the device's (NULL: none). Returns
    ** when the bytes have arrived, or with an error after the deadline. */
    rf_status (*exchange)(void *ctx, const rf_rt_xbuf *sends, int nsend, const rf_rt_xbuf *recvs, int nrecv,
                          void *stream, const char *what, rf_diags *d);
} rf_rt_xport;

/* What a move does: rows hashed by cols (runtime/dist/dist_pack.c's hash,
** bit for bit, so that a relation moved on the device meets one moved
** through host memory), all rows to rank 0, or every row to every rank. */
typedef enum { RF_RT_XMOVE_HASH, RF_RT_XMOVE_ROOT, RF_RT_XMOVE_ALL } rf_rt_xmove_kind;
typedef struct rf_rt_xmove {
    rf_rt_xmove_kind kind;
    int32_t ncols;
    const int32_t *cols;
    const char *what; /* for messages: "the hash of variable r" */
} rf_rt_xmove;

/* What one move on the device sent and received (other ranks only), or
** that it moved nothing because a rank's device had no room for it (every
** rank then says so alike, and the driver moves the rows through host
** memory instead). */
typedef struct rf_rt_xstat {
    int64_t bytes_sent, bytes_received;
    int64_t rows_sent, rows_received; /* to and from other ranks */
    int host_instead;
} rf_rt_xstat;

#endif
