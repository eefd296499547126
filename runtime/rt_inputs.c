/*
** runtime/rt_inputs.c: the inputs of a run, read on the host for any device:
** the input cache shared by several runs (rf_rt_cache), the files and the
** databases behind --data, the declared keys and functional dependencies
** checked once per cached file, and relations given from memory
** (rf_rt_cache_put: libredfox's inputs) standing for their files. With
** several ranks, each rank's share of a file or a table (rt_share.c), both
** kept in the cache (a text file's share apart from whole files, used when
** every rank holds its own) with their checks over all ranks made once, and
** a stream (a FIFO) rank 0 read whole kept there for the later runs.
**
** Owns: the cache's entries (the columns read, or a database's mapped
** columns) until rf_rt_cache_free, the stamps naming their columns' bytes
** for a device's copies (rf_rt_device_ops.load; whole, or per selection of
** a table's blocks: a rank's share, block skipping's), the slot of a device's part
** (released before the host columns go), a run's database handle, and the
** bytes of its input files that can be read only once (pipes, FIFOs).
*/
#include "rt_inputs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A selection of a cached table's blocks handed out (a rank's share, the
** blocks block skipping keeps): rows of their own, so stamps of their own. */
typedef struct selection {
    uint8_t *keep;    /* per table block: 1 when its rows are in */
    int64_t nblocks;
    uint64_t *stamp;  /* per column: the stamp naming the selection's rows */
    void **stamped;   /* per column: the cache's memory they were cut from (as cached.stamped) */
    uint64_t used;    /* the cache's count of hand-outs when last handed out (the oldest goes first) */
} selection;

/* The selections an entry remembers: a rank has one share, block skipping
** one selection per set of range filters; past this many the least
** recently used one is forgotten (its device copies age out of the
** device's cache like any unused column). */
#define MAX_SELECTIONS 16

/* One cached input: the file and the types it was read with. */
typedef struct cached {
    char *path;
    /* rf_rt_cache_put's rows given for one predicate: they stand for path
    ** only to the input of that predicate (its other readers read the
    ** file); NULL: to every reader of path */
    char *reader;
    /* rf_rt_cache_put's rows: their name in errors (no file was read);
    ** NULL: path */
    char *where;
    int32_t ncols;
    rf_type *types;
    char delimiter;
    int header;
    rf_rt_rel rel;
    /* the keys checked on these rows: a program declaring another one
    ** checks it before it counts on it (each as a column bit mask) */
    uint64_t keys_checked[8];
    int32_t nkeys_checked;
    int fd_checked; /* a functional predicate's dependency (first ncols - 1 columns) */
    rf_rt_dbcols *db;     /* read from a database: the columns' memory (rel.cols points into it) */
    int64_t db_size;      /* ... the state of it they are (rf_db's manifest_size, manifest_crc) */
    uint32_t db_crc;
    uint8_t *foreign;     /* rf_rt_cache_put: per column, 1 when the caller owns it (not freed here) */
    /* per column: the stamp last handed out and the memory it named. A
    ** database column read again (more blocks, or first for real after its
    ** stand-in of zeros) moves to new memory while the old is still mapped,
    ** so a column whose address changed between two hand-outs has new bytes
    ** and gets a new stamp */
    uint64_t *stamp;
    void **stamped;
    int own_stamps; /* rf_rt_cache_put_stamped: the caller's stamps, 0 for a column kept by no device */
    selection *sel; /* the selections of its blocks handed out (a database's table) */
    int32_t nsel;
    /* several ranks: rank share_rank's part of a text file among share_size
    ** ranks (0: not a share), kept for the process's later runs as one
    ** process keeps the whole file; share_whole: the whole file (a quoted
    ** field: the driver cuts the rank's rows); the checks made on it over
    ** all ranks (rf_rt_input_checks' bits) */
    int share_size, share_rank, share_whole, share_checks;
} cached;

/* v's declared key as a column mask; 0 for none, or for one past column 63
** (then it is checked every time). */
static uint64_t key_mask(const rf_hir_var *v)
{
    uint64_t m = 0;
    for (int32_t i = 0; i < v->ninput_key; i++) {
        if (v->input_key[i] >= 64) return 0;
        m |= UINT64_C(1) << v->input_key[i];
    }
    return m;
}

struct rf_rt_cache {
    rf_rt_dict *dict;
    cached *items;
    int32_t n, cap;
    uint64_t stamps;     /* stamps given so far (the next is one more) */
    uint64_t handouts;   /* selections handed out so far (selection.used) */
    rf_rt_devcache dev;  /* a device's part (the GPU's columns and dictionary) */
    rf_rt_whole_cols whole; /* plain columns dict holds whole (several ranks) */
};

rf_rt_cache *rf_rt_cache_new(void)
{
    rf_rt_cache *c = rf_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->dict = rf_rt_dict_new();
    if (!c->dict) {
        free(c);
        return NULL;
    }
    return c;
}

void rf_rt_cache_forget_device(rf_rt_cache *c)
{
    if (!c || !c->dev.release) return;
    c->dev.release(c->dev.part);
    memset(&c->dev, 0, sizeof c->dev);
}

static void selection_free(selection *sl)
{
    free(sl->keep);
    free(sl->stamp);
    free(sl->stamped);
}

static void selections_free(cached *e)
{
    for (int32_t i = 0; i < e->nsel; i++) selection_free(&e->sel[i]);
    free(e->sel);
    e->sel = NULL;
    e->nsel = 0;
}

void rf_rt_cache_free(rf_rt_cache *c)
{
    if (!c) return;
    rf_rt_whole_cols_free(&c->whole);
    rf_rt_cache_forget_device(c); /* the device's copies first: the device goes before the host rows */
    for (int32_t i = 0; i < c->n; i++) {
        free(c->items[i].path);
        free(c->items[i].reader);
        free(c->items[i].where);
        free(c->items[i].types);
        free(c->items[i].stamp);
        free(c->items[i].stamped);
        selections_free(&c->items[i]);
        if (c->items[i].db) {
            free(c->items[i].rel.cols);
            rf_rt_dbcols_free(c->items[i].db);
            free(c->items[i].db);
        } else if (c->items[i].foreign) {
            for (int32_t k = 0; k < c->items[i].rel.ncols && c->items[i].rel.cols; k++)
                if (!c->items[i].foreign[k]) free(c->items[i].rel.cols[k]);
            free(c->items[i].rel.cols);
            free(c->items[i].foreign);
        } else {
            rf_rt_rel_free(&c->items[i].rel);
        }
    }
    free(c->items);
    rf_rt_dict_free(c->dict);
    free(c);
}

static rf_status load_file(rf_rt_inputs *x, const rf_hir_var *v, const char *path, rf_rt_rel *out);

/* Does entry e hold path read as input v (the same columns, types and format)? */
static int same_input(const cached *e, const char *path, const rf_hir_var *v)
{
    return !strcmp(e->path, path) && e->ncols == v->ncols && e->delimiter == v->delimiter && e->header == v->header &&
           !memcmp(e->types, v->types, (size_t)v->ncols * sizeof *v->types);
}

/* Is v the input of predicate name (its variable's name, or the predicate's)? */
static int reads_as(const rf_hir_var *v, const char *name)
{
    return (v->name && !strcmp(v->name, name)) || (v->pred_name && !strcmp(v->pred_name, name));
}

/* The entry a run reading input v from path uses: rows given for v's
** predicate before any that stand for every reader of path; NULL: none. */
static cached *find_cached(const rf_rt_cache *c, const char *path, const rf_hir_var *v)
{
    cached *any = NULL;
    for (int32_t i = 0; c && i < c->n; i++) {
        cached *e = &c->items[i];
        if (e->share_size || !same_input(e, path, v)) continue; /* (a rank's share is not the file) */
        if (!e->reader && !any) any = e;
        else if (e->reader && reads_as(v, e->reader)) return e;
    }
    return any;
}

/* From a database: the columns of v that the program reads, into the cache
** entry e (a new one, or one an earlier program read other columns of).
** With several ranks, only this rank's blocks; *defer then says which
** checks are left to make over all ranks (rt_share.c), less those in made
** (an earlier run of this process made them; one process: made alone
** are not made again). */
static rf_status load_db(rf_rt_inputs *x, const rf_hir_var *v, cached *e, int *defer, int made)
{
    uint8_t *want = rf_malloc((size_t)v->ncols + 1);
    if (!want) return RF_ENOMEM;
    if (v->id >= 0 && v->id < x->p->nvars && x->p->vars[v->id] == v) rf_rt_input_cols_read(x->p, v->id, want);
    else memset(want, 1, (size_t)v->ncols);
    if (!e->db && !(e->db = rf_calloc(1, sizeof *e->db))) {
        free(want);
        return RF_ENOMEM;
    }
    /* where block skipping applies, only the blocks kept are read and checked */
    uint8_t *keep = NULL;
    rf_status st = RF_OK;
    const rf_db_table *t = rf_db_find_table(x->db, v->input_file);
    if (t && t->ncols == v->ncols && v->id >= 0 && v->id < x->p->nvars && x->p->vars[v->id] == v &&
        (x->o->tuning ? x->o->tuning : rf_rt_tuning_default())->block_skip) {
        int64_t nkeep = 0;
        st = rf_rt_db_blocks_needed(x->p, v->id, t, &keep, &nkeep);
    }
    int skipping = keep != NULL;
    if (!st && x->dist && t && t->ncols == v->ncols) {
        /* this rank's blocks: of those skipping keeps, or all of its share */
        int64_t nb = t->cols[0].nblocks, b0, b1;
        rf_rt_share_blocks(x->dist, nb, &b0, &b1);
        if (!keep && (keep = rf_malloc((size_t)nb + 1)) != NULL) memset(keep, 1, (size_t)nb); /* all */
        if (!keep) st = RF_ENOMEM;
        for (int64_t b = 0; b < nb && keep; b++)
            if (b < b0 || b >= b1) keep[b] = 0;
    }
    /* a device that widens narrow columns itself gets them as stored (a
    ** rank its share's blocks) */
    e->db->keep_stored = x->takes_stored;
    /* one process: the checks an earlier run made on these rows are not
    ** made again (the reader then reports them in `done`, left unmade) */
    int done = 0, *dp = x->dist ? defer : NULL;
    int checks = (v->ninput_key > 0 ? RF_RT_CHECK_KEY : 0) | (rf_rt_input_is_functional(v) ? RF_RT_CHECK_FD : 0);
    if (!x->dist && checks && !(checks & ~made)) dp = &done;
    if (!st)
        st = rf_rt_load_input_db(x->db, v->id >= 0 && v->id < x->p->nvars && x->p->vars[v->id] == v ? x->p : NULL, v,
                                 want, keep, x->dict, x->pool, x->threads, &e->rel, e->db, dp, x->d);
    if (!st && x->dist) *defer &= ~made;
    if (!st && x->dist && *defer && skipping) {
        /* a check over all ranks reads every row of the share, as one
        ** process's reads every row of the table: the blocks skipping left */
        int64_t nb = t->cols[0].nblocks, b0, b1;
        rf_rt_share_blocks(x->dist, nb, &b0, &b1);
        for (int64_t b = 0; b < nb; b++) keep[b] = b >= b0 && b < b1;
        int again = 0;
        st = rf_rt_load_input_db(x->db, x->p, v, want, keep, x->dict, x->pool, x->threads, &e->rel, e->db, &again,
                                 x->d);
    }
    free(keep);
    free(want);
    return st;
}

/* A rank's share of a database input (entry e's, handed out in dst and
** stored): the checks defer names made over all ranks (once per process:
** e remembers them), its rows cut to its blocks (those block skipping
** keeps; a column held as stored, to their selection), its reading counted
** for --profile; *kept: the table's blocks dst holds (NULL: all). */
static rf_status db_share(rf_rt_inputs *x, const rf_hir_var *v, cached *e, int defer, rf_rt_rel *dst,
                          rf_rt_stored **stored, uint8_t **kept)
{
    *kept = NULL;
    const rf_db_table *t = rf_db_find_table(x->db, v->input_file);
    if (!t || t->ncols != v->ncols) return RF_OK;
    int64_t b0, b1, br = t->block_rows;
    rf_rt_share_blocks(x->dist, t->cols[0].nblocks, &b0, &b1);
    rf_status st = RF_OK;
    if (defer) {
        int64_t r0 = b0 * br, r1 = b1 * br < t->nrows ? b1 * br : t->nrows;
        /* read whole by every rank (one block): rank 0's rows are checked */
        if (t->cols[0].nblocks == 1 && rf_rt_dist_rank(x->dist) != 0) r1 = r0;
        void **cols = rf_calloc((size_t)v->ncols + 1, sizeof *cols);
        char *mpath = rf_sprintf("%s/%s", x->db->dir, RF_DB_MANIFEST);
        if (!cols || !mpath) st = RF_ENOMEM;
        for (int32_t c = 0; c < v->ncols && !st; c++) {
            const void *col = dst->cols[c];
            /* a column held as stored: the check reads its values, widened
            ** on the host (once, for the cache's life) */
            int read = (defer & RF_RT_CHECK_FD) != 0;
            for (int32_t k = 0; k < v->ninput_key && (defer & RF_RT_CHECK_KEY); k++) read |= v->input_key[k] == c;
            if (!col && read && e->db && e->db->stored && e->db->stored[c] && t->nrows > 0 &&
                !(col = rf_rt_stored_widen(e->db->stored[c], x->threads)))
                st = RF_ENOMEM;
            cols[c] = col ? (char *)col + r0 * rf_rt_type_width(v->types[c]) : NULL;
        }
        rf_rt_rel view = {r1 > r0 ? r1 - r0 : 0, v->ncols, v->types, cols};
        /* rows are numbered as one process numbers them (rf_rt_check_input_key) */
        if (!st) st = rf_rt_share_check(x->dist, mpath, 1, v, x->dict, x->pool, &view, r0 + 1, defer, x->d);
        free(cols);
        free(mpath);
        /* made over all ranks, with one outcome on every rank: the later
        ** runs of this process skip it on every rank alike */
        uint64_t km = key_mask(v);
        if (!st && (defer & RF_RT_CHECK_KEY) && km && e->nkeys_checked < 8) e->keys_checked[e->nkeys_checked++] = km;
        if (!st && (defer & RF_RT_CHECK_FD)) e->fd_checked = 1;
    }
    if (!st) st = rf_rt_db_skip_blocks(x->p, x->db, v->id, x->o->tuning, b0, b1, dst, stored, &x->skip, kept);
    uint8_t *rd = st ? NULL : rf_malloc((size_t)v->ncols + 1);
    if (!st && !rd) st = RF_ENOMEM;
    if (!st) {
        rf_rt_input_cols_read(x->p, v->id, rd);
        int64_t bytes = 0;
        for (int32_t c = 0; c < v->ncols; c++)
            if (rd[c]) bytes += dst->nrows * rf_rt_type_width(v->types[c]);
        rf_rt_dist_read(x->dist, dst->nrows, bytes);
    }
    free(rd);
    return st;
}

/* The memory that names column i of entry e: a column held as stored is
** named by its stored column (widened or not, the same values). */
static void *column_memory(const cached *e, int32_t i)
{
    return e->db && e->db->stored && e->db->stored[i] ? (void *)e->db->stored[i] : e->rel.cols[i];
}

/* The stamp naming memory mem in a slot (*stamp, *stamped): the one given
** before while the slot names the same memory, else a new one. */
static uint64_t stamp_of(rf_rt_cache *c, uint64_t *stamp, void **stamped, void *mem)
{
    if (!*stamp || *stamped != mem) {
        *stamp = ++c->stamps;
        *stamped = mem;
    }
    return *stamp;
}

/* The stamps of entry e's columns cut to the table blocks keep flags (nb
** of them): the same selection of the same memory, the same stamps; another
** selection, or the entry's column moved (read again), new ones. */
static rf_status stamp_selection(rf_rt_cache *c, cached *e, const uint8_t *keep, int64_t nb, uint64_t *stamps)
{
    selection *sl = NULL;
    for (int32_t i = 0; i < e->nsel && !sl; i++)
        if (e->sel[i].nblocks == nb && !memcmp(e->sel[i].keep, keep, (size_t)nb)) sl = &e->sel[i];
    if (!sl) {
        if (e->nsel == MAX_SELECTIONS) {
            int32_t old = 0;
            for (int32_t i = 1; i < e->nsel; i++)
                if (e->sel[i].used < e->sel[old].used) old = i;
            selection_free(&e->sel[old]);
            e->sel[old] = e->sel[--e->nsel];
        }
        selection *n = rf_realloc(e->sel, (size_t)(e->nsel + 1) * sizeof *n);
        if (!n) return RF_ENOMEM;
        e->sel = n;
        sl = &e->sel[e->nsel];
        memset(sl, 0, sizeof *sl);
        sl->keep = rf_malloc((size_t)nb + 1);
        sl->stamp = rf_calloc((size_t)e->ncols + 1, sizeof *sl->stamp);
        sl->stamped = rf_calloc((size_t)e->ncols + 1, sizeof *sl->stamped);
        if (!sl->keep || !sl->stamp || !sl->stamped) {
            selection_free(sl);
            return RF_ENOMEM;
        }
        memcpy(sl->keep, keep, (size_t)nb);
        sl->nblocks = nb;
        e->nsel++;
    }
    sl->used = ++c->handouts;
    for (int32_t i = 0; i < e->ncols; i++) stamps[i] = stamp_of(c, &sl->stamp[i], &sl->stamped[i], column_memory(e, i));
    return RF_OK;
}

/* The stamps of entry e's columns as handed out now (its whole rows). */
static rf_status stamp_columns(rf_rt_cache *c, cached *e, uint64_t *stamps)
{
    if (!e->stamp) {
        e->stamp = rf_calloc((size_t)e->ncols + 1, sizeof *e->stamp);
        e->stamped = rf_calloc((size_t)e->ncols + 1, sizeof *e->stamped);
        if (!e->stamp || !e->stamped) {
            free(e->stamp);
            free(e->stamped);
            e->stamp = NULL;
            e->stamped = NULL;
            return RF_ENOMEM;
        }
    }
    for (int32_t i = 0; i < e->ncols; i++) {
        void *mem = column_memory(e, i);
        if (e->own_stamps) {
            stamps[i] = e->stamped[i] == e->rel.cols[i] || e->stamped[i] == mem ? e->stamp[i] : 0;
            continue;
        }
        stamps[i] = stamp_of(c, &e->stamp[i], &e->stamped[i], mem);
    }
    return RF_OK;
}

/* Opens --data's database, the first time, when it is one. */
static rf_status look_for_db(rf_rt_inputs *x)
{
    if (x->db_looked) return RF_OK;
    x->db_looked = 1;
    const char *dir = x->o->data_dir ? x->o->data_dir : ".";
    if (!rf_db_is_database(dir)) return RF_OK;
    return x->o->cache ? rf_db_open(dir, &x->db, x->d) : RF_EINTERNAL; /* rf_rt_run gives a cache */
}

/* The tuning's rank_plain_bytes (rf_rt_db_codes_shared). */
static int64_t plain_bytes(const rf_rt_inputs *in)
{
    return (in->o->tuning ? in->o->tuning : rf_rt_tuning_default())->rank_plain_bytes;
}

rf_status rf_rt_inputs_shared_strings(rf_rt_inputs *in, int64_t *top)
{
    rf_status st = look_for_db(in);
    /* (the cache's dictionary holds them from one run to the next) */
    rf_rt_whole_cols *whole = in->o->cache && in->dict == in->o->cache->dict ? &in->o->cache->whole : NULL;
    if (!st && in->db)
        st = rf_rt_db_intern_dicts(in->db, in->p, in->dict, in->threads, plain_bytes(in), whole, top, in->d);
    return st;
}

void rf_rt_inputs_codes_to_scan(const rf_rt_inputs *in, const rf_hir_var *v, uint8_t *scan)
{
    int known = v->id >= 0 && v->id < in->p->nvars && in->p->vars[v->id] == v;
    if (known) rf_rt_input_cols_read(in->p, v->id, scan);
    else memset(scan, 1, (size_t)v->ncols);
    const rf_db_table *t = in->db ? rf_db_find_table(in->db, v->input_file) : NULL;
    int same = t && t->ncols == v->ncols;
    for (int32_t c = 0; same && c < v->ncols; c++) same = t->cols[c].type == v->types[c];
    for (int32_t c = 0; c < v->ncols; c++)
        if (v->types[c] != RF_TYPE_STRING ||
            /* as rf_rt_db_intern_dicts (a variable not of the program's: no plain column whole) */
            (same && rf_rt_db_codes_shared(in->p, v->id, t, c, known ? plain_bytes(in) : 0)))
            scan[c] = 0;
}

/* Entry e's columns as the device gets them: a column held as stored goes
** as stored (where the device takes it: stored not NULL) or widened, here,
** once (every other reader). */
static rf_status hand_stored(rf_rt_inputs *x, cached *e, rf_rt_rel *dst, rf_rt_stored **stored)
{
    for (int32_t i = 0; i < e->ncols && e->db && e->db->stored; i++) {
        rf_rt_stored *s = e->db->stored[i];
        if (!s) continue;
        if (stored) {
            stored[i] = s;
            dst->cols[i] = NULL;
            continue;
        }
        if (!e->rel.cols[i] && s->nrows > 0 && !(e->rel.cols[i] = (void *)rf_rt_stored_widen(s, x->threads)))
            return RF_ENOMEM;
        dst->cols[i] = e->rel.cols[i];
    }
    return RF_OK;
}

/* Several ranks: this rank's share of text input v (path) into dst, kept
** in the cache c (NULL: none) for the process's later runs, or handed out
** from there (*borrowed), as one process keeps a whole file. Every rank
** runs the same runs and keeps the same shares, but each says whether it
** holds its share in a vote (the shares' vote when it reads them), so that
** all read again alike unless all hold theirs: a rank that stopped in an
** earlier run before keeping its share, or one whose file is a stream, as
** a FIFO on some ranks is (read once, by rank 0: never kept here, rank 0
** keeps it whole). *share 0: the whole file, of which the driver keeps the
** rank's rows. */
static rf_status load_share(rf_rt_inputs *x, const rf_hir_var *v, const char *path, rf_rt_cache *c, rf_rt_rel *dst,
                            int *borrowed, int *share)
{
    int me = rf_rt_dist_rank(x->dist), n = rf_rt_dist_size(x->dist), checks = rf_rt_input_checks(v);
    int stream = rf_rt_share_is_stream(path);
    cached *e = NULL;
    for (int32_t i = 0; c && !stream && i < c->n && !e; i++) {
        cached *it = &c->items[i];
        if (it->share_size == n && it->share_rank == me && same_input(it, path, v) && !(checks & ~it->share_checks))
            e = it;
    }
    if (c && !stream) {
        rf_rt_dist_vote *all = rf_calloc((size_t)n, sizeof *all);
        if (!all) return RF_ENOMEM; /* the next vote tells the others */
        /* (the shares' vote's layout, v[2] the stream flag: where the path
        ** is a stream on other ranks, this vote met theirs, and both say so) */
        int64_t mine[RF_RT_DIST_VOTE_N] = {e != NULL, 0, 0};
        rf_status st = rf_rt_dist_allgather(x->dist, 0, mine, all, "the kept shares of an input file", x->d);
        int kept = 1, streams = 0;
        for (int q = 0; q < n && !st; q++) {
            kept &= all[q].v[0] != 0;
            streams += all[q].v[2] != 0;
        }
        free(all);
        if (!st) st = rf_rt_share_streams_alike(path, v, streams, n, x->d);
        if (st) return st;
        if (kept) {
            dst->nrows = e->rel.nrows;
            dst->cols = rf_calloc((size_t)v->ncols + 1, sizeof *dst->cols);
            if (!dst->cols) return RF_ENOMEM;
            for (int32_t i = 0; i < v->ncols; i++) dst->cols[i] = e->rel.cols[i];
            *borrowed = 1;
            *share = !e->share_whole;
            return RF_OK;
        }
    }
    int whole = 0;
    rf_status st = rf_rt_share_text(x->dist, path, v, x->dict, x->pool, x->threads, dst, &whole, x->d);
    *share = !whole;
    if (st || !c || stream) return st;
    /* kept: the cache takes the columns, the run borrows them */
    if (e) {
        rf_rt_rel_free(&e->rel);
        e->rel = *dst;
        e->rel.types = e->types;
    } else {
        if (c->n == c->cap) {
            int32_t ncap = c->cap ? c->cap * 2 : 16;
            cached *m = rf_realloc(c->items, (size_t)ncap * sizeof *m);
            if (!m) return RF_OK; /* (not kept: read again next run) */
            c->items = m;
            c->cap = ncap;
        }
        cached k;
        memset(&k, 0, sizeof k);
        k.path = rf_strdup(path);
        k.types = rf_malloc((size_t)(v->ncols + 1) * sizeof *k.types);
        if (!k.path || !k.types) {
            free(k.path);
            free(k.types);
            return RF_OK;
        }
        memcpy(k.types, v->types, (size_t)v->ncols * sizeof *v->types);
        k.ncols = v->ncols;
        k.delimiter = v->delimiter;
        k.header = v->header;
        k.rel = *dst;
        k.rel.types = k.types;
        k.share_size = n;
        k.share_rank = me;
        e = &c->items[c->n++];
        *e = k;
    }
    e->share_whole = whole;
    e->share_checks = checks;
    dst->cols = rf_calloc((size_t)v->ncols + 1, sizeof *dst->cols);
    if (!dst->cols) return RF_ENOMEM;
    for (int32_t i = 0; i < v->ncols; i++) dst->cols[i] = e->rel.cols[i];
    *borrowed = 1;
    return RF_OK;
}

static rf_status load_input(rf_rt_inputs *x, const rf_hir_var *v, rf_rt_rel *dst, int *borrowed, int *share,
                            uint64_t *stamps, rf_rt_stored **stored)
{
    const char *dir = x->o->data_dir ? x->o->data_dir : ".";
    char *path = rf_sprintf("%s/%s", dir, v->input_file);
    if (!path) return RF_ENOMEM;
    rf_rt_cache *c = x->o->cache;
    rf_status lst = look_for_db(x);
    if (lst) {
        free(path);
        return lst;
    }
    /* a stream (a FIFO) on several ranks, read whole by rank 0, which keeps
    ** it in the cache where there is one (--repeat: it cannot be read
    ** twice); it still takes part in the shares' vote (below) */
    int kept_stream = x->dist && !x->db && c && rf_rt_dist_rank(x->dist) == 0 && rf_rt_share_is_stream(path) &&
                      !rf_rt_cache_holds_put(c, path, NULL, v);
    if (x->dist && !x->db && !kept_stream && !rf_rt_cache_holds(c, path, v)) {
        /* a text file on several ranks: this rank's part of it, kept apart
        ** from whole files (one given from memory is used as a whole) */
        rf_status st = load_share(x, v, path, c, dst, borrowed, share);
        free(path);
        return st;
    }
    if (!c) {
        rf_status st = load_file(x, v, path, dst);
        free(path);
        return st;
    }
    int defer = 0; /* checks a rank's share leaves to all ranks */
    cached *hit = find_cached(c, path, v);
    if (!hit) {
        if (c->n == c->cap) {
            int32_t ncap = c->cap ? c->cap * 2 : 16;
            cached *n = rf_realloc(c->items, (size_t)ncap * sizeof *n);
            if (!n) {
                free(path);
                return RF_ENOMEM;
            }
            c->items = n;
            c->cap = ncap;
        }
        cached e;
        memset(&e, 0, sizeof e);
        e.path = path;
        e.ncols = v->ncols;
        e.delimiter = v->delimiter;
        e.header = v->header;
        e.types = rf_malloc((size_t)(v->ncols + 1) * sizeof *e.types);
        if (!e.types) {
            free(path);
            return RF_ENOMEM;
        }
        memcpy(e.types, v->types, (size_t)v->ncols * sizeof *v->types);
        rf_status st = x->db ? load_db(x, v, &e, &defer, 0) : load_file(x, v, path, &e.rel);
        if (st) {
            free(path);
            free(e.types);
            if (e.db) {
                free(e.rel.cols);
                rf_rt_dbcols_free(e.db);
                free(e.db);
            }
            return st;
        }
        e.rel.types = e.types;
        if (x->db) {
            e.db_size = x->db->manifest_size;
            e.db_crc = x->db->manifest_crc;
        }
        /* rf_rt_load_input checked them (a rank's share: the checks over
        ** all ranks, db_share, once they pass) */
        if (key_mask(v) && !(defer & RF_RT_CHECK_KEY)) e.keys_checked[e.nkeys_checked++] = key_mask(v);
        e.fd_checked = rf_rt_input_is_functional(v) && !(defer & RF_RT_CHECK_FD);
        c->items[c->n] = e;
        hit = &c->items[c->n++];
    } else {
        uint64_t km = key_mask(v);
        int known = 0;
        for (int32_t i = 0; i < hit->nkeys_checked && km; i++) known |= hit->keys_checked[i] == km;
        rf_status st = RF_OK;
        if (hit->db && x->db && (hit->db_size != x->db->manifest_size || hit->db_crc != x->db->manifest_crc)) {
            /* replaced since (or committed to by another process): its
            ** columns kept, and those this run would add or the blocks it
            ** would select by the new manifest, are of two states of the
            ** database, which no run may mix (rows past a column's end) */
            rf_error(x->d, rf_mkloc(path, 0, 0),
                     "the database changed since this table was read and kept (rf_database_keep_inputs): another "
                     "process replaced it or committed to it; forget the kept inputs to read it again");
            free(path);
            return RF_EUSER;
        }
        if (hit->db) {
            /* the columns this program reads that earlier ones did not; a
            ** rank's share: less the checks over all ranks an earlier run of
            ** this process made (every rank ran the same runs, so every
            ** rank skips them alike: no collective one makes and another not) */
            st = load_db(x, v, hit, &defer, (known ? RF_RT_CHECK_KEY : 0) | (hit->fd_checked ? RF_RT_CHECK_FD : 0));
        } else {
            /* rows given from memory are named as given, not as a file never read */
            const char *at = hit->where ? hit->where : path;
            int from = hit->where ? RF_RT_ROWS_GIVEN : RF_RT_ROWS_OF_FILE;
            if (v->ninput_key > 0 && !known) st = rf_rt_check_input_key(at, from, v, x->dict, x->pool, &hit->rel, x->d);
            if (!st && rf_rt_input_is_functional(v) && !hit->fd_checked) {
                st = rf_rt_check_input_fd(at, from, v, x->dict, x->pool, &hit->rel, x->d);
                if (!st) hit->fd_checked = 1;
            }
        }
        free(path);
        if (st) return st;
        if (km && !known && !(defer & RF_RT_CHECK_KEY) && hit->nkeys_checked < 8)
            hit->keys_checked[hit->nkeys_checked++] = km;
    }
    /* share the columns: kernels only read inputs */
    dst->nrows = hit->rel.nrows;
    dst->cols = rf_calloc((size_t)v->ncols + 1, sizeof *dst->cols);
    if (!dst->cols) return RF_ENOMEM;
    for (int32_t i = 0; i < v->ncols; i++) dst->cols[i] = hit->rel.cols[i];
    *borrowed = 1;
    if (!x->takes_stored) stored = NULL;
    rf_status hst = hand_stored(x, hit, dst, stored);
    if (hst) return hst;
    int from_db = hit->db && x->db && v->id >= 0 && v->id < x->p->nvars && x->p->vars[v->id] == v;
    const rf_db_table *t = from_db ? rf_db_find_table(x->db, v->input_file) : NULL;
    uint8_t *kept = NULL; /* the table's blocks handed out (NULL: all) */
    rf_status st = RF_OK;
    if (from_db && x->dist) {
        /* a rank's share */
        *share = t && t->ncols == v->ncols && t->cols[0].nblocks == 1 ? 2 : 1;
        st = db_share(x, v, hit, defer, dst, stored, &kept);
    } else if (from_db) {
        /* from a database: only the blocks the program's range filters can use */
        st = rf_rt_db_skip_blocks(x->p, x->db, v->id, x->o->tuning, 0, INT64_MAX, dst, stored, &x->skip, &kept);
    } else if (kept_stream) {
        *share = 1; /* every row is rank 0's share */
        char *at = rf_sprintf("%s/%s", dir, v->input_file);
        st = at ? rf_rt_share_text_given(x->dist, at, v, dst->nrows, x->d) : RF_ENOMEM;
        free(at);
        return st;
    } else if (x->dist) {
        return RF_OK; /* a share cut by the driver (rt_run.c): no stamps */
    }
    if (st || !stamps) {
        free(kept);
        return st;
    }
    if (kept) {
        /* a selection of the table's blocks: stamps of its own */
        st = stamp_selection(c, hit, kept, t->cols[0].nblocks, stamps);
        free(kept);
        return st;
    }
    if (dst->nrows != hit->rel.nrows) return RF_OK;
    /* columns handed out as the cache holds them */
    st = stamp_columns(c, hit, stamps);
    for (int32_t i = 0; i < v->ncols && !st; i++) {
        int as_stored = stored && stored[i];
        if (as_stored ? stored[i] != hit->db->stored[i] : dst->cols[i] != hit->rel.cols[i]) stamps[i] = 0;
    }
    return st;
}

/* A file read whole once by the run (a pipe, a FIFO). */
struct rf_rt_read_once {
    uint64_t dev, ino;
    char *text;
    int64_t size;
};

static rf_status load_file(rf_rt_inputs *x, const rf_hir_var *v, const char *path, rf_rt_rel *out)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode)) {
        /* a pipe or FIFO ends once read: another input reading it (another
        ** predicate, other types) parses the bytes this run read, where
        ** opening it again would wait for a writer that never comes */
        struct rf_rt_read_once *e = NULL;
        for (int32_t i = 0; i < x->nonce && !e; i++)
            if (x->once[i].dev == (uint64_t)sb.st_dev && x->once[i].ino == (uint64_t)sb.st_ino) e = &x->once[i];
        if (!e) {
            struct rf_rt_read_once *n = rf_realloc(x->once, (size_t)(x->nonce + 1) * sizeof *n);
            if (!n) return RF_ENOMEM;
            x->once = n;
            e = &x->once[x->nonce++];
            memset(e, 0, sizeof *e);
            e->dev = (uint64_t)sb.st_dev;
            e->ino = (uint64_t)sb.st_ino;
        }
        return rf_rt_load_input_once(path, &e->text, &e->size, v, x->dict, x->pool, x->threads, x->o->load_progress,
                                     x->o->progress_ctx, out, x->d);
    }
    return rf_rt_load_input_shown(path, v, x->dict, x->pool, x->threads, x->o->load_progress, x->o->progress_ctx,
                                  out, x->d);
}

/* ---- a run's inputs ------------------------------------------------------- */

void rf_rt_inputs_init(rf_rt_inputs *in, const rf_rt_env *env)
{
    memset(in, 0, sizeof *in);
    in->p = env->p;
    in->o = env->o;
    in->dict = env->dict;
    in->pool = env->pool;
    in->threads = env->threads;
    in->d = env->d;
}

rf_status rf_rt_inputs_read(rf_rt_inputs *in, const rf_hir_var *v, rf_rt_rel *out, int *borrowed, int *share,
                            uint64_t *stamps, rf_rt_stored **stored)
{
    *borrowed = 0;
    *share = 0;
    return load_input(in, v, out, borrowed, share, stamps, stored);
}

void rf_rt_inputs_close(rf_rt_inputs *in)
{
    for (int32_t i = 0; i < in->nonce; i++) free(in->once[i].text);
    free(in->once);
    in->once = NULL;
    in->nonce = 0;
    rf_db_close(in->db);
    in->db = NULL;
    rf_rt_dbskip_free(&in->skip);
}

rf_rt_dict *rf_rt_cache_dict(rf_rt_cache *c) { return c->dict; }

rf_rt_devcache *rf_rt_cache_device(rf_rt_cache *c) { return c ? &c->dev : NULL; }

/* (the plain columns held whole go with the dictionary) */
void rf_rt_cache_take_dict(rf_rt_cache *c)
{
    c->dict = NULL;
    rf_rt_whole_cols_free(&c->whole);
}

void rf_rt_cache_give_dict(rf_rt_cache *c, rf_rt_result *r)
{
    if (!r || !r->dict_borrowed || r->dict != c->dict) return;
    r->dict_borrowed = 0;
    c->dict = NULL;
    rf_rt_whole_cols_free(&c->whole);
}

int rf_rt_cache_holds(const rf_rt_cache *c, const char *path, const rf_hir_var *v)
{
    return find_cached(c, path, v) != NULL;
}

int64_t rf_rt_cache_input_rows(const rf_rt_cache *c, const char *path, const rf_hir_var *v)
{
    const cached *e = find_cached(c, path, v);
    return e ? e->rel.nrows : -1;
}

int rf_rt_cache_holds_put(const rf_rt_cache *c, const char *path, const char *reader, const rf_hir_var *v)
{
    for (int32_t i = 0; c && i < c->n; i++) {
        const cached *e = &c->items[i];
        if (e->foreign && same_input(e, path, v) && (reader ? e->reader && !strcmp(e->reader, reader) : !e->reader))
            return 1;
    }
    return 0;
}

static rf_status cache_put(rf_rt_cache *c, const char *path, const char *reader, const char *where,
                           const rf_hir_var *v, rf_rt_rel *rel, const uint8_t *foreign, const uint64_t *stamps,
                           int holds)
{
    if (c->n == c->cap) {
        int32_t ncap = c->cap ? c->cap * 2 : 16;
        cached *n = rf_realloc(c->items, (size_t)ncap * sizeof *n);
        if (!n) return RF_ENOMEM;
        c->items = n;
        c->cap = ncap;
    }
    cached e;
    memset(&e, 0, sizeof e);
    e.path = rf_strdup(path);
    e.reader = reader ? rf_strdup(reader) : NULL;
    e.where = where ? rf_strdup(where) : NULL;
    e.ncols = v->ncols;
    e.delimiter = v->delimiter;
    e.header = v->header;
    e.types = rf_malloc((size_t)(v->ncols + 1) * sizeof *e.types);
    e.foreign = rf_calloc((size_t)v->ncols + 1, 1);
    if (stamps) {
        e.stamp = rf_calloc((size_t)v->ncols + 1, sizeof *e.stamp);
        e.stamped = rf_calloc((size_t)v->ncols + 1, sizeof *e.stamped);
    }
    if (!e.path || (reader && !e.reader) || (where && !e.where) || !e.types || !e.foreign || (stamps && (!e.stamp || !e.stamped))) {
        free(e.path);
        free(e.reader);
        free(e.where);
        free(e.types);
        free(e.foreign);
        free(e.stamp);
        free(e.stamped);
        return RF_ENOMEM;
    }
    /* the caller's stamps, for the columns as given (stamp_columns keeps
    ** them while the columns stay where they are; 0: one of the cache's) */
    e.own_stamps = stamps != NULL;
    for (int32_t i = 0; stamps && i < v->ncols; i++)
        if (stamps[i]) {
            e.stamp[i] = stamps[i];
            e.stamped[i] = rel->cols ? rel->cols[i] : NULL;
        }
    memcpy(e.types, v->types, (size_t)v->ncols * sizeof *v->types);
    if (foreign) memcpy(e.foreign, foreign, (size_t)v->ncols);
    e.rel = *rel;
    e.rel.types = e.types;
    memset(rel, 0, sizeof *rel);
    /* unless the caller vouches for them, no key or dependency is known to
    ** hold: the first run reading it checks them */
    if (holds && key_mask(v)) e.keys_checked[e.nkeys_checked++] = key_mask(v);
    e.fd_checked = holds && rf_rt_input_is_functional(v);
    c->items[c->n++] = e;
    return RF_OK;
}

rf_status rf_rt_cache_put_stamped(rf_rt_cache *c, const char *path, const rf_hir_var *v, rf_rt_rel *rel,
                                  const uint8_t *foreign, const uint64_t *stamps, int holds)
{
    return cache_put(c, path, NULL, NULL, v, rel, foreign, stamps, holds);
}

rf_status rf_rt_cache_put(rf_rt_cache *c, const char *path, const char *reader, const char *where,
                          const rf_hir_var *v, rf_rt_rel *rel, const uint8_t *foreign)
{
    return cache_put(c, path, reader, where, v, rel, foreign, NULL, 0);
}

uint64_t rf_rt_cache_new_stamp(rf_rt_cache *c) { return ++c->stamps; }

void rf_rt_cache_drop_stamp(rf_rt_cache *c, uint64_t stamp)
{
    if (c && stamp && c->dev.drop) c->dev.drop(c->dev.part, stamp);
}

void rf_rt_cache_drop_puts(rf_rt_cache *c)
{
    int32_t k = 0;
    for (int32_t i = 0; c && i < c->n; i++) {
        cached *e = &c->items[i];
        if (!e->foreign) {
            c->items[k++] = *e;
            continue;
        }
        for (int32_t j = 0; j < e->rel.ncols && e->rel.cols; j++)
            if (!e->foreign[j]) free(e->rel.cols[j]);
        free(e->rel.cols);
        free(e->foreign);
        free(e->path);
        free(e->reader);
        free(e->where);
        free(e->types);
        free(e->stamp);
        free(e->stamped);
    }
    if (c) c->n = k;
}
