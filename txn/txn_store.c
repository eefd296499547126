/*
** txn/txn_store.c: the database side of `redfox exec`: its tables read
** into a transaction's relations, and the database after the transaction
** written.
**
** Owns: the database's 64-bit decimals at the transaction's boundary (a
** run's wide totals narrowed into a predicate's stored types, widened back
** for the user's outputs), the names of materialized tables ("derived.HASH.PRED": HASH
** identifies the program's text, so programs sharing a database keep their
** own), the record of the base tables' state a program's last commit
** left ("derived.HASH": its derived tables are read, and its keys and
** functional dependencies trusted over the stored rows, only while it
** matches; else those are checked as a run checks them), reading tables (numeric columns left in their mapped files;
** strings through their dictionaries into the transaction's), and the
** commit. When every table only gains rows after its old ones (an
** insert-only batch, the delta rules' new facts), the new rows are appended
** to the database's files in place and a new manifest renamed over the old
** one (db_writer.c's in-place writer): the commit writes about the new
** rows, never the old. Otherwise the whole new state is written aside
** (db_writer.c's temporary folder: copy on write), then exchanged with the
** old folder in one atomic rename; there too a table that only gains rows
** is carried over (files linked when unchanged; else its old files linked
** into the new folder and appended to past their old ends, or, shared
** with another folder, cloned or copied in the kernel, the new rows
** appended). Every table is added to the writer first, in the state's
** order; then the columns' rows are written one column a job on the
** transaction's threads, the most bytes first. Either way a crash at any
** moment leaves the old or the new database.
*/
#include "rf_txn.h"
#include "rf_mix.h"

#include "rf_cpu.h"
#include "rf_file.h"
#include "rf_rt_input.h"
#include "rf_sys.h"
#include "rf_value.h"

#include <stdlib.h>
#include <string.h>

rf_txn_pred *rf_txn_find(rf_txn *t, const rf_fe_pred *p)
{
    for (int32_t i = 0; i < t->npreds; i++)
        if (t->preds[i].fe == p) return &t->preds[i];
    return NULL;
}

char *rf_txn_store_table_name(const rf_txn *t, const rf_fe_pred *p)
{
    return rf_sprintf("derived.%s.%s", t->source_hash, p->name);
}

rf_status rf_txn_rel_copy(const rf_rt_rel *src, rf_rt_rel *dst)
{
    rf_status st = rf_rt_rel_alloc(dst, src->ncols, src->types, src->nrows);
    for (int32_t c = 0; !st && c < src->ncols && src->nrows; c++)
        memcpy(dst->cols[c], src->cols[c], (size_t)(src->nrows * rf_rt_type_width(src->types[c])));
    return st;
}

rf_status rf_txn_rel_concat(const rf_rt_rel *a, const rf_rt_rel *b, rf_rt_rel *dst)
{
    rf_status st = rf_rt_rel_alloc(dst, a->ncols, a->types, a->nrows + b->nrows);
    for (int32_t c = 0; !st && c < a->ncols && dst->nrows; c++) {
        int64_t w = rf_rt_type_width(a->types[c]);
        if (a->nrows) memcpy(dst->cols[c], a->cols[c], (size_t)(a->nrows * w));
        if (b->nrows) memcpy((char *)dst->cols[c] + a->nrows * w, b->cols[c], (size_t)(b->nrows * w));
    }
    return st;
}

int64_t rf_txn_pred_rows(const rf_txn_pred *p)
{
    return p->has_next ? p->next.nrows : p->cur.nrows + (p->tail ? p->ins.nrows : 0);
}

/* ---- the database's decimals: 64 bits ---------------------------------------- */

/* A database stores decimals in 64 bits (docs/DATABASE.md); a total of
** decimals is exact beyond them (the wide decimal, 16 bytes). A
** transaction's relations hold the stored types: a run's wide values are
** narrowed as they become a predicate's rows (out of decimal's range: an
** error, never a wrong value), and widened again where the user's program
** has them wide (its outputs). */
rf_type rf_txn_store_type(rf_type t) { return t == RF_TYPE_DEC128 ? RF_TYPE_DECIMAL : t; }

static rf_status types_differ(const char *what, const char *name, int32_t c, rf_type have, rf_type want, rf_diags *d)
{
    rf_internal_error(d, rf_mkloc(NULL, 0, 0), "%s `%s`, column %d: a run gave %s, %s expected", what, name,
             (int)c + 1, rf_val_type_name(have), rf_val_type_name(want));
    return RF_EINTERNAL;
}

rf_status rf_txn_store_narrow(const rf_txn_pred *p, rf_rt_rel *r, int32_t ncols, rf_diags *d)
{
    const rf_fe_pred *q = p->fe;
    if (ncols > p->ncols || ncols > r->ncols) {
        rf_internal_error(d, q->loc, "a run gave `%s` %d columns, not %d", q->name, (int)r->ncols, (int)ncols);
        return RF_EINTERNAL;
    }
    for (int32_t c = 0; c < ncols; c++) {
        rf_type have = r->types ? r->types[c] : p->types[c];
        if (have == p->types[c]) continue;
        if (have != RF_TYPE_DEC128 || p->types[c] != RF_TYPE_DECIMAL)
            return types_differ("the rows of", q->name, c, have, p->types[c], d);
        /* in place: value i moves from byte 16 i to byte 8 i, never past
        ** a value still to read */
        char *col = r->cols[c];
        for (int64_t i = 0; i < r->nrows; i++) {
            rf_dec128 v;
            int64_t n;
            rf_val_err e;
            memcpy(&v, col + 16 * i, sizeof v);
            if (rf_val_dec128_to_dec(v, &n, &e)) {
                rf_error(d, q->loc,
                         "decimal out of range: `%s` is stored in the database, whose decimals are 64 bits "
                         "(-9223372036854.775807 to 9223372036854.775807), and the transaction made a value "
                         "(a total of decimals, or one computed from totals) beyond that for its column %d%s%s%s",
                         q->name, (int)c + 1, q->cols[c] ? " (`" : "", q->cols[c] ? q->cols[c] : "",
                         q->cols[c] ? "`)" : "");
                return RF_EUSER;
            }
            memcpy(col + 8 * i, &n, sizeof n);
        }
    }
    if (ncols == r->ncols) r->types = p->types;
    return RF_OK;
}

rf_status rf_txn_store_widen(rf_rt_rel *r, const rf_type *user_types, rf_diags *d)
{
    for (int32_t c = 0; r->types && c < r->ncols; c++) {
        rf_type have = r->types[c], want = user_types[c];
        if (have == want) continue;
        if (have != RF_TYPE_DECIMAL || want != RF_TYPE_DEC128) return types_differ("an output of", "exec", c, have, want, d);
        rf_rt_rel wide;
        rf_status st = rf_rt_rel_alloc(&wide, 1, &user_types[c], r->nrows);
        if (st) return st;
        const char *from = r->cols[c];
        char *to = wide.nrows ? wide.cols[0] : NULL;
        for (int64_t i = 0; i < r->nrows; i++) {
            int64_t n;
            memcpy(&n, from + 8 * i, sizeof n);
            rf_dec128 v = rf_val_dec128_from_dec(n);
            memcpy(to + 16 * i, &v, sizeof v);
        }
        rf_rt_col_free(r->cols[c]);
        r->cols[c] = to;
        free(wide.cols);
    }
    r->types = user_types;
    return RF_OK;
}

/* ---- reading ------------------------------------------------------------- */

/* Table tb as relation out. With maps (every table: a transaction only
** reads its stored rows, making the new state in other relations), numeric
** columns are the database's mapped files themselves (their CRC-32Cs
** checked as they are mapped; maps[c] keeps each mapping until
** rf_txn_cur_free), never copied: the stored closure, or a base table's
** history, goes from the page cache to the run (and on the GPU to the
** device) directly. Without, copied into owned columns. String columns are
** translated into t's dictionary's codes. */
static rf_status read_table(rf_txn *t, const rf_db *db, const rf_db_table *tb, const rf_txn_pred *tp, rf_rt_rel *out,
                            rf_db_map *maps, rf_diags *d)
{
    const rf_fe_pred *p = tp->fe;
    const rf_type *types = tp->types; /* (the stored ones) */
    char *mpath = rf_sprintf("%s/%s", db->dir, RF_DB_MANIFEST);
    if (!mpath) return RF_ENOMEM;
    int same = tb->ncols == tp->ncols;
    for (int32_t c = 0; same && c < tp->ncols; c++) same = tb->cols[c].type == types[c];
    if (!same) {
        /* (the words of a run reading the database, rt_db_input.c: which
        ** columns the table has and which the program declares) */
        rf_buf has, decl;
        rf_buf_init(&has);
        rf_buf_init(&decl);
        for (int32_t c = 0; c < tb->ncols; c++) rf_buf_printf(&has, "%s%s", c ? ", " : "", rf_val_type_name(tb->cols[c].type));
        for (int32_t c = 0; c < tp->ncols; c++) rf_buf_printf(&decl, "%s%s", c ? ", " : "", rf_val_type_name(types[c]));
        rf_error(d, rf_mkloc(mpath, 0, 0),
                 "the database's table '%s' has columns (%s), but `%s` declares (%s): import the data again with this "
                 "program",
                 tb->name, rf_buf_cstr(&has), p->name, rf_buf_cstr(&decl));
        rf_buf_free(&has);
        rf_buf_free(&decl);
        free(mpath);
        return RF_EUSER;
    }
    free(mpath);
    rf_status st = rf_rt_rel_alloc(out, tp->ncols, types, 0);
    if (!st) out->nrows = tb->nrows;
    for (int32_t c = 0; c < tp->ncols && !st && tb->nrows; c++) {
        if (tb->cols[c].type == RF_TYPE_STRING && tb->cols[c].enc == RF_DB_ENC_PLAIN) {
            /* a plain string column: its rows interned one by one */
            double t0 = rf_now();
            uint32_t *codes = NULL;
            st = rf_rt_db_load_strings(db, tb, c, NULL, t->dict, t->threads, &codes, d);
            out->cols[c] = codes;
            t->read_bytes += tb->nrows * rf_rt_type_width(types[c]);
            t->read_copy_seconds += rf_now() - t0;
            continue;
        }
        rf_db_map m = {0, 0};
        const void *data = NULL;
        double t0 = rf_now();
        st = rf_db_map_column(db, tb, c, &m, &data, d);
        double t1 = rf_now();
        t->read_check_seconds += t1 - t0;
        if (st) break;
        t->read_bytes += tb->nrows * rf_rt_type_width(types[c]);
        if (types[c] != RF_TYPE_STRING && maps) {
            out->cols[c] = (void *)data;
            maps[c] = m;
            continue;
        }
        int64_t bytes_c = tb->nrows * rf_rt_type_width(types[c]);
        out->cols[c] = rf_malloc((size_t)bytes_c);
        if (out->cols[c] && types[c] != RF_TYPE_STRING) {
            memcpy(out->cols[c], data, (size_t)bytes_c);
            rf_db_unmap(&m);
            t->read_copy_seconds += rf_now() - t1;
            continue;
        }
        if (!out->cols[c]) {
            rf_db_unmap(&m);
            st = RF_ENOMEM;
            break;
        }
        rf_db_map dm = {0, 0};
        const uint64_t *off;
        const char *bytes;
        st = rf_db_map_dict(db, tb, c, &dm, &off, &bytes, d);
        uint64_t nd = tb->cols[c].dict_count;
        uint32_t *map = st ? NULL : rf_malloc(((size_t)nd + 1) * sizeof *map);
        if (!st && !map) st = RF_ENOMEM;
        if (!st && nd) st = rf_rt_dict_intern_many(t->dict, (const int64_t *)off, bytes, (int64_t)nd, map, t->threads);
        const uint32_t *codes = data;
        uint32_t *dst = out->cols[c];
        for (int64_t i = 0; !st && i < tb->nrows; i++) dst[i] = map[codes[i]];
        free(map);
        rf_db_unmap(&dm);
        rf_db_unmap(&m);
        t->read_copy_seconds += rf_now() - t1;
    }
    return st;
}

void rf_txn_cur_free(rf_txn_pred *p)
{
    if (p->borrowed) {
        /* the columns are the kept relation's (txn_resident.c) */
        free(p->cur.cols);
        memset(&p->cur, 0, sizeof p->cur);
        p->borrowed = 0;
        p->stamps = NULL;
        return;
    }
    for (int32_t c = 0; p->maps && c < p->cur.ncols; c++)
        if (p->maps[c].addr) {
            p->cur.cols[c] = NULL;
            rf_db_unmap(&p->maps[c]);
        }
    free(p->maps);
    p->maps = NULL;
    rf_rt_rel_free(&p->cur);
}

/* ---- the base data the derived tables were computed from -------------------- */

/* The derived tables of a program are the consequence of the base tables
** as they were when its last commit wrote them; another program (or another
** version of this one: another HASH) may change the base tables since, and
** without the keys or functional dependencies this program declares. So
** each commit of a program with derived predicates, or with a key or a
** functional base predicate, also records the state of its base tables in
** the table "derived.HASH" (one int column, `base_state`: a 64-bit hash of
** the base tables' manifest entries, which name every byte of them by
** CRC-32Cs; its last row is the current one). A transaction reads the
** derived tables, and trusts the stored rows to meet the keys and
** dependencies (each batch's inserts are checked against them), only where
** that record matches the base tables the database holds. A commit that
** only appends (in place) appends the record as a row; one written aside
** writes it with one row. */

static uint64_t mix(uint64_t h, uint64_t v)
{
    /* (splitmix64's finalizer over the running hash and the value) */
    uint64_t z = rf_mix64_combine(h, v);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    h = mix(h, n);
    return mix(h, rf_db_crc32c(0, s ? s : "", (int64_t)n));
}

/* The fields of table tb's manifest entry that describe its rows (those
** rf_db_encode writes, but its name and its files' names, which a copy on
** write may renumber). */
static uint64_t table_state(uint64_t h, const rf_db_table *tb)
{
    h = mix(h, (uint64_t)tb->nrows);
    h = mix(h, tb->block_rows);
    h = mix(h, (uint64_t)tb->ncols);
    h = mix(h, (uint64_t)tb->nkey);
    for (int32_t k = 0; k < tb->nkey; k++) h = mix(h, (uint64_t)tb->key[k]);
    for (int32_t c = 0; c < tb->ncols; c++) {
        const rf_db_column *col = &tb->cols[c];
        h = mix_str(h, col->name);
        h = mix(h, (uint64_t)col->type);
        h = mix(h, (uint64_t)(col->narrow ? 2 : col->enc));
        h = mix(h, col->size);
        h = mix(h, col->crc);
        if (col->enc == RF_DB_ENC_PLAIN) {
            h = mix(h, col->str_size);
            h = mix(h, col->str_crc);
        } else if (col->type == RF_TYPE_STRING) {
            h = mix(h, col->dict_count);
            h = mix(h, col->dict_size);
            h = mix(h, col->dict_crc);
        }
        h = mix(h, (uint64_t)col->nblocks);
        for (int64_t b = 0; b < col->nblocks; b++) {
            const rf_db_block *bl = &col->blocks[b];
            h = mix(h, (uint64_t)bl->min);
            h = mix(h, (uint64_t)bl->max);
            h = mix(h, bl->crc);
            if (col->enc == RF_DB_ENC_PLAIN) h = mix(h, bl->str_crc);
            if (col->narrow) h = mix(h, (uint64_t)bl->width << 8 | bl->exp);
        }
    }
    return h;
}

/* The state of t's base tables in db (each by its name, in the program's
** order; a missing one counts as such). */
static int64_t base_state(const rf_txn *t, const rf_db *db)
{
    uint64_t h = 0x726564666f78ull; /* "redfox" */
    for (int32_t i = 0; i < t->npreds; i++) {
        const rf_txn_pred *p = &t->preds[i];
        if (!p->base) continue;
        const rf_db_table *tb = rf_db_find_table(db, p->table);
        h = mix_str(h, p->table);
        h = tb ? table_state(mix(h, 1), tb) : mix(h, 0);
    }
    return (int64_t)h;
}

static int has_derived(const rf_txn *t)
{
    for (int32_t i = 0; i < t->npreds; i++)
        if (!t->preds[i].base) return 1;
    return 0;
}

/* Whether t's program declares a key or a functional dependency on a base
** predicate: the stored rows must meet them. */
static int has_checks(const rf_txn *t)
{
    for (int32_t i = 0; i < t->npreds; i++)
        if (t->preds[i].base && (t->preds[i].fe->ninput_key > 0 || t->preds[i].fe->functional)) return 1;
    return 0;
}

/* Whether t's program keeps a stamp: something in the database depends on
** its base tables' state (its derived tables, the rows checked). */
static int has_stamp(const rf_txn *t) { return has_derived(t) || has_checks(t); }

static char *stamp_name(const rf_txn *t) { return rf_sprintf("derived.%s", t->source_hash); }

/* *have: table tb (a stamp) is one int column with a row; *last: its last
** row (only its last block read and checked). */
static rf_status stamp_last(const rf_db *db, const rf_db_table *tb, int64_t *last, int *have, rf_diags *d)
{
    *have = 0;
    *last = 0;
    if (tb->ncols != 1 || tb->cols[0].type != RF_TYPE_INT || tb->nrows < 1 || tb->cols[0].nblocks < 1) return RF_OK;
    uint8_t *keep = rf_calloc((size_t)tb->cols[0].nblocks, 1);
    if (!keep) return RF_ENOMEM;
    keep[tb->cols[0].nblocks - 1] = 1;
    rf_db_map m = {0, 0};
    const void *data = NULL;
    rf_status st = rf_db_map_column_blocks(db, tb, 0, keep, &m, &data, d);
    if (!st) {
        memcpy(last, (const char *)data + 8 * (tb->nrows - 1), sizeof *last);
        *have = 1;
    }
    rf_db_unmap(&m);
    free(keep);
    return st;
}

/* Whether db's base tables are as t's program's last commit left them:
** its stamp's last row is their state. */
static rf_status stamp_current(const rf_txn *t, const rf_db *db, int *current, rf_diags *d)
{
    *current = 0;
    char *name = stamp_name(t);
    if (!name) return RF_ENOMEM;
    const rf_db_table *tb = rf_db_find_table(db, name);
    free(name);
    int64_t last = 0;
    int have = 0;
    rf_status st = tb ? stamp_last(db, tb, &last, &have, d) : RF_OK;
    *current = !st && have && last == base_state(t, db);
    return st;
}

/* Whether table tb's key (the one its writer checked) is predicate p's
** lang:input:key, as a set of columns (none and none alike). */
static int same_key(const rf_db_table *tb, const rf_fe_pred *p)
{
    int32_t n = p->ninput_key > 0 ? p->ninput_key : 0;
    if (tb->nkey != n) return 0;
    for (int32_t k = 0; k < n; k++) {
        int found = 0;
        for (int32_t j = 0; j < tb->nkey && !found; j++) found = tb->key[j] == p->input_key[k];
        if (!found) return 0;
    }
    return 1;
}

/* The keys and functional dependencies t's program declares on its base
** predicates, over their stored rows (read into cur), as a run over the
** database checks them (a key the table's writer checked is not checked
** again): an error naming the manifest (mpath) and the rows. */
static rf_status check_stored(rf_txn *t, const rf_db *db, const char *mpath, rf_diags *d)
{
    rf_cpu_pool *pool = NULL;
    rf_status st = RF_OK;
    for (int32_t i = 0; i < t->npreds && !st && t->user; i++) {
        const rf_txn_pred *p = &t->preds[i];
        if (!p->base || (p->fe->ninput_key <= 0 && !p->fe->functional)) continue;
        const rf_hir_var *v = NULL;
        for (int32_t k = 0; k < t->user->nvars && !v; k++) {
            const rf_hir_var *u = t->user->vars[k];
            if (u->role == RF_HIR_ROLE_INPUT && u->input_file && !strcmp(u->input_file, p->table) && u->ncols == p->ncols)
                v = u;
        }
        if (!v) continue;
        const rf_db_table *tb = rf_db_find_table(db, p->table);
        int key = p->fe->ninput_key > 0 && !(tb && same_key(tb, p->fe));
        if (!key && !(rf_rt_input_checks(v) & RF_RT_CHECK_FD)) continue;
        if (!pool) st = rf_cpu_pool_new(t->threads > 0 ? t->threads : 1, &pool);
        if (!st && key) st = rf_rt_check_input_key(mpath, 1, v, t->dict, pool, &p->cur, d);
        if (!st) st = rf_rt_check_input_fd(mpath, 1, v, t->dict, pool, &p->cur, d);
    }
    rf_cpu_pool_free(pool);
    return st;
}

rf_status rf_txn_store_load(rf_txn *t, const rf_db *db, rf_diags *d)
{
    char *mpath = rf_sprintf("%s/%s", db->dir, RF_DB_MANIFEST);
    if (!mpath) return RF_ENOMEM;
    /* (--init and --recompute write them anew: a damaged one is no obstacle) */
    int current = 0;
    rf_status st = !t->fresh && has_stamp(t) ? stamp_current(t, db, &current, d) : RF_OK;
    for (int32_t i = 0; i < t->npreds && !st; i++) {
        rf_txn_pred *p = &t->preds[i];
        const rf_db_table *tb = rf_db_find_table(db, p->table);
        if (tb && !p->base && !current) {
            p->unread = 1;
            p->rows_before = tb->nrows;
            t->stale |= !t->fresh;
            tb = NULL;
        }
        if (!tb) {
            if (p->base) {
                rf_error(d, rf_mkloc(mpath, 0, 0),
                         "the database has no table '%s' (the input of `%s`): import it with a program that declares it",
                         p->table, p->fe->name);
                st = RF_EUSER;
            } else {
                st = rf_rt_rel_alloc(&p->cur, p->ncols, p->types, 0);
            }
            continue;
        }
        p->stored = !p->base;
        if (!(p->maps = rf_calloc((size_t)p->ncols + 1, sizeof *p->maps))) st = RF_ENOMEM;
        if (!st) st = read_table(t, db, tb, p, &p->cur, p->maps, d);
        p->prefix = st ? 0 : p->cur.nrows;
    }
    if (!st && !current) st = check_stored(t, db, mpath, d);
    free(mpath);
    return st;
}

/* ---- writing --------------------------------------------------------------- */

#define CHUNK 65536

/* n string codes (of dict) as rows of string column c. */
static rf_status append_strings(rf_db_writer *w, int32_t tid, int32_t c, const rf_rt_dict *dict, const uint32_t *codes,
                                int64_t n, rf_diags *d)
{
    int64_t *off = rf_malloc((CHUNK + 1) * sizeof *off);
    rf_buf bytes;
    rf_buf_init(&bytes);
    rf_status st = off ? RF_OK : RF_ENOMEM;
    for (int64_t lo = 0; lo < n && !st; lo += CHUNK) {
        int64_t k = n - lo < CHUNK ? n - lo : CHUNK;
        bytes.len = 0;
        for (int64_t i = 0; i < k; i++) {
            off[i] = bytes.len;
            int64_t len = 0;
            const char *s = rf_rt_dict_str(dict, codes[lo + i], &len);
            rf_buf_append(&bytes, s, len);
        }
        off[k] = bytes.len;
        rf_buf_putc(&bytes, 0);
        if (bytes.oom) st = RF_ENOMEM;
        if (!st) st = rf_db_writer_append(w, tid, c, k, NULL, off, (const char *)bytes.data, d);
    }
    free(off);
    rf_buf_free(&bytes);
    return st;
}

/* Strings of a column of the old database, by its dictionary. */
static rf_status copy_table(rf_db_writer *w, const rf_db *db, const rf_db_table *tb, rf_diags *d)
{
    rf_type *types = rf_calloc((size_t)tb->ncols + 1, sizeof *types);
    const char **names = rf_calloc((size_t)tb->ncols + 1, sizeof *names);
    rf_status st = types && names ? RF_OK : RF_ENOMEM;
    for (int32_t c = 0; !st && c < tb->ncols; c++) {
        types[c] = tb->cols[c].type;
        names[c] = tb->cols[c].name;
    }
    int32_t tid = -1;
    if (!st) st = rf_db_writer_table(w, tb->name, tb->ncols, types, names, tb->nkey, tb->key, &tid, d);
    for (int32_t c = 0; !st && c < tb->ncols && tb->nrows; c++) {
        rf_db_map m = {0, 0}, dm = {0, 0};
        const void *data = NULL;
        st = rf_db_map_column(db, tb, c, &m, &data, d);
        if (!st && types[c] != RF_TYPE_STRING) st = rf_db_writer_append(w, tid, c, tb->nrows, data, NULL, NULL, d);
        if (!st && types[c] == RF_TYPE_STRING) {
            const uint64_t *off;
            const char *bytes;
            st = rf_db_map_dict(db, tb, c, &dm, &off, &bytes, d);
            const uint32_t *codes = data;
            int64_t *o = st ? NULL : rf_malloc((CHUNK + 1) * sizeof *o);
            rf_buf b;
            rf_buf_init(&b);
            if (!st && !o) st = RF_ENOMEM;
            for (int64_t lo = 0; !st && lo < tb->nrows; lo += CHUNK) {
                int64_t k = tb->nrows - lo < CHUNK ? tb->nrows - lo : CHUNK;
                b.len = 0;
                for (int64_t i = 0; i < k; i++) {
                    uint32_t x = codes[lo + i];
                    o[i] = b.len;
                    rf_buf_append(&b, bytes + off[x], (int64_t)(off[x + 1] - off[x]));
                }
                o[k] = b.len;
                rf_buf_putc(&b, 0);
                st = b.oom ? RF_ENOMEM : rf_db_writer_append(w, tid, c, k, NULL, o, (const char *)b.data, d);
            }
            free(o);
            rf_buf_free(&b);
        }
        rf_db_unmap(&dm);
        rf_db_unmap(&m);
    }
    if (!st) st = rf_db_writer_end_table(w, tid, d);
    free(types);
    free(names);
    return st;
}

/* One column of one table of the new state: its rows from `from` of r,
** then tail's (NULL: none), appended and the column finished, on a thread
** of the commit's pool; its own diagnostics, merged in the jobs' order. */
typedef struct col_job {
    int32_t tid, c;
    const rf_type *types; /* the table's (stored) */
    const rf_rt_rel *r, *tail;
    int64_t from, bytes;
    rf_status st;
    rf_diags d;
} col_job;

typedef struct commit_jobs {
    rf_db_writer *w;
    const rf_rt_dict *dict;
    col_job *jobs;
    int32_t *order; /* the jobs, the most bytes first */
} commit_jobs;

/* Rows [from, r->nrows) of r's column c as rows of table tid's column c. */
static rf_status append_col(rf_db_writer *w, const rf_rt_dict *dict, int32_t tid, int32_t c, const rf_type *types,
                            const rf_rt_rel *r, int64_t from, rf_diags *d)
{
    int64_t n = r->nrows - from;
    if (n <= 0) return RF_OK;
    const void *col = (const char *)r->cols[c] + from * rf_rt_type_width(types[c]);
    if (types[c] == RF_TYPE_STRING) return append_strings(w, tid, c, dict, col, n, d);
    return rf_db_writer_append(w, tid, c, n, col, NULL, NULL, d);
}

static void run_col_jobs(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    commit_jobs *cj = ctx;
    for (int64_t i = begin; i < end; i++) {
        col_job *j = &cj->jobs[cj->order[i]];
        j->st = append_col(cj->w, cj->dict, j->tid, j->c, j->types, j->r, j->from, &j->d);
        if (!j->st && j->tail) j->st = append_col(cj->w, cj->dict, j->tid, j->c, j->types, j->tail, 0, &j->d);
        if (!j->st) j->st = rf_db_writer_finish_column(cj->w, j->tid, j->c, &j->d);
    }
}

/* Predicate p's new state, r's rows then tail's (NULL: none), as table
** name: where its first `prefix` rows are the old table's, that table
** carried over (its files linked, or taken over, cloned or copied and
** appended to, or appended to in place: rf_db_writer_table_from) and only
** the rest written; else every row. Only the table is added here: *from
** is where its rows to write start (the caller writes them). *how: "kept",
** "appended", "appended in place" or "written", for --profile; NULL when
** an in-place writer cannot take the table (the caller starts again copy
** on write). */
static rf_status add_rel(rf_db_writer *w, const rf_db *db, const char *name, const rf_txn_pred *tp, const rf_rt_rel *r,
                         const rf_rt_rel *tail, int64_t prefix, int with_key, int32_t *tid, int64_t *from,
                         const char **how, rf_diags *d)
{
    *tid = -1;
    *from = 0;
    const rf_db_table *old = rf_db_find_table(db, name);
    int64_t total = r->nrows + (tail ? tail->nrows : 0);
    rf_status st = RF_OK;
    if (old && prefix == old->nrows && r->nrows >= prefix) {
        st = rf_db_writer_table_from(w, db, old, total > prefix, tid, d);
        if (*tid >= 0) *from = prefix;
        /* a base table that gains rows: its key is the one this program
        ** checked them against (its stored rows were checked too, or vouched
        ** for: rf_txn_store_load), not the one the old manifest names */
        if (!st && *tid >= 0 && with_key && total > prefix && !same_key(old, tp->fe))
            st = rf_db_writer_table_key(w, *tid, tp->fe->ninput_key > 0 ? tp->fe->ninput_key : 0, tp->fe->input_key);
    }
    int in_place = rf_db_writer_is_in_place(w);
    *how = *tid < 0 ? "written" : total <= prefix ? "kept" : in_place ? "appended in place" : "appended";
    if (!st && *tid < 0 && in_place) {
        *how = NULL;
        return RF_OK;
    }
    const rf_fe_pred *p = tp->fe;
    if (!st && *tid < 0)
        st = rf_db_writer_table(w, name, tp->ncols, tp->types, p->arity ? p->cols : NULL, with_key ? p->ninput_key : 0,
                                with_key ? p->input_key : NULL, tid, d);
    return st;
}

/* Below this many bytes to write, the commit's columns are written by the
** calling thread alone: starting the pool's threads would cost more. */
#define PARALLEL_BYTES (1 << 20)

/* The rows of the program's tables (added, jobs[0..njobs)), one job a
** column: on t's threads, the most bytes first, where there are enough
** bytes; each column's bytes are the same whatever thread writes them. */
static rf_status write_columns(rf_txn *t, rf_db_writer *w, col_job *jobs, int32_t njobs, rf_diags *d)
{
    int64_t bytes = 0;
    for (int32_t i = 0; i < njobs; i++) bytes += jobs[i].bytes;
    int32_t *order = rf_malloc(((size_t)njobs + 1) * sizeof *order);
    if (!order) return RF_ENOMEM;
    for (int32_t i = 0; i < njobs; i++) order[i] = i;
    for (int32_t i = 1; i < njobs; i++) { /* insertion sort: a few columns */
        int32_t x = order[i], k = i;
        while (k > 0 && jobs[order[k - 1]].bytes < jobs[x].bytes) order[k] = order[k - 1], k--;
        order[k] = x;
    }
    int threads = t->threads > 0 ? t->threads : 1;
    if (threads > njobs) threads = njobs;
    rf_cpu_pool *pool = NULL;
    rf_status st = RF_OK;
    if (threads > 1 && bytes >= PARALLEL_BYTES) st = rf_cpu_pool_new(threads, &pool);
    commit_jobs cj = {w, t->dict, jobs, order};
    if (!st) rf_cpu_parallel_for(pool, njobs, 1, run_col_jobs, &cj);
    rf_cpu_pool_free(pool);
    t->commit_threads = pool ? threads : 1;
    for (int32_t i = 0; i < njobs; i++) {
        for (int64_t k = 0; k < jobs[i].d.count; k++)
            rf_diag_add(d, jobs[i].d.items[k].sev, jobs[i].d.items[k].loc, "%s", jobs[i].d.items[k].msg);
        if (!st) st = jobs[i].st;
    }
    free(order);
    return st;
}

/* Whether every table of the new state is its old one with rows appended
** (or none), each able to take them in place. */
static int appends_only(const rf_txn *t, const rf_db *db)
{
    if (!db->block_crcs) return 0;
    for (int32_t i = 0; i < t->npreds; i++) {
        const rf_txn_pred *p = &t->preds[i];
        const rf_db_table *old = rf_db_find_table(db, p->table);
        const rf_rt_rel *r = p->has_next ? &p->next : &p->cur;
        if (!old || p->prefix != old->nrows || r->nrows < p->prefix) return 0;
        if (rf_txn_pred_rows(p) > old->nrows && !rf_db_table_appendable_in_place(db, old)) return 0;
    }
    /* (the program's stamp gains a row: add_stamp) */
    char *name = has_stamp(t) ? stamp_name(t) : NULL;
    const rf_db_table *stamp = name ? rf_db_find_table(db, name) : NULL;
    free(name);
    return !has_stamp(t) || (stamp && rf_db_table_appendable_in_place(db, stamp));
}

/* The program's stamp in the new state (after its tables, ended): the
** state of its base tables as w writes them. The old one kept where it
** says that already; appended to in place (a row); else written with the
** one row (copy on write; in place: *again). */
static rf_status add_stamp(rf_txn *t, const rf_db *db, rf_db_writer *w, int *again, rf_diags *d)
{
    char *name = stamp_name(t);
    if (!name) return RF_ENOMEM;
    int64_t now = base_state(t, rf_db_writer_db(w)), last = 0;
    const rf_db_table *old = rf_db_find_table(db, name);
    int have = 0, in_place = rf_db_writer_is_in_place(w);
    rf_status st = old ? stamp_last(db, old, &last, &have, d) : RF_OK;
    int32_t tid = -1;
    if (!st && have && last == now) {
        st = rf_db_writer_table_from(w, db, old, 0, &tid, d);
        if (!st && tid >= 0) {
            free(name);
            return rf_db_writer_end_table(w, tid, d);
        }
    }
    if (!st && have && in_place) st = rf_db_writer_table_from(w, db, old, 1, &tid, d);
    if (!st && tid < 0 && in_place) *again = 1;
    static const rf_type type = RF_TYPE_INT;
    static const char *const col = "base_state";
    if (!st && tid < 0 && !in_place) st = rf_db_writer_table(w, name, 1, &type, &col, 0, NULL, &tid, d);
    if (!st && !*again) st = rf_db_writer_append(w, tid, 0, 1, &now, NULL, NULL, d);
    if (!st && !*again) st = rf_db_writer_end_table(w, tid, d);
    free(name);
    return st;
}

/* The commit through writer w (copy on write, or in place); *again: an
** in-place writer could not take a table, nothing is committed. Every
** table is added first, in the state's order (so the manifest does not
** depend on the threads), then their columns written in parallel; leave:
** w's own commit (the syncs, the manifest, the exchange) left undone. */
static rf_status commit_with(rf_txn *t, const rf_db *db, rf_db_writer *w, int leave, int *again, rf_diags *d)
{
    *again = 0;
    char *stamp = has_stamp(t) ? stamp_name(t) : NULL;
    rf_status st = !has_stamp(t) || stamp ? RF_OK : RF_ENOMEM;
    /* the other tables first, in their order: those of inputs this program
    ** does not read, and other programs' derived tables */
    for (int32_t i = 0; !st && i < db->ntables; i++) {
        int mine = stamp && !strcmp(stamp, db->tables[i].name);
        /* (by the tidy name: an older import kept a program's "./t.txt") */
        for (int32_t k = 0; k < t->npreds && !mine; k++)
            mine = rf_file_same_name(t->preds[k].table, db->tables[i].name);
        int32_t tid = -1;
        if (!mine) st = rf_db_writer_table_from(w, db, &db->tables[i], 0, &tid, d);
        if (!mine && !st && tid < 0) st = copy_table(w, db, &db->tables[i], d);
    }
    int64_t ncols = 0;
    for (int32_t i = 0; i < t->npreds; i++) ncols += t->preds[i].ncols;
    col_job *jobs = rf_calloc((size_t)ncols + 1, sizeof *jobs);
    int32_t *tids = rf_calloc((size_t)t->npreds + 1, sizeof *tids);
    if (!st && (!jobs || !tids)) st = RF_ENOMEM;
    int32_t njobs = 0;
    for (int32_t i = 0; !st && !*again && i < t->npreds; i++) {
        rf_txn_pred *p = &t->preds[i];
        const rf_rt_rel *r = p->has_next ? &p->next : &p->cur;
        const rf_rt_rel *tail = !p->has_next && p->tail ? &p->ins : NULL;
        int64_t from = 0;
        st = add_rel(w, db, p->table, p, r, tail, p->prefix, p->base, &tids[i], &from, &p->stored_how, d);
        *again = !st && !p->stored_how;
        int64_t n = r->nrows - from + (tail ? tail->nrows : 0);
        for (int32_t c = 0; !st && !*again && c < p->ncols; c++) {
            col_job *j = &jobs[njobs++];
            *j = (col_job){tids[i], c, p->types, r, tail, from, n * rf_rt_type_width(p->types[c]), RF_OK, {0}};
            rf_diags_init(&j->d);
            t->commit_bytes += j->bytes;
        }
        if (!st && !*again && n > 0) t->commit_rows += n;
    }
    if (!st && !*again) st = write_columns(t, w, jobs, njobs, d);
    for (int32_t i = 0; !st && !*again && i < t->npreds; i++) st = rf_db_writer_end_table(w, tids[i], d);
    if (!st && !*again && stamp) st = add_stamp(t, db, w, again, d);
    for (int32_t i = 0; jobs && i < njobs; i++) rf_diags_free(&jobs[i].d);
    free(jobs);
    free(tids);
    free(stamp);
    if (!st && !*again && !leave) st = rf_db_writer_commit(w, d);
    return st;
}

/* The manifest w's commit wrote, kept in t (the next transaction of the
** process checks the database against it: txn_resident.c). */
static rf_status keep_manifest(rf_txn *t, const rf_db_writer *w)
{
    int64_t len = 0;
    const char *m = rf_db_writer_manifest(w, &len);
    free(t->commit_manifest);
    t->commit_manifest = m ? rf_malloc((size_t)len + 1) : NULL;
    t->commit_manifest_len = len;
    if (!t->commit_manifest) return m ? RF_ENOMEM : RF_EINTERNAL;
    memcpy(t->commit_manifest, m, (size_t)len);
    return RF_OK;
}

rf_status rf_txn_store_commit(rf_txn *t, const rf_db *db, const char *dir, rf_db_writer **pending, rf_diags *d)
{
    rf_db_writer *w = NULL;
    int again = 0;
    rf_status st = RF_OK;
    if (pending) *pending = NULL;
    if (appends_only(t, db)) {
        st = rf_db_writer_in_place(db, RF_VERSION_STRING, &w, d);
        if (!st) st = commit_with(t, db, w, 0, &again, d);
        if (!st && !again) st = keep_manifest(t, w);
        if (!st && !again) {
            t->commit_in_place = 1;
            t->commit_in_place_bytes = rf_db_writer_in_place_bytes(w);
        }
        rf_db_writer_free(w);
        w = NULL;
        if (st || !again) return st;
        t->commit_rows = t->commit_bytes = 0;
    }
    st = rf_db_writer_new(dir, RF_VERSION_STRING, &w, d);
    if (!st) st = commit_with(t, db, w, pending != NULL, &again, d);
    if (!st && !again && !pending) st = keep_manifest(t, w);
    if (!st && again) st = RF_EINTERNAL;
    if (w) rf_db_writer_carried_bytes(w, &t->commit_linked_bytes, &t->commit_copied_bytes);
    if (!st && pending) { /* (its last step the caller's) */
        *pending = w;
        return RF_OK;
    }
    rf_db_writer_free(w);
    return st;
}
