/*
** txn/txn_resident.c: the relations of a database kept between the
** transactions of one process (`redfox exec --each`, rf_exec called in a
** loop on one database handle).
**
** Owns: rf_txn_resident: every base and derived relation of the program as
** the last commit left it, in host memory (owned columns with room past
** their rows, where a history grows), each column named by a stamp for the
** devices' copies (rf_rt_cache_put_stamped: on the GPU the input cache's
** device part keeps the columns between runs and transactions, and copies
** only the rows appended under a stamp); the input cache of the runs (its
** dictionary codes the kept strings); and the manifest that commit wrote,
** byte for byte. A transaction takes the kept relations instead of mapping
** and checking the tables again only while the database's manifest is that
** one (no other process committed since, no commit failed after renaming);
** otherwise they are forgotten and the tables read. They change only after
** a commit: a failed transaction leaves them at the last one (rows it
** staged past a relation's end are not its rows, and their stamps are
** renewed), so memory is as atomic as the database. Where the commit's
** last step (its syncs, manifest and exchange: txn_publish.c) still runs on
** a thread, the state is kept already and the next transaction starts from
** it; the manifest is known once that step is waited for, and its failure
** makes r forget all (the state was never committed).
*/
#include "rf_txn.h"

#include "rf_cpu.h"

#include <stdlib.h>
#include <string.h>

typedef struct kept {
    char *table;
    rf_rt_rel rel;     /* owned columns, rel.types NULL (each transaction's program gives them) */
    rf_type *types;    /* the columns' types (owned) */
    int64_t cap;       /* rows of room in each column */
    uint64_t *stamps;  /* per column */
    int staged;        /* a transaction wrote rows past rel.nrows (stamps to renew if it fails) */
    int32_t inc_col;   /* the first inc_rows rows strictly increase on column inc_col (rf_txn_pred's) */
    int64_t inc_rows;
} kept;

/* A generated program compiled by an earlier transaction. */
typedef struct kept_program {
    char *key;          /* name, with_user, text */
    rf_arena arena;
    rf_hir_program *hir;
} kept_program;

enum { MAX_PROGRAMS = 16 };

struct rf_txn_resident {
    rf_rt_cache *cache;
    char hash[17];      /* the program's (derived tables' names); its programs below were compiled for it */
    char *manifest;     /* what the last commit wrote; NULL: nothing kept */
    int64_t manifest_len;
    kept *k;
    int32_t n;
    int64_t runs;
    int prepared;       /* the GPU code of later transactions compiled ahead (rf_txn_resident_prepared) */
    kept_program prog[MAX_PROGRAMS]; /* keyed by the program's hash too; kept while the relations are
                                        forgotten (they depend on no data), dropped for another program */
    int32_t nprog;
    rf_txn_publish *publishing; /* the last commit's last step, under way (its manifest not read yet) */
};

rf_txn_resident *rf_txn_resident_new(void) { return rf_calloc(1, sizeof(rf_txn_resident)); }

/* e's columns leave: so do the devices' copies of them. */
static void drop_stamps(rf_txn_resident *r, const kept *e)
{
    for (int32_t c = 0; e->stamps && c < e->rel.ncols; c++) rf_rt_cache_drop_stamp(r->cache, e->stamps[c]);
}

static void kept_free(kept *e)
{
    for (int32_t c = 0; e->rel.cols && c < e->rel.ncols; c++) rf_rt_col_free(e->rel.cols[c]);
    free(e->rel.cols);
    free(e->types);
    free(e->stamps);
    free(e->table);
    memset(e, 0, sizeof *e);
}

/* Forgets every kept relation, and the devices' copies of them. */
static void forget(rf_txn_resident *r)
{
    for (int32_t i = 0; i < r->n; i++) kept_free(&r->k[i]); /* (the device's part is forgotten whole below) */
    free(r->k);
    r->k = NULL;
    r->n = 0;
    free(r->manifest);
    r->manifest = NULL;
    r->manifest_len = 0;
    r->prepared = 0;
    rf_rt_cache_forget_device(r->cache);
}

/* The programs compiled (none in use: between transactions). */
static void forget_programs(rf_txn_resident *r)
{
    for (int32_t i = 0; i < r->nprog; i++) {
        rf_hir_free(r->prog[i].hir);
        rf_arena_free(&r->prog[i].arena);
        free(r->prog[i].key);
    }
    r->nprog = 0;
}

void rf_txn_resident_free(rf_txn_resident *r)
{
    if (!r) return;
    if (r->publishing) { /* (its outcome unasked for: rf_txn_resident_wait_publish says it) */
        rf_diags d;
        rf_diags_init(&d);
        char *m = NULL;
        int64_t n = 0;
        (void)rf_txn_publish_wait(r->publishing, NULL, NULL, &m, &n, &d);
        free(m);
        rf_diags_free(&d);
        r->publishing = NULL;
    }
    forget(r);
    forget_programs(r);
    rf_rt_cache_free(r->cache);
    free(r);
}

rf_rt_cache *rf_txn_resident_cache(rf_txn_resident *r)
{
    if (!r->cache) r->cache = rf_rt_cache_new();
    return r->cache;
}

int64_t rf_txn_resident_next_run(rf_txn_resident *r) { return ++r->runs; }

static char *program_key(const char *hash, const char *name, const char *text, int with_user)
{
    return rf_sprintf("%s\n%s\n%d\n%s", hash, name, with_user, text);
}

rf_hir_program *rf_txn_resident_program(rf_txn_resident *r, const char *hash, const char *name, const char *text,
                                        int with_user)
{
    char *key = program_key(hash, name, text, with_user);
    rf_hir_program *hir = NULL;
    for (int32_t i = 0; key && i < r->nprog && !hir; i++)
        if (!strcmp(r->prog[i].key, key)) hir = r->prog[i].hir;
    free(key);
    return hir;
}

void rf_txn_resident_keep_program(rf_txn_resident *r, const char *hash, const char *name, const char *text,
                                  int with_user, rf_arena *arena, rf_hir_program *hir)
{
    if (r->nprog == MAX_PROGRAMS || !hir) return;
    kept_program *k = &r->prog[r->nprog];
    if (!(k->key = program_key(hash, name, text, with_user))) return;
    k->arena = *arena;
    k->hir = hir;
    rf_arena_init(arena);
    r->nprog++;
}

int rf_txn_resident_owns_program(const rf_txn_resident *r, const rf_hir_program *hir)
{
    for (int32_t i = 0; hir && i < r->nprog; i++)
        if (r->prog[i].hir == hir) return 1;
    return 0;
}

int rf_txn_resident_prepared(rf_txn_resident *r, int set)
{
    if (set) r->prepared = 1;
    return r->prepared;
}

static kept *find(rf_txn_resident *r, const char *table)
{
    for (int32_t i = 0; i < r->n; i++)
        if (!strcmp(r->k[i].table, table)) return &r->k[i];
    return NULL;
}

static int same_manifest(const rf_txn_resident *r, const char *db_dir)
{
    char *path = rf_sprintf("%s/%s", db_dir, RF_DB_MANIFEST), *data = NULL;
    int64_t len = 0;
    const char *why = NULL;
    int same = path && !rf_read_file(path, &data, &len, &why) && len == r->manifest_len &&
               !memcmp(data, r->manifest, (size_t)len);
    free(data);
    free(path);
    return same;
}

rf_status rf_txn_resident_take(rf_txn_resident *r, rf_txn *t, const char *db_dir, int *taken)
{
    *taken = 0;
    if (strcmp(r->hash, t->source_hash)) forget_programs(r); /* (another program's) */
    /* (while the last commit's last step runs, its state is the one the
    ** database will hold: its manifest is checked at this one's commit) */
    int ok = (r->publishing || r->manifest) && !strcmp(r->hash, t->source_hash) && r->n == t->npreds &&
             (r->publishing || same_manifest(r, db_dir));
    for (int32_t i = 0; ok && i < t->npreds; i++) {
        const rf_txn_pred *p = &t->preds[i];
        const kept *e = find(r, p->table);
        ok = e && e->rel.ncols == p->ncols && !memcmp(e->types, p->types, (size_t)p->ncols * sizeof *e->types);
    }
    if (!ok) {
        forget(r);
        return RF_OK;
    }
    for (int32_t i = 0; i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        kept *e = find(r, p->table);
        p->cur.cols = rf_calloc((size_t)e->rel.ncols + 1, sizeof *p->cur.cols);
        if (!p->cur.cols) return RF_ENOMEM;
        for (int32_t c = 0; c < e->rel.ncols; c++) p->cur.cols[c] = e->rel.cols[c];
        p->cur.ncols = e->rel.ncols;
        p->cur.nrows = e->rel.nrows;
        p->cur.types = p->types;
        p->borrowed = 1;
        p->stamps = e->stamps;
        p->stored = !p->base; /* (every derived table was stored by the commit) */
        p->prefix = e->rel.nrows;
        p->inc_col = e->inc_col;
        p->inc_rows = e->inc_rows;
        e->staged = 0;
    }
    *taken = 1;
    return RF_OK;
}

/* Copies of the kept columns, made together: in pieces of PIECE bytes on
** the transaction's threads where they come to PARALLEL_BYTES or more (a
** history moved into bigger columns: its copy, and the faults of the new
** pages, on every core instead of one). */
#define PIECE ((int64_t)4 << 20)
#define PARALLEL_BYTES ((int64_t)16 << 20)

typedef struct copy_piece {
    char *dst;
    const char *src;
    int64_t n;
} copy_piece;

typedef struct copies {
    copy_piece *v;
    int64_t n, cap, bytes;
} copies;

/* dst[0, n) = src[0, n), now or with the others (copies_run). */
static void copies_add(copies *cs, void *dst, const void *src, int64_t n)
{
    for (int64_t at = 0; at < n; at += PIECE) {
        int64_t k = n - at < PIECE ? n - at : PIECE;
        if (cs->n == cs->cap) {
            int64_t nc = cs->cap ? cs->cap * 2 : 16;
            copy_piece *nv = rf_realloc(cs->v, (size_t)nc * sizeof *nv);
            if (!nv) { /* no room to list it: copied at once */
                memcpy((char *)dst + at, (const char *)src + at, (size_t)k);
                continue;
            }
            cs->v = nv;
            cs->cap = nc;
        }
        cs->v[cs->n++] = (copy_piece){(char *)dst + at, (const char *)src + at, k};
        cs->bytes += k;
    }
}

static void copy_pieces(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const copies *cs = ctx;
    for (int64_t i = begin; i < end; i++) memcpy(cs->v[i].dst, cs->v[i].src, (size_t)cs->v[i].n);
}

static void copies_run(copies *cs, int threads)
{
    rf_cpu_pool *pool = NULL;
    if (threads > 1 && cs->bytes >= PARALLEL_BYTES && rf_cpu_pool_new(threads, &pool) != RF_OK) pool = NULL;
    rf_cpu_parallel_for(pool, cs->n, 1, copy_pieces, cs);
    rf_cpu_pool_free(pool);
    free(cs->v);
    memset(cs, 0, sizeof *cs);
}

/* Room for need rows in e's columns (half again as much when it moves, for
** the next batches); the rows kept stay as they are, and so do their stamps. */
static rf_status reserve(kept *e, int64_t need, int threads)
{
    if (need <= e->cap) return RF_OK;
    int64_t cap = need + need / 2;
    void **cols = rf_calloc((size_t)e->rel.ncols + 1, sizeof *cols);
    rf_status st = cols ? RF_OK : RF_ENOMEM;
    copies cs = {NULL, 0, 0, 0};
    for (int32_t c = 0; !st && c < e->rel.ncols; c++) {
        int64_t w = rf_rt_type_width(e->types[c]);
        if (!(cols[c] = rf_malloc((size_t)(cap * w)))) st = RF_ENOMEM;
        else if (e->rel.nrows) copies_add(&cs, cols[c], e->rel.cols[c], e->rel.nrows * w);
    }
    copies_run(&cs, st ? 1 : threads);
    if (st) {
        for (int32_t c = 0; cols && c < e->rel.ncols; c++) free(cols[c]);
        free(cols);
        return st;
    }
    for (int32_t c = 0; c < e->rel.ncols; c++) rf_rt_col_free(e->rel.cols[c]);
    free(e->rel.cols);
    e->rel.cols = cols;
    e->cap = cap;
    return RF_OK;
}

/* src's rows written at row `at` of e's columns (room reserved). */
static void put_rows(kept *e, int64_t at, const rf_rt_rel *src, int threads)
{
    copies cs = {NULL, 0, 0, 0};
    for (int32_t c = 0; c < e->rel.ncols && src->nrows; c++) {
        int64_t w = rf_rt_type_width(e->types[c]);
        copies_add(&cs, (char *)e->rel.cols[c] + at * w, src->cols[c], src->nrows * w);
    }
    copies_run(&cs, threads);
}

rf_status rf_txn_resident_stage(rf_txn_resident *r, rf_txn *t)
{
    for (int32_t i = 0; i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        if (!p->base || !p->borrowed || !p->tail || p->has_next || !p->ins.nrows) continue;
        kept *e = find(r, p->table);
        if (!e) return RF_EINTERNAL;
        rf_status st = reserve(e, e->rel.nrows + p->ins.nrows, t->threads);
        if (st) return st;
        for (int32_t c = 0; c < e->rel.ncols; c++) p->cur.cols[c] = e->rel.cols[c]; /* (they may have moved) */
        put_rows(e, e->rel.nrows, &p->ins, t->threads);
        e->staged = 1;
        p->view.cols = rf_calloc((size_t)e->rel.ncols + 1, sizeof *p->view.cols);
        if (!p->view.cols) return RF_ENOMEM;
        for (int32_t c = 0; c < e->rel.ncols; c++) p->view.cols[c] = e->rel.cols[c];
        p->view.ncols = e->rel.ncols;
        p->view.nrows = e->rel.nrows + p->ins.nrows;
        p->view.types = p->types;
        p->has_view = 1;
    }
    return RF_OK;
}

/* p's new state as a kept relation e (new columns, new stamps). */
static rf_status keep_new(rf_txn_resident *r, rf_txn_pred *p, kept *e, int threads)
{
    kept n;
    memset(&n, 0, sizeof n);
    n.table = rf_strdup(p->table);
    n.types = rf_malloc(((size_t)p->ncols + 1) * sizeof *n.types);
    n.stamps = rf_calloc((size_t)p->ncols + 1, sizeof *n.stamps);
    rf_status st = n.table && n.types && n.stamps ? RF_OK : RF_ENOMEM;
    if (!st) {
        memcpy(n.types, p->types, (size_t)p->ncols * sizeof *n.types);
        n.rel.ncols = p->ncols;
        n.rel.cols = rf_calloc((size_t)n.rel.ncols + 1, sizeof *n.rel.cols);
        if (!n.rel.cols) st = RF_ENOMEM;
    }
    if (!st && p->has_next) {
        /* the new state made by this transaction: moved, not copied */
        for (int32_t c = 0; c < n.rel.ncols; c++) {
            n.rel.cols[c] = p->next.cols ? p->next.cols[c] : NULL;
            if (p->next.cols) p->next.cols[c] = NULL;
        }
        n.rel.nrows = n.cap = p->next.nrows;
        p->next.ncols = 0; /* (its nrows stays, for the transaction's report) */
    } else if (!st) {
        /* the stored rows (mapped from the files, or a state of the
        ** transaction's), then the new ones; a base relation with room to
        ** grow by appended batches */
        const rf_rt_rel *from = p->has_next ? &p->next : &p->cur;
        const rf_rt_rel *tail = !p->has_next && p->tail ? &p->ins : NULL;
        int64_t rows = from->nrows + (tail ? tail->nrows : 0);
        n.rel.nrows = 0;
        st = reserve(&n, p->base ? rows + rows / 2 + 1 : rows, threads);
        if (!st) put_rows(&n, 0, from, threads);
        if (!st && tail) put_rows(&n, from->nrows, tail, threads);
        n.rel.nrows = rows;
        n.inc_col = p->inc_col; /* (cur's rows first, as they were) */
        n.inc_rows = p->has_next ? 0 : p->inc_rows;
    }
    for (int32_t c = 0; !st && c < n.rel.ncols; c++) n.stamps[c] = rf_rt_cache_new_stamp(r->cache);
    if (st) {
        kept_free(&n);
        return st;
    }
    drop_stamps(r, e);
    kept_free(e);
    *e = n;
    return RF_OK;
}

int rf_txn_resident_publishing(const rf_txn_resident *r) { return r->publishing != NULL; }

int rf_txn_resident_current(const rf_txn_resident *r, const char *db_dir)
{
    return r->manifest && same_manifest(r, db_dir);
}

rf_status rf_txn_resident_wait_publish(rf_txn_resident *r, const char *db_dir, double *waited, double *seconds,
                                       rf_diags *d)
{
    if (waited) *waited = 0;
    if (seconds) *seconds = 0;
    if (!r->publishing) return RF_OK;
    (void)db_dir;
    free(r->manifest);
    r->manifest = NULL;
    /* (the manifest the commit wrote: NULL, the next
    ** transaction reads the tables) */
    rf_status st = rf_txn_publish_wait(r->publishing, waited, seconds, &r->manifest, &r->manifest_len, d);
    r->publishing = NULL;
    if (st) forget(r);
    return st;
}

void rf_txn_resident_publish(rf_txn_resident *r, rf_txn_publish *p)
{
    r->publishing = p;
    if (!p) forget(r);
}

rf_status rf_txn_resident_commit(rf_txn_resident *r, rf_txn *t, int publishing)
{
    rf_status st = r->cache ? RF_OK : RF_EINTERNAL;
    /* the relations of other programs' transactions on this database go */
    for (int32_t i = 0; !st && i < r->n; i++) {
        int mine = 0;
        for (int32_t k = 0; k < t->npreds && !mine; k++) mine = !strcmp(t->preds[k].table, r->k[i].table);
        if (!mine) {
            drop_stamps(r, &r->k[i]);
            kept_free(&r->k[i]);
            r->k[i--] = r->k[--r->n];
        }
    }
    kept *nk = st ? NULL : rf_realloc(r->k, ((size_t)t->npreds + 1) * sizeof *nk);
    if (!st && !nk) st = RF_ENOMEM;
    if (!st) r->k = nk;
    for (int32_t i = 0; !st && i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        kept *e = find(r, p->table);
        if (!e) {
            e = &r->k[r->n++];
            memset(e, 0, sizeof *e);
        }
        if (p->has_view) {
            e->rel.nrows = p->view.nrows; /* the staged rows are committed now */
        } else if (p->borrowed && !p->has_next && p->tail && p->ins.nrows) {
            st = reserve(e, e->rel.nrows + p->ins.nrows, t->threads);
            if (!st) put_rows(e, e->rel.nrows, &p->ins, t->threads);
            if (!st) e->rel.nrows += p->ins.nrows;
        } else if (!p->borrowed || p->has_next) {
            st = keep_new(r, p, e, t->threads);
        }
        if (!st && p->borrowed && !p->has_next) {
            e->inc_col = p->inc_col; /* (the kept rows first, unchanged) */
            e->inc_rows = p->inc_rows;
        }
        e->staged = 0;
    }
    free(r->manifest);
    r->manifest = NULL;
    /* the manifest this commit wrote, not DIR's: another exec may have
    ** committed over it already (a copy-on-write commit's lock is on the
    ** folder it exchanged away); the next transaction compares DIR's with it */
    if (!st && !publishing) {
        r->manifest = t->commit_manifest;
        r->manifest_len = t->commit_manifest_len;
        t->commit_manifest = NULL;
        if (!r->manifest) st = RF_EINTERNAL;
    }
    if (!st) memcpy(r->hash, t->source_hash, sizeof r->hash);
    if (st) forget(r);
    return st;
}

void rf_txn_resident_abort(rf_txn_resident *r, rf_txn *t)
{
    (void)t;
    for (int32_t i = 0; i < r->n; i++) {
        kept *e = &r->k[i];
        for (int32_t c = 0; e->staged && r->cache && c < e->rel.ncols; c++) {
            rf_rt_cache_drop_stamp(r->cache, e->stamps[c]);
            e->stamps[c] = rf_rt_cache_new_stamp(r->cache);
        }
        e->staged = 0;
    }
}
