/*
** tools/db_import_jobs.c: the work of an import that runs beside the
** parsing, each on a thread of its own: a parsed block's columns written to
** the database (string columns encoded into their dictionaries), and an
** ended table's columns closed, dictionaries written and key checked.
**
** Owns: the pipeline. While the text loader parses block N+2 with every
** thread, blocks N and N+1's columns are written (a column per worker, the
** string columns that need a dictionary first, each encoded by a share of
** the threads; then the others, the most bytes first), and while the next
** table is read, the previous one's end runs. A block's column waits only
** for the block before to have written that column (a turn per column), so
** one slow column (a comment's strings) no longer holds every other column
** of the next block. At most RF_IMPORT_BLOCKS_IN_FLIGHT blocks and one
** table end are in flight, so memory holds three blocks' columns, not a
** file. Every column still gets its rows in file order, one block after
** another, so the database's bytes do not depend on the timing or the
** thread count; errors are reported in the order of the work: a table's end
** before an earlier block's columns before a later block's before the parse
** in hand, and only the first failure's diagnostics, so a failed import
** names the same place every time. Also the CPU time of the work it runs,
** for `import --profile`.
*/
#include "db_import_internal.h"

#include "rf_cpu.h"
#include "rf_rt_input.h"
#include "rf_sys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_WORKERS 64
#define ORDER_ITEM (-1) /* a block's work item: its rows' key order (tools/db_import_order.c) */

double rf_import_thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double rf_import_process_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- CPU time of threads started for a task ---------------------------- */

/* A parallel call whose started threads add their CPU time (nanoseconds) to
** the caller's counter: the caller counts its own thread itself. */
static _Thread_local int64_t *cpu_counter;

typedef struct timed {
    rf_db_task_fn fn;
    void *arg;
    int64_t *counter;
    pthread_t caller;
} timed;

static void timed_task(void *arg, int t)
{
    timed *tm = arg;
    int other = !pthread_equal(pthread_self(), tm->caller);
    double c0 = other ? rf_import_thread_cpu() : 0;
    tm->fn(tm->arg, t);
    if (other && tm->counter)
        __atomic_fetch_add(tm->counter, (int64_t)((rf_import_thread_cpu() - c0) * 1e9), __ATOMIC_RELAXED);
}

static void parallel_timed(int nthreads, rf_db_task_fn fn, void *arg)
{
    timed tm = {fn, arg, cpu_counter, pthread_self()};
    rf_rt_parallel(nthreads, timed_task, &tm);
}

/* ---- a block's columns ------------------------------------------------- */

struct rf_import_block_job {
    rf_importer *imp;
    itable *it;
    rf_rt_texttable tt;
    int32_t ncols;
    int32_t nitems;    /* ncols, and one more where the rows' key order is compared */
    int32_t *order;    /* the columns in the order workers take them (ORDER_ITEM: the key order) */
    int *share;        /* per column: threads for its append (its share of the bytes) */
    int32_t next;      /* the next of order to take (atomic) */
    int64_t seq;       /* the table's blocks before this one */
    int aborted;       /* (atomic) a column gave up its turn: an earlier block failed */
    int per;           /* threads for each dictionary's encoding */
    int nworkers;
    pthread_t th;
    int threaded;      /* th runs it (else it ran in the caller) */
    rf_status st[RF_DB_MAX_COLS];
    rf_diags ds[MAX_WORKERS];
    rf_status order_st;
    int64_t encode_ns, append_ns, order_ns; /* CPU */
    double wall;
    rf_status status;
    rf_diags d;
};

/* Bytes that appending n rows of column c writes (plain strings: their
** offsets and bytes). */
static int64_t col_bytes(const rf_db_column *col, const rf_rt_textcol *tc, int64_t n)
{
    if (col->enc == RF_DB_ENC_PLAIN && tc->str_off) return n * 8 + (tc->str_off[n] - tc->str_off[0]);
    return n * rf_db_col_width(col->type, col->enc);
}

static int needs_dict(const rf_db_column *col) { return col->type == RF_TYPE_STRING && col->enc == RF_DB_ENC_VALUES; }

/* order: the columns that need a dictionary first (encoding costs more than
** the bytes show), then the rest by the bytes they write, the most first
** (ties by column), so that workers taking the next column as they become
** free end together. Returns how many need a dictionary. */
static int32_t plan_order(const rf_db_table *t, const rf_rt_texttable *tt, int32_t *order)
{
    int64_t size[RF_DB_MAX_COLS];
    int32_t ndict = 0, k = 0;
    for (int32_t c = 0; c < t->ncols; c++)
        if (needs_dict(&t->cols[c])) order[k++] = c;
    ndict = k;
    for (int32_t c = 0; c < t->ncols; c++) {
        if (needs_dict(&t->cols[c])) continue;
        size[c] = col_bytes(&t->cols[c], &tt->cols[c], tt->nrows);
        int32_t j = k++;
        for (; j > ndict && size[order[j - 1]] < size[c]; j--) order[j] = order[j - 1];
        order[j] = c;
    }
    return ndict;
}

/* Waits until the block before has written item idx (a column, or ncols:
** the key order); 0 when an earlier block failed instead. */
static int take_turn(rf_import_block_job *j, int32_t idx)
{
    rf_importer *imp = j->imp;
    int ok = 1;
    pthread_mutex_lock(&imp->turn_mu);
    while (j->it->done[idx] < j->seq) {
        if (imp->turn_abort) {
            ok = 0;
            break;
        }
        pthread_cond_wait(&imp->turn_cv, &imp->turn_mu);
    }
    pthread_mutex_unlock(&imp->turn_mu);
    return ok;
}

/* Item idx of this block is written (ok) or failed: the next block's turn,
** or every waiter's release. */
static void end_turn(rf_import_block_job *j, int32_t idx, int ok)
{
    rf_importer *imp = j->imp;
    pthread_mutex_lock(&imp->turn_mu);
    if (ok) j->it->done[idx] = j->seq + 1;
    else imp->turn_abort = 1;
    pthread_cond_broadcast(&imp->turn_cv);
    pthread_mutex_unlock(&imp->turn_mu);
}

static void column_worker(void *arg, int w)
{
    rf_import_block_job *j = arg;
    rf_db_writer *wr = j->imp->w;
    const rf_db_table *t = &rf_db_writer_db(wr)->tables[j->it->tid];
    int64_t enc_ns = 0, app_ns = 0; /* of the threads an encoding or an append starts */
    double c0 = rf_import_thread_cpu(), enc_own = 0, order_own = 0;
    for (;;) {
        int32_t k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (k >= j->nitems) break;
        int32_t c = j->order[k];
        int32_t idx = c == ORDER_ITEM ? j->ncols : c;
        if (!take_turn(j, idx)) {
            __atomic_store_n(&j->aborted, 1, __ATOMIC_RELAXED);
            break;
        }
        if (c == ORDER_ITEM) {
            /* the block before has compared its rows: the table's order
            ** state is this block's alone until its turn ends */
            double o0 = rf_import_thread_cpu();
            rf_status st = rf_import_order_block(&j->it->key_order, &j->tt);
            if (!st) st = rf_import_order_block(&j->it->fd_order, &j->tt);
            order_own += rf_import_thread_cpu() - o0;
            j->order_st = st;
            end_turn(j, idx, !st);
            if (st) break;
            continue;
        }
        const rf_rt_textcol *col = &j->tt.cols[c];
        rf_status st;
        if (needs_dict(&t->cols[c])) {
            double e0 = rf_import_thread_cpu();
            cpu_counter = &enc_ns;
            int64_t n = j->tt.nrows;
            uint32_t *codes = rf_malloc((size_t)(n > 0 ? n : 1) * sizeof *codes);
            st = codes ? RF_OK : RF_ENOMEM;
            if (!st)
                st = rf_db_writer_encode(wr, j->it->tid, c, n, col->str_off, col->str_bytes, codes, j->per, parallel_timed,
                                         &j->ds[w]);
            enc_own += rf_import_thread_cpu() - e0;
            if (!st) st = rf_db_writer_append(wr, j->it->tid, c, n, codes, NULL, NULL, &j->ds[w]);
            free(codes);
        } else {
            cpu_counter = &app_ns;
            st = rf_db_writer_append_par(wr, j->it->tid, c, j->tt.nrows, col->data, col->str_off, col->str_bytes,
                                         j->share[c], parallel_timed, &j->ds[w]);
        }
        j->st[c] = st;
        end_turn(j, idx, !st);
        if (st) break;
    }
    cpu_counter = NULL;
    double all = rf_import_thread_cpu() - c0;
    __atomic_fetch_add(&j->encode_ns, enc_ns + (int64_t)(enc_own * 1e9), __ATOMIC_RELAXED);
    __atomic_fetch_add(&j->append_ns, app_ns + (int64_t)((all - enc_own - order_own) * 1e9), __ATOMIC_RELAXED);
    __atomic_fetch_add(&j->order_ns, (int64_t)(order_own * 1e9), __ATOMIC_RELAXED);
}

/* The workers' diagnostics into d, in worker order, and the first failed
** column's status. */
static rf_status gather(rf_diags *ds, int n, const rf_status *cst, int32_t ncols, rf_diags *d)
{
    for (int i = 0; i < n; i++) {
        for (int64_t k = 0; k < ds[i].count; k++) rf_diag_add(d, ds[i].items[k].sev, ds[i].items[k].loc, "%s", ds[i].items[k].msg);
        rf_diags_free(&ds[i]);
    }
    rf_status st = RF_OK;
    for (int32_t c = 0; c < ncols && !st; c++) st = cst[c];
    return st;
}

static void *block_main(void *arg)
{
    rf_import_block_job *j = arg;
    double t0 = rf_now();
    rf_rt_parallel(j->nworkers, column_worker, j);
    j->status = gather(j->ds, j->nworkers, j->st, j->ncols, &j->d);
    if (!j->status && j->order_st) j->status = j->order_st;
    /* columns left unwritten for an earlier block's failure, which is
    ** what gets reported */
    if (!j->status && j->aborted) j->status = RF_EINTERNAL;
    j->wall = rf_now() - t0;
    return NULL;
}

static void block_free(rf_import_block_job *j)
{
    rf_rt_texttable_free(&j->tt);
    rf_diags_free(&j->d);
    free(j->order);
    free(j->share);
    free(j);
}

rf_status rf_import_start_block(rf_importer *imp, itable *it, rf_rt_texttable *tt)
{
    if (imp->nwriting == RF_IMPORT_BLOCKS_IN_FLIGHT) return RF_EINTERNAL;
    rf_import_block_job *j = rf_calloc(1, sizeof *j);
    if (!j) return RF_ENOMEM;
    j->imp = imp;
    j->it = it;
    j->tt = *tt;
    memset(tt, 0, sizeof *tt);
    j->ncols = it->t.ncols;
    j->seq = it->blocks;
    rf_diags_init(&j->d);
    const rf_db_table *t = &rf_db_writer_db(imp->w)->tables[it->tid];
    j->order = rf_malloc(((size_t)j->ncols + 1) * sizeof *j->order);
    j->share = rf_malloc((size_t)j->ncols * sizeof *j->share);
    if (!j->order || !j->share) {
        block_free(j);
        return RF_ENOMEM;
    }
    int32_t ndict = plan_order(t, &j->tt, j->order);
    j->nitems = j->ncols;
    if (it->key_order.rising || it->fd_order.rising) {
        /* the key order first: a cheap pass, never the block's last item;
        ** a block of no rows (a header alone) takes its turn too, or the
        ** next block would wait for it for ever */
        memmove(j->order + 1, j->order, (size_t)j->ncols * sizeof *j->order);
        j->order[0] = ORDER_ITEM;
        j->nitems++;
    }
    j->nworkers = imp->threads < j->nitems ? imp->threads : j->nitems;
    if (j->nworkers > MAX_WORKERS) j->nworkers = MAX_WORKERS;
    if (j->tt.nrows < 4096) j->nworkers = 1;
    /* the dictionaries are encoded at once, each by a share of the threads */
    int32_t busy = ndict < j->nworkers ? ndict : j->nworkers;
    j->per = busy > 0 ? imp->threads / busy : 1;
    /* a thread is started per pass of an encoding (five a block): below a
    ** quarter million rows a thread, starting them costs more than they
    ** save (the codes do not depend on the number) */
    if (j->per > 1 + j->tt.nrows / 262144) j->per = (int)(1 + j->tt.nrows / 262144);
    if (j->per < 1) j->per = 1;
    /* a big column (a comment's strings) is written by several threads, a
    ** share of them by its share of the bytes: the block ends when its
    ** largest column does */
    int64_t total = 0;
    for (int32_t c = 0; c < j->ncols; c++) total += col_bytes(&t->cols[c], &j->tt.cols[c], j->tt.nrows);
    for (int32_t c = 0; c < j->ncols; c++) {
        int64_t b = col_bytes(&t->cols[c], &j->tt.cols[c], j->tt.nrows);
        j->share[c] = total > 0 ? (int)((double)b / (double)total * imp->threads + 0.5) : 1;
        if (j->share[c] < 1 || needs_dict(&t->cols[c])) j->share[c] = 1;
    }
    for (int i = 0; i < j->nworkers; i++) rf_diags_init(&j->ds[i]);
    it->blocks++;
    j->threaded = pthread_create(&j->th, NULL, block_main, j) == 0;
    if (!j->threaded) block_main(j); /* no thread to be had: the work in hand, now */
    imp->writing[imp->nwriting++] = j;
    return RF_OK;
}

static void diags_move(rf_diags *from, rf_diags *to)
{
    for (int64_t k = 0; to && k < from->count; k++)
        rf_diag_add(to, from->items[k].sev, from->items[k].loc, "%s", from->items[k].msg);
    rf_diags_free(from);
    rf_diags_init(from);
}

/* Joins the oldest block in flight and accounts for it; its status, its
** diagnostics into d. */
static rf_status join_block(rf_importer *imp, rf_diags *d)
{
    if (!imp->nwriting) return RF_OK;
    rf_import_block_job *j = imp->writing[0];
    for (int i = 1; i < imp->nwriting; i++) imp->writing[i - 1] = imp->writing[i];
    imp->writing[--imp->nwriting] = NULL;
    double t0 = rf_now();
    if (j->threaded) pthread_join(j->th, NULL);
    imp->times.wait_columns += rf_now() - t0;
    imp->times.columns.wall += j->wall;
    imp->times.encode.cpu += (double)j->encode_ns * 1e-9;
    imp->times.append.cpu += (double)j->append_ns * 1e-9;
    imp->times.order.cpu += (double)j->order_ns * 1e-9;
    rf_status st = j->status;
    diags_move(&j->d, d);
    block_free(j);
    return st;
}

/* ---- a table's end ----------------------------------------------------- */

struct rf_import_end_job {
    rf_importer *imp;
    itable *it;
    int32_t next;      /* the next column to end (atomic) */
    int nworkers;
    pthread_t th;
    int threaded;      /* th runs it (else it ran in the caller) */
    rf_status st[RF_DB_MAX_COLS];
    rf_diags ds[MAX_WORKERS];
    int64_t end_ns;    /* CPU of ending the columns */
    double end_wall, keys_wall, keys_cpu;
    int32_t keys_grouped;
    volatile int done; /* (atomic) */
    rf_status status;
    rf_diags d;
};

static void finish_worker(void *arg, int w)
{
    rf_import_end_job *j = arg;
    double c0 = rf_import_thread_cpu();
    for (;;) {
        int32_t c = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (c >= j->it->t.ncols) break;
        j->st[c] = rf_db_writer_finish_column(j->imp->w, j->it->tid, c, &j->ds[w]);
        if (j->st[c]) break;
    }
    __atomic_fetch_add(&j->end_ns, (int64_t)((rf_import_thread_cpu() - c0) * 1e9), __ATOMIC_RELAXED);
}

/* Does a functional dependency hold by the rows' order: its key columns
** rose row by row, or the declared key's did and the key is among them? */
static int fd_by_order(const itable *it)
{
    const rf_import_table *t = &it->t;
    if (t->nfd == 0) return 0; /* p[] = v: no key columns to rise */
    if (it->fd_order.rising) return 1;
    if (!it->key_order.rising) return 0;
    for (int32_t k = 0; k < t->nkey; k++)
        if (t->key[k] >= t->nfd) return 0;
    return 1;
}

/* The key and the functional dependency of a table that its rows' order
** did not settle (tools/db_import_order.c), checked on its columns read
** back from the new files, with the runtime's checks (the same messages as
** the text path), then those of the other predicates reading the same file
** (it->also). *grouped: how many were checked so. */
static rf_status check_grouped(rf_importer *imp, itable *it, const rf_import_table *t, int need_key, int need_fd,
                               rf_cpu_pool *pool, rf_diags *d);
static rf_status check_key(rf_importer *imp, itable *it, rf_cpu_pool *pool, int32_t *grouped, rf_diags *d)
{
    const rf_import_table *t = &it->t;
    int need_key = t->nkey > 0 && !it->key_order.rising;
    int need_fd = t->nfd >= 0 && !fd_by_order(it);
    *grouped = need_key + need_fd;
    rf_status st = need_key || need_fd ? check_grouped(imp, it, t, need_key, need_fd, pool, d) : RF_OK;
    /* those of the other predicates reading the file, in the program's
    ** order (only t's were compared by the rows' order: theirs are grouped) */
    for (int32_t k = 0; k < it->nalso && !st; k++) {
        const rf_import_table *a = &it->also[k];
        *grouped += (a->nkey > 0) + (a->nfd >= 0);
        st = check_grouped(imp, it, a, a->nkey > 0, a->nfd >= 0, pool, d);
    }
    return st;
}

/* t's key (need_key) and functional dependency (need_fd) over the table's
** rows, read back from the new files and grouped. */
static rf_status check_grouped(rf_importer *imp, itable *it, const rf_import_table *t, int need_key, int need_fd,
                               rf_cpu_pool *pool, rf_diags *d)
{
    if (!need_key && !need_fd) return RF_OK;
    rf_hir_var v;
    memset(&v, 0, sizeof v);
    v.name = t->pred;
    v.ncols = t->ncols;
    v.types = (rf_type *)t->types;
    v.colnames = (const char **)t->colnames;
    v.input_file = t->file;
    v.delimiter = t->delimiter;
    v.header = t->header;
    uint8_t *want = rf_calloc((size_t)t->ncols, 1);
    rf_rt_dict *dict = rf_rt_dict_new();
    rf_rt_rel rel;
    memset(&rel, 0, sizeof rel);
    rf_rt_dbcols own;
    memset(&own, 0, sizeof own);
    rf_status st = want && dict ? RF_OK : RF_ENOMEM;
    for (int32_t k = 0; k < t->nkey && !st && need_key; k++) want[t->key[k]] = 1;
    if (need_fd && want) memset(want, 1, (size_t)t->ncols);
    /* v without its key: read the key columns; then check them as the text path does */
    if (!st) st = rf_rt_load_input_db(rf_db_writer_db(imp->w), NULL, &v, want, NULL, dict, pool, imp->threads, &rel, &own, NULL, d);
    v.input_key = (int32_t *)t->key;
    v.ninput_key = t->nkey;
    const char *path = it->path ? it->path : t->file;
    /* the runtime's checks and messages, as the text path's: a repeat
    ** named by the lines its rows start on (records may span lines) */
    int64_t first = -1, dup = -1;
    int which = 0;
    if (!st && need_key) {
        st = rf_rt_input_dup(pool, &v, &rel, RF_RT_CHECK_KEY, &first, &dup);
        if (!st && dup >= 0) which = RF_RT_CHECK_KEY;
    }
    v.nkeys = t->nfd;
    v.pred_name = t->pred; /* (marks the dependency: nkeys 0 is p[] = v) */
    if (!st && !which && need_fd && (rf_rt_input_checks(&v) & RF_RT_CHECK_FD)) {
        st = rf_rt_input_dup(pool, &v, &rel, RF_RT_CHECK_FD, &first, &dup);
        if (!st && dup >= 0) which = RF_RT_CHECK_FD;
    }
    if (!st && which) {
        int64_t *lines = rf_import_lines(it, rel.nrows);
        rf_rt_input_dup_error(path, 0, &v, dict, &rel, lines, which, first, dup, d);
        free(lines);
        st = RF_EUSER;
    }
    free(rel.cols);
    rf_rt_dbcols_free(&own);
    rf_rt_dict_free(dict);
    free(want);
    return st;
}

static void *end_main(void *arg)
{
    rf_import_end_job *j = arg;
    rf_importer *imp = j->imp;
    itable *it = j->it;
    double t0 = rf_now();
    /* the columns end on workers of their own (dictionaries written at once) */
    for (int i = 0; i < j->nworkers; i++) rf_diags_init(&j->ds[i]);
    rf_rt_parallel(j->nworkers, finish_worker, j);
    rf_status st = gather(j->ds, j->nworkers, j->st, it->t.ncols, &j->d);
    if (!st) st = rf_db_writer_end_table(imp->w, it->tid, &j->d);
    double t1 = rf_now(), c1 = rf_import_thread_cpu();
    j->end_wall = t1 - t0;
    int need = (it->t.nkey > 0 && !it->key_order.rising) || (it->t.nfd >= 0 && !fd_by_order(it)) || it->nalso > 0;
    if (!st && need) {
        rf_cpu_pool *pool = NULL;
        st = rf_cpu_pool_new(imp->threads, &pool);
        if (!st) st = check_key(imp, it, pool, &j->keys_grouped, &j->d);
        rf_cpu_pool_free(pool);
    }
    j->keys_wall = rf_now() - t1;
    j->keys_cpu = rf_import_thread_cpu() - c1;
    j->status = st;
    __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static rf_status join_end(rf_importer *imp, rf_diags *d)
{
    rf_import_end_job *j = imp->ending;
    if (!j) return RF_OK;
    imp->ending = NULL;
    double t0 = rf_now();
    if (j->threaded) pthread_join(j->th, NULL);
    imp->times.wait_end += rf_now() - t0;
    imp->times.end.wall += j->end_wall;
    imp->times.end.cpu += (double)j->end_ns * 1e-9;
    imp->times.keys.wall += j->keys_wall;
    imp->times.keys.cpu += j->keys_cpu;
    imp->times.keys_grouped += j->keys_grouped;
    int32_t checks = (j->it->t.nkey > 0) + (j->it->t.nfd >= 0);
    for (int32_t k = 0; k < j->it->nalso; k++) checks += (j->it->also[k].nkey > 0) + (j->it->also[k].nfd >= 0);
    if (!j->status) imp->times.keys_ordered += checks - j->keys_grouped;
    rf_status st = j->status;
    diags_move(&j->d, d);
    rf_diags_free(&j->d);
    free(j);
    return st;
}

int rf_import_end_failed(const rf_importer *imp)
{
    const rf_import_end_job *j = imp->ending;
    return j && __atomic_load_n(&j->done, __ATOMIC_ACQUIRE) && j->status != RF_OK;
}

rf_status rf_import_start_end(rf_importer *imp, itable *it, rf_diags *d)
{
    rf_status st = rf_import_settle(imp, d);
    if (st) return st;
    rf_import_end_job *j = rf_calloc(1, sizeof *j);
    if (!j) return RF_ENOMEM;
    j->imp = imp;
    j->it = it;
    rf_diags_init(&j->d);
    j->nworkers = imp->threads < it->t.ncols ? imp->threads : it->t.ncols;
    if (j->nworkers > MAX_WORKERS) j->nworkers = MAX_WORKERS;
    j->threaded = pthread_create(&j->th, NULL, end_main, j) == 0;
    if (!j->threaded) end_main(j);
    imp->ending = j;
    return RF_OK;
}

/* ---- waiting ----------------------------------------------------------- */

rf_status rf_import_settle_block(rf_importer *imp, rf_diags *d)
{
    if (imp->failed) return imp->failed;
    if (imp->nwriting < RF_IMPORT_BLOCKS_IN_FLIGHT) return RF_OK;
    /* a failed table end comes first: it is the earlier work */
    if (rf_import_end_failed(imp)) return rf_import_settle(imp, d);
    rf_diags bd;
    rf_diags_init(&bd);
    rf_status st = join_block(imp, &bd);
    if (st) {
        /* the table end in flight may fail too, and comes first; the later
        ** blocks' work is dropped */
        rf_diags ed;
        rf_diags_init(&ed);
        rf_status est = join_end(imp, &ed);
        diags_move(&ed, d);
        if (est) st = est;
        else diags_move(&bd, d);
        while (imp->nwriting) join_block(imp, NULL);
        imp->failed = st;
    } else {
        diags_move(&bd, d);
    }
    rf_diags_free(&bd);
    return st;
}

rf_status rf_import_settle(rf_importer *imp, rf_diags *d)
{
    if (imp->failed) {
        rf_import_abandon(imp);
        return imp->failed;
    }
    rf_diags ed;
    rf_diags_init(&ed);
    rf_status st = join_end(imp, &ed);
    diags_move(&ed, d);
    rf_diags_free(&ed);
    /* the blocks oldest first: the first failure's diagnostics, none after */
    while (imp->nwriting) {
        rf_diags bd;
        rf_diags_init(&bd);
        rf_status bst = join_block(imp, &bd);
        if (!st) {
            diags_move(&bd, d);
            st = bst;
        }
        rf_diags_free(&bd);
    }
    if (st) imp->failed = st;
    return st;
}

void rf_import_abandon(rf_importer *imp)
{
    join_end(imp, NULL);
    while (imp->nwriting) join_block(imp, NULL);
}
