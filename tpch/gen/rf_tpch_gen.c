/*
** tpch/gen/rf_tpch_gen.c: rf_tpch_gen, the driver of the TPC-H generator.
**
** Owns: option checking, the output folder and files, and the parallel
** schedule: each table is cut into chunks of rows, worker threads generate
** chunks in any order into memory, and whichever worker finds the oldest
** unwritten chunk ready writes it, so files come out in row order whatever
** the number of threads. A window bounds the chunks held in memory.
*/
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rf_file.h"
#include "rf_tpch_gen.h"
#include "rf_sys.h"
#include "tpch_internal.h"

static const rf_loc nowhere = {NULL, 0, 0};

/* Output files, in the order --tables lists them in its help. */
enum { F_CUSTOMER, F_LINEITEM, F_NATION, F_ORDERS, F_PART, F_PARTSUPP, F_REGION, F_SUPPLIER, NFILES };
static const char *const file_table[NFILES] = {"customer", "lineitem", "nation", "orders",
                                               "part", "partsupp", "region", "supplier"};

/* Generation units: orders come with their lines, parts with their suppliers. */
enum { K_NATION, K_REGION, K_SUPPLIER, K_CUSTOMER, K_PART, K_ORDERS, NKINDS };

typedef struct kind_info {
    int file_a, file_b;  /* files a unit writes (b may be -1) */
    int64_t chunk;       /* rows per task */
    int64_t bytes_a, bytes_b; /* rough bytes per row, to size buffers */
} kind_info;

static const kind_info kinds[NKINDS] = {
    {F_NATION, -1, 25, 160, 0},
    {F_REGION, -1, 5, 160, 0},
    {F_SUPPLIER, -1, 16384, 160, 0},
    {F_CUSTOMER, -1, 16384, 180, 0},
    {F_PART, F_PARTSUPP, 8192, 130, 4 * 150},
    {F_ORDERS, F_LINEITEM, 8192, 115, 4 * 135},
};

typedef struct task {
    int kind;
    int64_t first, count;
    int want_a, want_b;
    rf_tpch_out a, b;
    int64_t units;
    int done;
} task;

typedef struct run {
    const rf_tpch_gen_opts *o;
    rf_tpch_ctx *ctx;
    task *tasks;
    int64_t ntasks;
    int fd[NFILES];      /* file[f].fd, or -1 */
    char *path[NFILES];
    rf_file_out file[NFILES]; /* written aside, renamed at the end */
    int lock;

    pthread_mutex_t mu;
    pthread_cond_t cv;
    int64_t next_task, next_write, window;
    int writer_busy;
    int64_t units_done, units_total;
    /* written chunks' buffers, reused: fresh pages cost a fault each */
    rf_tpch_out *spare;
    int64_t nspare, maxspare;
    /* first failure; the others stop at their next chunk */
    rf_status st;
    char *err;
} run;

static void fail(run *r, rf_status st, char *msg)
{
    /* called with r->mu held */
    if (r->st == RF_OK) {
        r->st = st;
        r->err = msg;
    } else {
        free(msg);
    }
}

static int write_all(int fd, const char *p, int64_t n)
{
    while (n > 0) {
        size_t part = n > ((int64_t)1 << 30) ? (size_t)1 << 30 : (size_t)n;
        ssize_t w = write(fd, p, part);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= w;
    }
    return 0;
}

/* A buffer for a chunk, sized for the whole chunk up front (room() grows it
** should that fall short). */
static int take_buffer(run *r, rf_tpch_out *o, int64_t want)
{
    pthread_mutex_lock(&r->mu);
    if (r->nspare) *o = r->spare[--r->nspare];
    pthread_mutex_unlock(&r->mu);
    o->len = 0;
    o->oom = 0;
    if (o->cap >= want) return 0;
    char *n = rf_realloc(o->data, (size_t)want);
    if (!n) return -1;
    o->data = n;
    o->cap = want;
    return 0;
}

/* Called with r->mu held. */
static void give_buffer(run *r, rf_tpch_out *o)
{
    if (o->data && r->nspare < r->maxspare) r->spare[r->nspare++] = *o;
    else free(o->data);
    memset(o, 0, sizeof *o);
}

static int generate(run *r, task *t)
{
    const kind_info *k = &kinds[t->kind];
    rf_tpch_out *a = t->want_a ? &t->a : NULL, *b = t->want_b ? &t->b : NULL;
    if (a && take_buffer(r, a, t->count * k->bytes_a + 4096)) return -1;
    if (b && take_buffer(r, b, t->count * k->bytes_b + 4096)) return -1;
    const rf_tpch_ctx *c = r->ctx;
    switch (t->kind) {
    case K_NATION: return rf_tpch_gen_nation(c, t->first, t->count, a);
    case K_REGION: return rf_tpch_gen_region(c, t->first, t->count, a);
    case K_SUPPLIER: return rf_tpch_gen_supplier(c, t->first, t->count, a);
    case K_CUSTOMER: return rf_tpch_gen_customer(c, t->first, t->count, a);
    case K_PART: return rf_tpch_gen_part(c, t->first, t->count, a, b);
    case K_ORDERS: return rf_tpch_gen_orders(c, t->first, t->count, a, b);
    }
    return -1;
}

/* Writes ready chunks in order; called with r->mu held, returns with it held. */
static void write_ready(run *r)
{
    r->writer_busy = 1;
    while (r->st == RF_OK && r->next_write < r->ntasks && r->tasks[r->next_write].done) {
        task *t = &r->tasks[r->next_write];
        pthread_mutex_unlock(&r->mu);
        const kind_info *k = &kinds[t->kind];
        int bad = -1;
        rf_status sst = RF_OK;
        if (r->o->sink) {
            /* rows to the caller instead of a file, in file order */
            if (t->want_a) sst = r->o->sink(r->o->sink_ctx, file_table[k->file_a], t->a.data, t->a.len);
            if (!sst && t->want_b) sst = r->o->sink(r->o->sink_ctx, file_table[k->file_b], t->b.data, t->b.len);
        } else if (t->want_a && write_all(r->fd[k->file_a], t->a.data, t->a.len)) bad = k->file_a;
        else if (t->want_b && write_all(r->fd[k->file_b], t->b.data, t->b.len)) bad = k->file_b;
        int e = errno;
        pthread_mutex_lock(&r->mu);
        give_buffer(r, &t->a);
        give_buffer(r, &t->b);
        if (sst) {
            fail(r, sst, NULL); /* the sink said why */
            break;
        }
        if (bad >= 0) {
            fail(r, RF_EIO, rf_sprintf("cannot write '%s': %s", r->path[bad], strerror(e)));
            break;
        }
        r->next_write++;
        r->units_done += t->units;
        if (r->o->progress) r->o->progress(r->o->progress_ctx, r->units_done, r->units_total);
        pthread_cond_broadcast(&r->cv);
    }
    r->writer_busy = 0;
}

static void *worker(void *arg)
{
    run *r = arg;
    pthread_mutex_lock(&r->mu);
    while (r->st == RF_OK && r->next_task < r->ntasks) {
        if (r->next_task >= r->next_write + r->window) {
            pthread_cond_wait(&r->cv, &r->mu);
            continue;
        }
        task *t = &r->tasks[r->next_task++];
        pthread_mutex_unlock(&r->mu);
        int rc = generate(r, t);
        pthread_mutex_lock(&r->mu);
        if (rc) {
            fail(r, RF_ENOMEM, rf_sprintf("out of memory generating %s rows",
                                          file_table[kinds[t->kind].file_a]));
            break;
        }
        t->done = 1;
        if (!r->writer_busy) write_ready(r);
    }
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

/* Parses --tables; sets want[file]. */
static rf_status parse_tables(const char *list, int want[NFILES], rf_diags *d)
{
    if (!list || !strcasecmp(list, "all")) {
        for (int f = 0; f < NFILES; f++) want[f] = 1;
        return RF_OK;
    }
    memset(want, 0, NFILES * sizeof *want);
    int any = 0;
    const char *p = list;
    for (;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int found = -1;
        for (int f = 0; f < NFILES; f++)
            if (strlen(file_table[f]) == n && !strncasecmp(p, file_table[f], n)) found = f;
        if (found < 0) {
            rf_error(d, nowhere,
                     "unknown table '%.*s' in the table list (known: customer, lineitem, nation, "
                     "orders, part, partsupp, region, supplier)",
                     (int)n, p);
            return RF_EUSAGE;
        }
        want[found] = any = 1;
        if (!e) break;
        p = e + 1;
    }
    return any ? RF_OK : RF_EUSAGE;
}

static rf_status check_sf(double sf, rf_diags *d)
{
    if (!(sf >= RF_TPCH_SF_MIN && sf <= RF_TPCH_SF_MAX)) {
        rf_error(d, nowhere, "scale factor %g is out of range: it must be between %g and %g", sf,
                 RF_TPCH_SF_MIN, RF_TPCH_SF_MAX);
        return RF_EUSAGE;
    }
    /* dbgen truncates other values, silently producing another scale */
    if (sf < 1.0) {
        /* whole thousandths, up to the rounding of a decimal's binary value
        ** (0.0109999999 was taken for 0.011 within 1e-6 of one, then
        ** truncated to 0.010) */
        double k = 1000 * sf;
        if (fabs(k - floor(k + 0.5)) > 1e-9) {
            rf_error(d, nowhere,
                     "scale factor %.15g is not supported: below 1 it must be a multiple of 0.001", sf);
            return RF_EUSAGE;
        }
    } else if (sf != floor(sf)) {
        rf_error(d, nowhere, "scale factor %g is not supported: from 1 up it must be a whole number",
                 sf);
        return RF_EUSAGE;
    }
    return RF_OK;
}

/* mkdir -p: creates dir and any missing parents. */
static int make_dirs(const char *dir)
{
    char *path = rf_strdup(dir);
    if (!path) {
        errno = ENOMEM;
        return -1;
    }
    int rc = 0;
    for (char *p = path + 1;; p++) {
        if (*p && *p != '/') continue;
        char c = *p;
        *p = 0;
        struct stat sb;
        if (stat(path, &sb) != 0) {
            if (errno != ENOENT || (mkdir(path, 0777) != 0 && errno != EEXIST)) rc = -1;
        } else if (!S_ISDIR(sb.st_mode)) {
            errno = ENOTDIR;
            rc = -1;
        }
        *p = c;
        if (rc || !c) break;
    }
    int e = errno;
    free(path);
    errno = e;
    return rc;
}

static rf_status open_outputs(run *r, const int want[NFILES], rf_diags *d)
{
    const char *dir = r->o->out_dir;
    if (make_dirs(dir) != 0) {
        rf_error(d, nowhere, "cannot create the output folder '%s': %s", dir, strerror(errno));
        return RF_EIO;
    }
    int busy = -1;
    rf_status lst = rf_file_lock_try(dir, &r->lock, &busy, d);
    if (!lst && r->lock < 0) {
        if (r->o->on_wait) {
            char *lp = rf_sprintf("%s/%s", dir, RF_FILE_LOCK_NAME);
            r->o->on_wait(r->o->on_wait_ctx, lp ? lp : dir);
            free(lp);
        }
        lst = rf_file_lock_wait(dir, busy, d);
        r->lock = busy;
    }
    if (lst) return lst;
    size_t dl = strlen(dir);
    const char *sep = (dl && dir[dl - 1] == '/') ? "" : "/";
    for (int f = 0; f < NFILES; f++) {
        if (!want[f]) continue;
        r->path[f] = rf_sprintf("%s%s%s.tbl", dir, sep, file_table[f]);
        if (!r->path[f]) {
            rf_error(d, nowhere, "out of memory");
            return RF_ENOMEM;
        }
        /* Aside, then renamed: never truncated in place (which also waits
        ** for the old file's pages being written back) */
        rf_file_remove_stale(r->path[f]);
        rf_status st = rf_file_out_open(&r->file[f], r->path[f], d);
        if (st) return st;
        r->fd[f] = r->file[f].fd;
    }
    return RF_OK;
}

/* Work units for the progress callback: about one per output byte, with the
** text pool (the same work at every scale) counted as 100 MB. */
#define POOL_UNITS ((int64_t)100 * 1000 * 1000)

static rf_status make_tasks(run *r, const int want[NFILES], int jobs)
{
    const rf_tpch_ctx *c = r->ctx;
    int64_t rows[NKINDS] = {25, 5, c->n_supp, c->n_cust, c->n_part, c->n_orders};
    int64_t n = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < NKINDS; k++) {
            int wa = want[kinds[k].file_a], wb = kinds[k].file_b >= 0 && want[kinds[k].file_b];
            if (!wa && !wb) continue;
            /* smaller chunks when there are few rows, so that all jobs get some */
            int64_t chunk = kinds[k].chunk;
            int64_t fair = (rows[k] + 4 * jobs - 1) / (4 * jobs);
            if (fair < chunk) chunk = fair < 512 ? 512 : fair;
            for (int64_t first = 1; first <= rows[k]; first += chunk, n++) {
                if (pass == 0) continue;
                task *t = &r->tasks[n];
                t->kind = k;
                t->first = first;
                t->count = rows[k] - first + 1 < chunk ? rows[k] - first + 1 : chunk;
                t->want_a = wa;
                t->want_b = wb;
                t->units = t->count * ((wa ? kinds[k].bytes_a : 0) + (wb ? kinds[k].bytes_b : 0));
                r->units_total += t->units;
            }
        }
        if (pass == 0) {
            r->ntasks = n;
            r->tasks = rf_calloc((size_t)(n ? n : 1), sizeof *r->tasks);
            if (!r->tasks) return RF_ENOMEM;
            n = 0;
        }
    }
    return RF_OK;
}

rf_status rf_tpch_gen(const rf_tpch_gen_opts *o, rf_diags *d)
{
    if (!o || !o->out_dir || !o->out_dir[0]) {
        rf_error(d, nowhere, "no output folder given");
        return RF_EUSAGE;
    }
    rf_status st = check_sf(o->sf, d);
    if (st != RF_OK) return st;
    int want[NFILES];
    if ((st = parse_tables(o->tables, want, d)) != RF_OK) {
        if (d->nerrors == 0) rf_error(d, nowhere, "the table list is empty");
        return st;
    }
    int jobs = o->jobs;
    if (jobs <= 0) jobs = rf_online_cpus();
    if (jobs > 256) jobs = 256;

    run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    for (int f = 0; f < NFILES; f++) {
        r.fd[f] = -1;
        rf_file_out_init(&r.file[f]);
    }
    r.lock = -1;
    rf_tpch_dists ds;
    int have_ds = 0;
    char *pool = NULL;
    rf_tpch_ctx *ctx = NULL;

    if (!o->sink && (st = open_outputs(&r, want, d)) != RF_OK) goto done;
    if ((st = rf_tpch_dists_load(&ds, d)) != RF_OK) goto done;
    have_ds = 1;
    if (!(ctx = rf_malloc(sizeof *ctx))) {
        st = RF_ENOMEM;
        rf_error(d, nowhere, "out of memory");
        goto done;
    }
    rf_tpch_ctx_init(ctx, o->sf, NULL, &ds);
    r.ctx = ctx;
    if ((st = make_tasks(&r, want, jobs)) != RF_OK) {
        rf_error(d, nowhere, "out of memory");
        goto done;
    }
    r.units_total += POOL_UNITS;
    if (o->progress) o->progress(o->progress_ctx, 0, r.units_total);
    if (!(pool = rf_tpch_pool_build(&ds, jobs, &st, d))) goto done;
    ctx->pool = pool;
    r.units_done = POOL_UNITS;
    if (o->progress) o->progress(o->progress_ctx, r.units_done, r.units_total);

    r.window = 2 * (int64_t)jobs + 2;
    r.maxspare = 2 * r.window + 2;
    r.spare = rf_calloc((size_t)r.maxspare, sizeof *r.spare);
    if (!r.spare) {
        st = RF_ENOMEM;
        rf_error(d, nowhere, "out of memory");
        goto done;
    }
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    pthread_t tid[256];
    int started = 0;
    for (int i = 1; i < jobs; i++, started++)
        if (pthread_create(&tid[i], NULL, worker, &r)) break; /* fewer threads still work */
    worker(&r);
    for (int i = 1; i <= started; i++) pthread_join(tid[i], NULL);
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    if (r.st != RF_OK) {
        st = r.st;
        if (r.err || !o->sink) rf_error(d, nowhere, "%s", r.err ? r.err : "out of memory");
    }
    for (int64_t i = 0; i < r.ntasks; i++) {
        free(r.tasks[i].a.data);
        free(r.tasks[i].b.data);
    }
    for (int64_t i = 0; i < r.nspare; i++) free(r.spare[i].data);

done:; /* (a statement: C11 allows no declaration right after a label, and clang refuses one) */
    /* all synced, then all renamed; half-written tables would pass for
    ** whole ones, so on any failure none is renamed. The renames are made
    ** under the folder's exclusive lock, which readers of a text folder
    ** hold shared from their first table to their last (rf_file.h): a
    ** reader reads every table of one generation, never some of the next */
    int renames = 0;
    for (int f = 0; f < NFILES && st == RF_OK; f++)
        if (r.fd[f] >= 0) st = rf_file_out_close(&r.file[f], d), renames = 1;
    int dirlock = -1, waited = 0;
    if (st == RF_OK && renames) st = rf_file_lock_folder(o->out_dir, &dirlock, &waited, d);
    if (st == RF_OK && waited)
        rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(o->out_dir, 0, 0),
                    "waited for the runs reading this folder before putting the new tables in place");
    /* a SIGINT, SIGTERM or SIGHUP held while the tables are renamed (else
    ** one between two renames leaves some tables of this generation and
    ** some of the last): the caller ends the process by it once they are
    ** all in place (rf_file_end_by_signal) */
    int last = -1;
    rf_file_hold_signals();
    /* (a SIGKILL between two renames: the journal's, rf_file.h) */
    if (st == RF_OK && renames) st = rf_file_renames_begin(o->out_dir, r.file, NFILES, d);
    for (int f = 0; f < NFILES && st == RF_OK; f++)
        if (r.fd[f] >= 0 && (st = rf_file_out_rename(&r.file[f], d)) == RF_OK) last = f;
    if (st == RF_OK && last >= 0) st = rf_file_sync_dir(r.path[last], d);
    if (st == RF_OK && renames) st = rf_file_renames_end(o->out_dir, d);
    rf_file_release_signals();
    rf_file_unlock(dirlock);
    for (int f = 0; f < NFILES; f++) {
        rf_file_out_abort(&r.file[f]);
        free(r.path[f]);
    }
    rf_file_unlock(r.lock);
    free(r.err);
    free(r.spare);
    free(r.tasks);
    free(ctx);
    if (pool) rf_tpch_pool_free(pool);
    if (have_ds) rf_tpch_dists_free(&ds);
    return st;
}
