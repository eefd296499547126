/*
** txn/txn_publish.c: the last step of a transaction's copy-on-write commit
** (the new folder's files synced, its manifest written, the folder
** exchanged with the database's) run on a thread of its own, while the
** next transaction of the process runs (`redfox exec --each`); in the
** caller where the system cannot start that thread.
**
** Owns: rf_txn_publish: that thread, what it holds until it ends (the
** database writer, the transaction's open database and its lock on the
** folder, released after the exchange, as a commit releases them; and a
** SIGINT, SIGTERM or SIGHUP, held until it ends: rf_file_hold_signals) and its
** outcome (with the manifest it wrote, as the writer kept its bytes, not
** read back from the folder, which another exec may have committed over
** once exchanged: what the next transaction checks the database against),
** which the next transaction waits for before its own commit
** (commits stay in order) and the caller before it reports the transaction
** committed. The step reads nothing of the transaction's relations or of
** the dictionary (txn_store.c wrote the columns before it), so the next
** transaction may change those meanwhile.
*/
#include "rf_file.h"
#include "rf_sys.h"
#include "rf_txn.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct rf_txn_publish {
    pthread_t thread;
    int inline_run; /* the system could not start the thread: the step ran in rf_txn_publish_start */
    rf_db_writer *w;
    rf_db *db;
    int lockfd;
    char *dir;      /* the database's folder */
    rf_status st;
    rf_diags d;
    char *manifest; /* the manifest it wrote (NULL: failed, or out of memory) */
    int64_t manifest_len;
    double seconds; /* the step's time on its thread */
};

static void *publish(void *arg)
{
    rf_txn_publish *p = arg;
    double t0 = rf_now();
    p->st = rf_db_writer_commit(p->w, &p->d);
    /* the manifest it wrote, not the folder's: once exchanged, the new
    ** folder is not under this lock (it is on the old one), and another
    ** exec may commit over it before this thread could read it back */
    int64_t len = 0;
    const char *m = p->st ? NULL : rf_db_writer_manifest(p->w, &len);
    if (m && (p->manifest = rf_malloc((size_t)len + 1)) != NULL) {
        memcpy(p->manifest, m, (size_t)len);
        p->manifest_len = len;
    }
    rf_db_writer_free(p->w); /* (after a failure: the new folder removed) */
    p->w = NULL;
    rf_db_close(p->db);
    p->db = NULL;
    rf_file_unlock(p->lockfd);
    p->lockfd = -1;
    p->seconds = rf_now() - t0;
    rf_file_release_signals(); /* (held since rf_txn_publish_start) */
    return NULL;
}

rf_status rf_txn_publish_start(rf_db_writer *w, rf_db *db, int lockfd, const char *dir, rf_txn_publish **out)
{
    *out = NULL;
    rf_txn_publish *p = rf_calloc(1, sizeof *p);
    if (!p || !(p->dir = rf_strdup(dir))) {
        free(p);
        return RF_ENOMEM;
    }
    p->w = w;
    p->db = db;
    p->lockfd = lockfd;
    rf_diags_init(&p->d);
    /* a SIGINT, SIGTERM or SIGHUP waits for the end (rf_file.h): the new
    ** folder is exchanged in or removed, never left beside the database */
    rf_file_hold_signals();
    /* a thread the system cannot start now (EAGAIN: its limit of threads or
    ** processes reached) does not fail a commit whose columns are written:
    ** the step runs here, as a commit that does not end on a thread does */
    if (pthread_create(&p->thread, NULL, publish, p)) {
        p->inline_run = 1;
        (void)publish(p);
    }
    *out = p;
    return RF_OK;
}

rf_status rf_txn_publish_wait(rf_txn_publish *p, double *waited, double *seconds, char **manifest,
                              int64_t *manifest_len, rf_diags *d)
{
    double t0 = rf_now();
    if (!p->inline_run) pthread_join(p->thread, NULL);
    if (waited) *waited = rf_now() - t0;
    if (seconds) *seconds = p->seconds;
    for (int64_t i = 0; i < p->d.count; i++) rf_diag_add(d, p->d.items[i].sev, p->d.items[i].loc, "%s", p->d.items[i].msg);
    rf_status st = p->st;
    *manifest = p->manifest;
    *manifest_len = p->manifest_len;
    rf_diags_free(&p->d);
    free(p->dir);
    free(p);
    return st;
}
