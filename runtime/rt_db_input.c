/*
** runtime/rt_db_input.c: an input predicate read from a redfox database
** (db/, docs/DATABASE.md) instead of a text file: `--data DB`.
**
** Owns: which columns of an input a program reads (rf_rt_input_cols_read),
** and turning a database table into the relation the runtime expects
** (rf_rt_data.h's layouts): numeric columns are the mapped files themselves
** (no copy), string columns go through the column's own dictionary into the
** run's (each distinct string interned once, then one table lookup a row),
** plain string columns row by row into the run's, and columns the program
** never reads are zero pages that cost nothing. Only the columns read are
** opened and verified (their CRC-32C, their values), and of those, where
** block skipping applies, only the blocks kept.
** A key the program declares is not checked again when the import checked
** the same one (the manifest says so). With several ranks, the whole
** dictionaries of the dictionary-coded columns read are interned first on
** every rank alike (rf_rt_db_intern_dicts), so that their codes are shared.
*/
#include "rf_rt_input.h"

#include <stdlib.h>
#include <string.h>

static void mark_expr(const rf_qp_expr *e, int32_t side, uint8_t *read, int32_t ncols)
{
    if (!e) return;
    if (e->kind == RF_QP_E_COL && e->side == side && e->col >= 0 && e->col < ncols) read[e->col] = 1;
    for (int32_t i = 0; i < e->nargs; i++) mark_expr(e->args[i], side, read, ncols);
}

static void mark_list(const int32_t *cols, int32_t n, uint8_t *read, int32_t ncols)
{
    for (int32_t i = 0; i < n; i++)
        if (cols[i] >= 0 && cols[i] < ncols) read[cols[i]] = 1;
}

void rf_rt_input_cols_read(const rf_hir_program *p, int32_t var, uint8_t *read)
{
    int32_t nc = p->vars[var]->ncols;
    memset(read, 0, (size_t)nc);
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->out == var) {
                memset(read, 1, (size_t)nc); /* written: whatever happens, keep it whole */
                return;
            }
            for (int32_t i = 0; i < k->nin; i++) {
                if (k->in[i] != var) continue;
                switch (k->kind) {
                case RF_HIR_MAP:
                case RF_HIR_GATHER_MAP:
                case RF_HIR_JOIN_MAP:
                    if (i > 1 || (i == 1 && k->kind != RF_HIR_JOIN_MAP)) goto all;
                    mark_expr(k->filter, i, read, nc);
                    for (int32_t o = 0; o < k->nouts; o++) mark_expr(k->outs[o], i, read, nc);
                    break;
                case RF_HIR_JOIN_INDEX:
                case RF_HIR_ANTI_INDEX:
                    if (i == 0) mark_list(k->lkeys, k->nkeys, read, nc);
                    else if (i == 1) mark_list(k->rkeys, k->nkeys, read, nc);
                    else goto all;
                    break;
                case RF_HIR_GROUP:
                    if (i) goto all;
                    mark_list(k->group, k->ngroup, read, nc);
                    break;
                case RF_HIR_REDUCE:
                    if (i) goto all;
                    mark_list(k->group, k->ngroup, read, nc);
                    for (int32_t a = 0; a < k->naggs; a++)
                        if (k->aggs[a].col >= 0 && k->aggs[a].col < nc) read[k->aggs[a].col] = 1;
                    break;
                case RF_HIR_SORT:
                    if (i) goto all;
                    for (int32_t o = 0; o < k->norder; o++)
                        if (k->order[o].col >= 0 && k->order[o].col < nc) read[k->order[o].col] = 1;
                    break;
                default:
                all:
                    /* gathers, copies, unions, differences, inserts: whole rows */
                    memset(read, 1, (size_t)nc);
                    return;
                }
            }
        }
}

void rf_rt_dbcols_free(rf_rt_dbcols *c)
{
    if (!c) return;
    for (int32_t i = 0; i < c->ncols; i++) {
        rf_db_unmap(&c->maps[i]);
        free(c->owned[i]);
        if (c->blocks) free(c->blocks[i]);
        if (c->like_key) free(c->like_key[i]);
        if (c->stored) rf_rt_stored_free(c->stored[i]);
    }
    for (int32_t i = 0; i < c->nretired; i++) rf_rt_stored_free(c->retired[i]);
    free(c->retired);
    free(c->stored);
    free(c->like_key);
    free(c->maps);
    free(c->owned);
    free(c->loaded);
    free(c->blocks);
    memset(c, 0, sizeof *c);
}

typedef struct remap_job {
    const uint32_t *in;
    uint32_t *out;
    const uint32_t *map;
    int64_t n;
    int nthreads;
    const uint8_t *keep; /* NULL: every row; else only the kept blocks' rows (the others 0) */
    int64_t block_rows;
} remap_job;

static void remap_part(void *arg, int tid)
{
    remap_job *j = arg;
    int64_t lo = j->n * tid / j->nthreads, hi = j->n * (tid + 1) / j->nthreads;
    if (!j->keep) {
        for (int64_t i = lo; i < hi; i++) j->out[i] = j->map[j->in[i]];
        return;
    }
    for (int64_t i = lo; i < hi;) {
        int64_t b = i / j->block_rows, e = (b + 1) * j->block_rows < hi ? (b + 1) * j->block_rows : hi;
        if (j->keep[b])
            for (; i < e; i++) j->out[i] = j->map[j->in[i]];
        else
            for (; i < e; i++) j->out[i] = 0; /* unchecked: never read */
    }
}

/* Rows at a time a plain string column is interned in (a bulk intern's
** work arrays take 16 bytes a row; fewer, bigger batches cost fewer passes
** over the dictionary's tables). */
#define PLAIN_BATCH ((int64_t)1 << 22)

/* A plain string column into the run's dictionary: each row of the kept
** blocks (keep NULL: all) interned, in row order (all of them: the codes the
** text path gives); the other rows' codes are 0 and never read. The rows
** are interned straight from the mapped offsets (row i ends where row i + 1
** starts, both in one run of kept, checked blocks), but for a run's last
** row, whose end is its block's end: the next offset is in a block not
** read, or past the file's last. */
rf_status rf_rt_db_load_strings(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep, rf_rt_dict *dict,
                                int threads, uint32_t **out, rf_diags *d)
{
    rf_db_map m = {0, 0}, sm = {0, 0};
    const uint64_t *off = NULL;
    const char *bytes = NULL;
    rf_status st = rf_db_map_strings(db, t, c, keep, &m, &sm, &off, &bytes, d);
    if (st) return st;
    const rf_db_column *col = &t->cols[c];
    /* (u64 offsets read as int64: the same representation, below 2^63) */
    const int64_t *o = (const int64_t *)off;
    int64_t n = t->nrows, br = t->block_rows, done = 0, count0 = rf_rt_dict_count(dict);
    uint32_t *codes = rf_rt_alloc_big(((size_t)n + 1) * sizeof *codes);
    if (!codes) st = RF_ENOMEM;
    /* runs of kept blocks, a batch of rows at a time */
    for (int64_t b0 = 0; b0 < col->nblocks && !st;) {
        int64_t b1 = b0;
        while (b1 < col->nblocks && (!keep || keep[b1])) b1++;
        int64_t r0 = b0 * br, r1 = b1 * br < n ? b1 * br : n;
        for (int64_t r = r0; r < r1 - 1 && !st; r += PLAIN_BATCH) {
            int64_t k = r1 - 1 - r < PLAIN_BATCH ? r1 - 1 - r : PLAIN_BATCH;
            st = rf_rt_dict_intern_many(dict, o + r, bytes, k, codes + r, threads);
            done += k;
            /* the rest of the column is likely as new as this (a plain
            ** column's strings are mostly distinct): the tables grow once */
            if (!st && done == k && n > done)
                rf_rt_dict_reserve(dict, (int64_t)((double)(rf_rt_dict_count(dict) - count0) / (double)k * (double)(n - done)));
        }
        if (r1 > r0 && !st) {
            int64_t last = r1 - 1;
            st = rf_rt_dict_intern(dict, bytes + o[last], col->blocks[last / br].max - o[last], codes + last);
            done++;
        }
        /* a skipped block: zero codes (never read) */
        if (b1 < col->nblocks && !st) {
            int64_t z0 = b1 * br, z1 = (b1 + 1) * br < n ? (b1 + 1) * br : n;
            memset(codes + z0, 0, (size_t)(z1 - z0) * sizeof *codes);
            b1++;
        }
        b0 = b1;
    }
    rf_db_unmap(&m);
    rf_db_unmap(&sm);
    if (st) {
        free(codes);
        return st;
    }
    *out = codes;
    return RF_OK;
}

/* Column c's stored column, if any, retired (kept until own is freed):
** the column is read again. */
static rf_status retire_stored(rf_rt_dbcols *own, int32_t c)
{
    if (!own->stored[c]) return RF_OK;
    rf_rt_stored **r = rf_realloc(own->retired, (size_t)(own->nretired + 1) * sizeof *r);
    if (!r) return RF_ENOMEM;
    own->retired = r;
    own->retired[own->nretired++] = own->stored[c];
    own->stored[c] = NULL;
    return RF_OK;
}

/* Column c of t into the run: mapped, held as stored (stored set: a narrow
** column for a reader that widens it itself; *col NULL), or its codes moved
** into dict's. */
static rf_status load_col(const rf_db *db, const rf_db_table *t, int32_t c, const uint8_t *keep, rf_rt_dict *dict,
                          int threads, int stored, rf_rt_dbcols *own, void **col, rf_diags *d)
{
    rf_status rst = retire_stored(own, c);
    if (rst) return rst;
    if (stored && t->cols[c].narrow && t->cols[c].type != RF_TYPE_STRING && db->block_crcs) {
        /* (string codes are moved into the run's dictionary on the host: widened) */
        rf_db_map m = {0, 0};
        rf_rt_stored *s = NULL;
        rf_status st = rf_db_map_column_stored(db, t, c, keep, &m, d);
        if (!st) st = rf_rt_stored_new(t, c, keep, &m, &s);
        rf_db_unmap(&m);
        if (st) return st;
        rf_db_unmap(&own->maps[c]);
        free(own->owned[c]);
        own->owned[c] = NULL;
        own->stored[c] = s;
        *col = NULL;
        return RF_OK;
    }
    if (t->cols[c].enc == RF_DB_ENC_PLAIN) {
        uint32_t *codes = NULL;
        rf_status st = rf_rt_db_load_strings(db, t, c, keep, dict, threads, &codes, d);
        if (st) return st;
        rf_db_unmap(&own->maps[c]);
        free(own->owned[c]);
        own->owned[c] = codes;
        *col = codes;
        return RF_OK;
    }
    const void *data = NULL;
    rf_db_map m = {0, 0};
    rf_status st = rf_db_map_column_blocks(db, t, c, keep, &m, &data, d);
    if (st) return st;
    if (t->cols[c].type != RF_TYPE_STRING) {
        rf_db_unmap(&own->maps[c]);
        own->maps[c] = m;
        *col = (void *)data;
        return RF_OK;
    }
    rf_db_map dm = {0, 0};
    const uint64_t *off;
    const char *bytes;
    st = rf_db_map_dict(db, t, c, &dm, &off, &bytes, d);
    uint64_t nd = t->cols[c].dict_count;
    uint32_t *map = NULL, *codes = NULL;
    if (!st) {
        map = rf_malloc(((size_t)nd + 1) * sizeof *map);
        codes = rf_rt_alloc_big(((size_t)t->nrows + 1) * sizeof *codes);
        if (!map || !codes) st = RF_ENOMEM;
    }
    /* the dictionary is in order of first appearance, so interning it in
    ** code order gives the codes interning the rows would */
    if (!st && nd) st = rf_rt_dict_intern_many(dict, (const int64_t *)off, bytes, (int64_t)nd, map, threads);
    if (!st) {
        remap_job j = {data, codes, map, t->nrows, threads < 1 ? 1 : threads, db->block_crcs ? keep : NULL,
                       t->block_rows};
        if (t->nrows < 65536) j.nthreads = 1;
        rf_rt_parallel(j.nthreads, remap_part, &j);
    }
    free(map);
    rf_db_unmap(&dm);
    rf_db_unmap(&m);
    if (st) {
        free(codes);
        return st;
    }
    rf_db_unmap(&own->maps[c]);
    free(own->owned[c]);
    own->owned[c] = codes;
    *col = codes;
    return RF_OK;
}

/* 1 when the import checked exactly the key v declares. */
static int key_checked(const rf_db_table *t, const rf_hir_var *v)
{
    if (t->nkey != v->ninput_key) return 0;
    for (int32_t i = 0; i < v->ninput_key; i++) {
        int found = 0;
        for (int32_t j = 0; j < t->nkey; j++) found |= t->key[j] == v->input_key[i];
        if (!found) return 0;
    }
    return 1;
}

static const char *type_list(const rf_type *ty, int32_t n, rf_buf *b)
{
    rf_buf_putc(b, '(');
    for (int32_t i = 0; i < n; i++) rf_buf_printf(b, "%s%s", i ? ", " : "", rf_val_type_name(ty[i]));
    rf_buf_putc(b, ')');
    return rf_buf_cstr(b);
}

/* The blocks to read of a column whose blocks `have` (NULL: none) are read
** already, for a reader of `keep` (NULL: all): their union, or NULL for all.
** *covered: nothing new is needed. */
static uint8_t *blocks_union(const uint8_t *have, const uint8_t *keep, int64_t nb, int *covered, int *oom)
{
    *covered = 0;
    *oom = 0;
    if (!keep) return NULL;
    uint8_t *u = rf_malloc((size_t)nb + 1);
    if (!u) {
        *oom = 1;
        return NULL;
    }
    int all = 1;
    *covered = have != NULL;
    for (int64_t b = 0; b < nb; b++) {
        u[b] = (uint8_t)(keep[b] | (have ? have[b] : 0));
        if (keep[b] && !(have && have[b])) *covered = 0;
        all &= u[b];
    }
    if (all) {
        free(u);
        return NULL;
    }
    return u;
}

/* The patterns of a column read as LIKE classes, spelled out (each one's
** length, a colon, its bytes): which classes a column read so holds. */
static char *like_key(const rf_fe_const *const *pats, int32_t n)
{
    rf_buf b;
    rf_buf_init(&b);
    for (int32_t i = 0; i < n; i++) {
        rf_buf_printf(&b, "%lld:", (long long)pats[i]->slen);
        rf_buf_append(&b, pats[i]->s, pats[i]->slen);
    }
    char *k = b.oom ? NULL : rf_strdup(rf_buf_cstr(&b));
    rf_buf_free(&b);
    return k;
}

/* Column c read as the classes of the LIKE patterns through which alone p
** reads it (rt_db_like.c); *done 0 where it is not read so. Already read
** so, for the same patterns and blocks: nothing to do. */
static rf_status load_like(const rf_db *db, const rf_hir_program *p, const rf_hir_var *v, const rf_db_table *t,
                           int32_t c, const uint8_t *keep, rf_rt_dict *dict, int threads, rf_rt_dbcols *own,
                           void **col, int *done, rf_diags *d)
{
    const rf_fe_const *pats[RF_RT_LIKE_MAX];
    *done = 0;
    if (!p || t->cols[c].enc != RF_DB_ENC_PLAIN || !db->block_crcs) return RF_OK;
    int32_t n = rf_rt_like_only(p, v->id, c, pats, RF_RT_LIKE_MAX);
    if (n <= 0) return RF_OK;
    char *key = like_key(pats, n);
    if (!key) return RF_ENOMEM;
    *done = 1;
    /* (a cached read of these classes serves a reader of no more blocks:
    ** a rank's next run reads its share's blocks again) */
    int served = !own->blocks[c];
    for (int64_t b = 0; !served && keep && b < t->cols[c].nblocks; b++) {
        if (keep[b] && !own->blocks[c][b]) break;
        served = b == t->cols[c].nblocks - 1;
    }
    if (own->loaded[c] == 4 && own->like_key[c] && !strcmp(own->like_key[c], key) && served) {
        free(key);
        return RF_OK;
    }
    uint32_t *codes = NULL;
    rf_status st = rf_rt_db_load_like_classes(db, t, c, keep, pats, n, dict, threads, &codes, d);
    if (st) {
        free(key);
        return st;
    }
    /* (the new codes are allocated before the old go: a column's memory
    ** names its bytes for the input cache's stamps) */
    rf_db_unmap(&own->maps[c]);
    free(own->owned[c]);
    own->owned[c] = codes;
    *col = codes;
    free(own->like_key[c]);
    own->like_key[c] = key;
    own->loaded[c] = 4;
    free(own->blocks[c]);
    own->blocks[c] = NULL;
    if (keep) {
        /* read for these blocks only: a later reader of others reads again */
        own->blocks[c] = rf_malloc((size_t)t->cols[c].nblocks + 1);
        if (!own->blocks[c]) return RF_ENOMEM;
        memcpy(own->blocks[c], keep, (size_t)t->cols[c].nblocks);
    }
    return RF_OK;
}

rf_status rf_rt_load_input_db(const rf_db *db, const rf_hir_program *p, const rf_hir_var *v, const uint8_t *want,
                              const uint8_t *keep, rf_rt_dict *dict, rf_cpu_pool *pool, int threads, rf_rt_rel *rel, rf_rt_dbcols *own,
                              int *defer, rf_diags *d)
{
    char *mpath = rf_sprintf("%s/%s", db->dir, RF_DB_MANIFEST);
    if (!mpath) return RF_ENOMEM;
    rf_loc mloc = rf_mkloc(mpath, 0, 0);
    rf_status st = RF_OK;
    const rf_db_table *t = rf_db_find_table(db, v->input_file);
    if (!t) {
        rf_error(d, mloc, "the database has no table '%s' (the input of `%s`): import it with a program that declares it",
                 v->input_file, v->name);
        st = RF_EUSER;
        goto done;
    }
    int same = t->ncols == v->ncols;
    for (int32_t c = 0; same && c < v->ncols; c++) same = t->cols[c].type == v->types[c];
    if (!same) {
        rf_type *tt = rf_calloc((size_t)t->ncols + 1, sizeof *tt);
        rf_buf a, b;
        rf_buf_init(&a);
        rf_buf_init(&b);
        for (int32_t c = 0; tt && c < t->ncols; c++) tt[c] = t->cols[c].type;
        rf_error(d, mloc, "the database's table '%s' has columns %s, but `%s` declares %s: import the data again with this program",
                 t->name, tt ? type_list(tt, t->ncols, &a) : "?", v->name, type_list(v->types, v->ncols, &b));
        free(tt);
        rf_buf_free(&a);
        rf_buf_free(&b);
        st = RF_EUSER;
        goto done;
    }
    int check_key = v->ninput_key > 0 && !key_checked(t, v);
    /* a functional predicate's dependency is checked on every read: the
    ** database does not record which programs' dependencies its rows meet */
    int check_fd = rf_rt_input_is_functional(v);
    if (defer) *defer = (check_key ? RF_RT_CHECK_KEY : 0) | (rf_rt_input_checks(v) & RF_RT_CHECK_FD);
    if (!own->ncols) {
        own->ncols = v->ncols;
        own->maps = rf_calloc((size_t)v->ncols, sizeof *own->maps);
        own->owned = rf_calloc((size_t)v->ncols, sizeof *own->owned);
        own->loaded = rf_calloc((size_t)v->ncols, 1);
        own->blocks = rf_calloc((size_t)v->ncols, sizeof *own->blocks);
        own->like_key = rf_calloc((size_t)v->ncols, sizeof *own->like_key);
        own->stored = rf_calloc((size_t)v->ncols, sizeof *own->stored);
        if (!own->maps || !own->owned || !own->loaded || !own->blocks || !own->like_key || !own->stored) {
            st = RF_ENOMEM;
            goto done;
        }
    }
    if (!rel->cols) {
        rel->cols = rf_calloc((size_t)v->ncols + 1, sizeof *rel->cols);
        if (!rel->cols) {
            st = RF_ENOMEM;
            goto done;
        }
    }
    rel->nrows = t->nrows;
    rel->ncols = v->ncols;
    rel->types = v->types;
    /* a key or dependency checked here reads every row (a rank's share
    ** of the rows is checked with the other ranks': defer) */
    if (((check_key || check_fd) && !defer) || !db->block_crcs) keep = NULL;
    for (int32_t c = 0; c < v->ncols && !st; c++) {
        int need = !want || want[c];
        for (int32_t k = 0; check_key && k < v->ninput_key; k++) need |= v->input_key[k] == c;
        need |= check_fd;
        if (own->loaded[c] == 1 || (!need && own->loaded[c] >= 2)) continue;
        if (need && !check_key && !check_fd) {
            int done = 0;
            st = load_like(db, p, v, t, c, keep, dict, threads, own, &rel->cols[c], &done, d);
            if (st || done) continue;
        }
        if (need) {
            int covered, oom;
            uint8_t *u = blocks_union(own->loaded[c] == 3 ? own->blocks[c] : NULL, keep, t->cols[c].nblocks, &covered, &oom);
            if (oom) {
                st = RF_ENOMEM;
                break;
            }
            if (covered) {
                free(u);
                continue;
            }
            /* (a key or dependency checked here reads the values on the host) */
            int stored = own->keep_stored && !((check_key || check_fd) && !defer);
            st = load_col(db, t, c, u, dict, threads, stored, own, &rel->cols[c], d);
            if (!st) {
                own->loaded[c] = u ? 3 : 1;
                free(own->blocks[c]);
                own->blocks[c] = u;
            } else {
                free(u);
            }
        } else {
            st = rf_db_map_zeros((uint64_t)t->nrows * (uint64_t)rf_db_type_width(v->types[c]), &own->maps[c]);
            rel->cols[c] = own->maps[c].addr;
            if (!st) own->loaded[c] = 2;
        }
    }
    /* the checks below read the values on the host: columns held as stored
    ** (by an earlier reader) widened */
    for (int32_t c = 0; c < v->ncols && !st && (check_key || check_fd) && !defer; c++) {
        int read = check_fd;
        for (int32_t k = 0; k < v->ninput_key; k++) read |= v->input_key[k] == c;
        if (read && own->stored[c] && !rel->cols[c] && t->nrows > 0 &&
            !(rel->cols[c] = (void *)rf_rt_stored_widen(own->stored[c], threads)))
            st = RF_ENOMEM;
    }
    if (!st && check_key && !defer) st = rf_rt_check_input_key(mpath, RF_RT_ROWS_OF_DB, v, dict, pool, rel, d);
    if (!st && check_fd && !defer) st = rf_rt_check_input_fd(mpath, RF_RT_ROWS_OF_DB, v, dict, pool, rel, d);
done:
    free(mpath);
    return st;
}

int rf_rt_db_codes_shared(const rf_hir_program *p, int32_t var, const rf_db_table *t, int32_t c, int64_t plain_bytes)
{
    const rf_db_column *col = &t->cols[c];
    if (col->type != RF_TYPE_STRING) return 0;
    if (col->enc != RF_DB_ENC_PLAIN) return col->dict_count > 0;
    /* (a plain column read only through LIKE is read as its classes: load_like) */
    const rf_fe_const *pats[RF_RT_LIKE_MAX];
    return plain_bytes > 0 && col->str_size <= (uint64_t)plain_bytes &&
           rf_rt_like_only(p, var, c, pats, RF_RT_LIKE_MAX) <= 0;
}

void rf_rt_whole_cols_free(rf_rt_whole_cols *w)
{
    for (int32_t i = 0; i < w->n; i++) free(w->keys[i]);
    free(w->keys);
    free(w->tops);
    memset(w, 0, sizeof *w);
}

/* Plain column c of t interned whole into dict, once per whole (NULL:
** every time): *top past its codes. */
static rf_status intern_whole(const rf_db *db, const rf_db_table *t, int32_t c, rf_rt_dict *dict, int threads,
                              rf_rt_whole_cols *whole, int64_t *top, rf_diags *d)
{
    const rf_db_column *col = &t->cols[c];
    char *key = NULL;
    if (whole) {
        rf_buf b;
        rf_buf_init(&b);
        rf_buf_printf(&b, "%s/%s/%d/%08x/%llu", db->dir, t->name, (int)c, (unsigned)col->str_crc,
                      (unsigned long long)col->str_size);
        key = b.oom ? NULL : rf_strdup(rf_buf_cstr(&b));
        rf_buf_free(&b);
        if (!key) return RF_ENOMEM;
        for (int32_t i = 0; i < whole->n; i++)
            if (!strcmp(whole->keys[i], key) && whole->tops[i] <= rf_rt_dict_count(dict)) {
                if (whole->tops[i] > *top) *top = whole->tops[i];
                free(key);
                return RF_OK;
            }
    }
    uint32_t *codes = NULL;
    int64_t mine = 0;
    rf_status st = rf_rt_db_load_strings(db, t, c, NULL, dict, threads, &codes, d);
    for (int64_t i = 0; i < t->nrows && !st; i++)
        if ((int64_t)codes[i] >= mine) mine = (int64_t)codes[i] + 1;
    free(codes);
    if (!st && mine > *top) *top = mine;
    if (!st && key) {
        char **k = rf_realloc(whole->keys, (size_t)(whole->n + 1) * sizeof *k);
        if (k) whole->keys = k;
        int64_t *tp = k ? rf_realloc(whole->tops, (size_t)(whole->n + 1) * sizeof *tp) : NULL;
        if (tp) whole->tops = tp;
        if (!k || !tp) st = RF_ENOMEM;
        else {
            whole->keys[whole->n] = key;
            whole->tops[whole->n++] = mine;
            key = NULL;
        }
    }
    free(key);
    return st;
}

rf_status rf_rt_db_intern_dicts(const rf_db *db, const rf_hir_program *p, rf_rt_dict *dict, int threads,
                                int64_t plain_bytes, rf_rt_whole_cols *whole, int64_t *top, rf_diags *d)
{
    rf_status st = RF_OK;
    for (int32_t var = 0; var < p->nvars && !st; var++) {
        const rf_hir_var *v = p->vars[var];
        if (v->role != RF_HIR_ROLE_INPUT) continue;
        const rf_db_table *t = rf_db_find_table(db, v->input_file);
        int same = t && t->ncols == v->ncols;
        for (int32_t c = 0; same && c < v->ncols; c++) same = t->cols[c].type == v->types[c];
        if (!same) continue; /* the read reports it */
        uint8_t *want = rf_malloc((size_t)v->ncols + 1);
        if (!want) return RF_ENOMEM;
        rf_rt_input_cols_read(p, var, want);
        /* the columns a key or a dependency check reads too */
        for (int32_t k = 0; k < v->ninput_key; k++) want[v->input_key[k]] = 1;
        if (rf_rt_input_is_functional(v)) memset(want, 1, (size_t)v->ncols);
        for (int32_t c = 0; c < v->ncols && !st; c++) {
            const rf_db_column *col = &t->cols[c];
            if (!want[c] || !rf_rt_db_codes_shared(p, var, t, c, plain_bytes)) continue;
            if (col->enc == RF_DB_ENC_PLAIN) {
                /* a plain column: every row, in row order (its rank's share
                ** then finds its strings here) */
                st = intern_whole(db, t, c, dict, threads, whole, top, d);
                continue;
            }
            rf_db_map dm = {0, 0};
            const uint64_t *off;
            const char *bytes;
            uint32_t *map = NULL;
            st = rf_db_map_dict(db, t, c, &dm, &off, &bytes, d);
            if (!st && !(map = rf_malloc((size_t)col->dict_count * sizeof *map))) st = RF_ENOMEM;
            if (!st) st = rf_rt_dict_intern_many(dict, (const int64_t *)off, bytes, (int64_t)col->dict_count, map, threads);
            for (uint64_t i = 0; i < col->dict_count && !st; i++)
                if ((int64_t)map[i] >= *top) *top = (int64_t)map[i] + 1;
            free(map);
            rf_db_unmap(&dm);
        }
        free(want);
    }
    return st;
}
