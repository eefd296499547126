/*
** tools/txn_batch.c: a transaction file of `redfox exec` read and applied to
** the base predicates, in batch order.
**
** Owns: the transaction file's syntax (docs/LANGUAGE.md "Transactions"),
** its errors (path:line:col), and the batch state of each base predicate: its
** rows as fixed-width records (strings as dictionary codes) in a hash set,
** each present or not, and the holder of each key. Updates are applied one
** after another in the order of the batch (the GPUTx rule: conflicting
** updates to one key take effect in batch order; the rest commute), so a
** `-f[k] = v` followed by `+f[k] = w` replaces the value, and `+f[k] = w`
** while another row holds k is a key violation that aborts the batch.
*/
#include "txn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one base predicate's rows as records -------------------------------- */

typedef struct key_set {
    int32_t ncols;
    int32_t cols[64];
    int64_t *slots; /* record index + 1 of the key's latest holder; 0 empty */
    const char *what; /* "lang:input:key" or "functional" */
} key_set;

typedef struct batch_state {
    int32_t ncols;
    int32_t width;            /* bytes of a record */
    int32_t off[RF_DB_MAX_COLS];
    uint8_t *rec;             /* nrec records */
    uint8_t *state;           /* per record: 0 absent, 1 present, 2 a repeat of an earlier old row */
    int64_t nrec, caprec, n0; /* n0: the rows before the batch */
    int64_t *slots;           /* record index + 1; 0 empty */
    int64_t cap;              /* slots (a power of two) */
    key_set keys[2];
    int32_t nkeys;
} batch_state;

static uint64_t hash_bytes(const uint8_t *p, int32_t n, uint64_t h)
{
    for (int32_t i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h ^ (h >> 29);
}

static uint64_t hash_rec(const batch_state *s, const uint8_t *r) { return hash_bytes(r, s->width, 0xcbf29ce484222325u); }

static uint64_t hash_key(const batch_state *s, const key_set *k, const uint8_t *r)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (int32_t i = 0; i < k->ncols; i++) {
        int32_t c = k->cols[i];
        int32_t w = (c + 1 < s->ncols ? s->off[c + 1] : s->width) - s->off[c];
        h = hash_bytes(r + s->off[c], w, h);
    }
    return h;
}

static int same_key(const batch_state *s, const key_set *k, const uint8_t *a, const uint8_t *b)
{
    for (int32_t i = 0; i < k->ncols; i++) {
        int32_t c = k->cols[i];
        int32_t w = (c + 1 < s->ncols ? s->off[c + 1] : s->width) - s->off[c];
        if (memcmp(a + s->off[c], b + s->off[c], (size_t)w)) return 0;
    }
    return 1;
}

static uint8_t *rec_at(const batch_state *s, int64_t i) { return s->rec + i * s->width; }

/* The slot of record r in the row set (holding it, or the empty one where it goes). */
static int64_t *row_slot(batch_state *s, const uint8_t *r)
{
    uint64_t m = (uint64_t)s->cap - 1, i = hash_rec(s, r) & m;
    while (s->slots[i] && memcmp(rec_at(s, s->slots[i] - 1), r, (size_t)s->width)) i = (i + 1) & m;
    return &s->slots[i];
}

static int64_t *key_slot(batch_state *s, key_set *k, const uint8_t *r)
{
    uint64_t m = (uint64_t)s->cap - 1, i = hash_key(s, k, r) & m;
    while (k->slots[i] && !same_key(s, k, rec_at(s, k->slots[i] - 1), r)) i = (i + 1) & m;
    return &k->slots[i];
}

/* Room for one more record and a set at most half full. */
static rf_status grow(batch_state *s)
{
    if (s->nrec == s->caprec) {
        int64_t nc = s->caprec ? s->caprec * 2 : 1024;
        uint8_t *r = rf_realloc(s->rec, (size_t)(nc * s->width) + 1);
        if (!r) return RF_ENOMEM;
        s->rec = r;
        uint8_t *st = rf_realloc(s->state, (size_t)nc);
        if (!st) return RF_ENOMEM;
        s->state = st;
        s->caprec = nc;
    }
    if ((s->nrec + 1) * 2 <= s->cap) return RF_OK;
    int64_t nc = s->cap ? s->cap * 2 : 2048;
    while ((s->nrec + 1) * 2 > nc) nc *= 2;
    int64_t *ns = rf_calloc((size_t)nc, sizeof *ns);
    if (!ns) return RF_ENOMEM;
    free(s->slots);
    s->slots = ns;
    s->cap = nc;
    for (int32_t k = 0; k < s->nkeys; k++) {
        free(s->keys[k].slots);
        if (!(s->keys[k].slots = rf_calloc((size_t)nc, sizeof *s->keys[k].slots))) return RF_ENOMEM;
    }
    for (int64_t i = 0; i < s->nrec; i++) {
        if (s->state[i] == 2) continue;
        *row_slot(s, rec_at(s, i)) = i + 1;
        if (s->state[i] != 1) continue;
        for (int32_t k = 0; k < s->nkeys; k++) *key_slot(s, &s->keys[k], rec_at(s, i)) = i + 1;
    }
    return RF_OK;
}

static void state_free(batch_state *s)
{
    if (!s) return;
    free(s->rec);
    free(s->state);
    free(s->slots);
    for (int32_t k = 0; k < s->nkeys; k++) free(s->keys[k].slots);
    free(s);
}

/* The batch state of base predicate p: its rows before the batch. */
static rf_status state_new(rf_txn_pred *p, batch_state **out)
{
    const rf_fe_pred *f = p->fe;
    batch_state *s = rf_calloc(1, sizeof *s);
    if (!s) return RF_ENOMEM;
    s->ncols = f->arity;
    for (int32_t c = 0; c < f->arity; c++) {
        s->off[c] = s->width;
        s->width += rf_rt_type_width(f->types[c]);
    }
    if (f->ninput_key > 0 && f->ninput_key <= 64) {
        key_set *k = &s->keys[s->nkeys++];
        k->ncols = f->ninput_key;
        memcpy(k->cols, f->input_key, (size_t)f->ninput_key * sizeof *k->cols);
        k->what = "lang:input:key";
    }
    if (f->functional && f->arity > 1 && f->arity - 1 <= 64) {
        key_set *k = &s->keys[s->nkeys++];
        k->ncols = f->arity - 1;
        for (int32_t c = 0; c < k->ncols; c++) k->cols[c] = c;
        k->what = "functional";
    }
    rf_status st = grow(s); /* the sets exist even for a table without rows */
    for (int64_t i = 0; i < p->cur.nrows && !st; i++) {
        if ((st = grow(s))) break;
        uint8_t *r = rec_at(s, s->nrec);
        for (int32_t c = 0; c < s->ncols; c++) {
            int32_t w = rf_rt_type_width(f->types[c]);
            memcpy(r + s->off[c], (const uint8_t *)p->cur.cols[c] + i * w, (size_t)w);
        }
        int64_t *slot = row_slot(s, r);
        s->state[s->nrec] = *slot ? 2 : 1; /* a repeated line of the input counts once */
        if (!*slot) {
            *slot = s->nrec + 1;
            for (int32_t k = 0; k < s->nkeys; k++) *key_slot(s, &s->keys[k], r) = s->nrec + 1;
        }
        s->nrec++;
    }
    s->n0 = s->nrec;
    if (st) {
        state_free(s);
        return st;
    }
    *out = s;
    return RF_OK;
}

/* ---- values for messages ------------------------------------------------- */

static void fmt_value(const rf_txn *t, rf_type ty, const uint8_t *v, rf_buf *b)
{
    int64_t i64;
    int32_t i32;
    uint32_t u32;
    double f;
    switch (ty) {
    case RF_TYPE_INT: memcpy(&i64, v, 8); rf_val_fmt_int(b, i64); break;
    case RF_TYPE_DECIMAL: memcpy(&i64, v, 8); rf_val_fmt_dec(b, i64); break;
    case RF_TYPE_FLOAT: memcpy(&f, v, 8); rf_val_fmt_float(b, f); break;
    case RF_TYPE_DATE: memcpy(&i32, v, 4); rf_val_fmt_date(b, i32); break;
    case RF_TYPE_BOOL: rf_val_fmt_bool(b, v[0]); break;
    case RF_TYPE_STRING: {
        memcpy(&u32, v, 4);
        int64_t n = 0;
        const char *s = rf_rt_dict_str(t->dict, u32, &n);
        rf_buf_printf(b, "\"%.*s\"", (int)(n > 200 ? 200 : n), s ? s : "");
        break;
    }
    }
}

static void fmt_key(const rf_txn *t, const batch_state *s, const rf_fe_pred *f, const key_set *k, const uint8_t *r,
                    rf_buf *b)
{
    rf_buf_putc(b, '(');
    for (int32_t i = 0; i < k->ncols; i++) {
        int32_t c = k->cols[i];
        rf_buf_printf(b, "%s%s", i ? ", " : "", f->cols && f->cols[c] ? f->cols[c] : "_");
    }
    rf_buf_puts(b, ") = (");
    for (int32_t i = 0; i < k->ncols; i++) {
        if (i) rf_buf_puts(b, ", ");
        fmt_value(t, f->types[k->cols[i]], r + s->off[k->cols[i]], b);
    }
    rf_buf_putc(b, ')');
}

/* ---- the transaction file ------------------------------------------------ */

typedef struct reader {
    const char *path;
    const char *p, *end;  /* the current line */
    const char *line0;    /* its start */
    int64_t line;
    rf_diags *d;
} reader;

static rf_status err_at(reader *r, const char *at, const char *fmt, const char *a, const char *b)
{
    rf_loc loc = rf_mkloc(r->path, (int32_t)(r->line > INT32_MAX ? 0 : r->line), (int32_t)(at - r->line0) + 1);
    rf_error(r->d, loc, fmt, a, b);
    return RF_EUSER;
}

static void skip_ws(reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r')) r->p++;
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
}

/* A string literal at r->p ("..." with \" \\ \n \t) into b. */
static rf_status string_lit(reader *r, rf_buf *b)
{
    const char *start = r->p++;
    while (r->p < r->end && *r->p != '"') {
        char c = *r->p++;
        if (c == '\\') {
            if (r->p >= r->end) break;
            char e = *r->p++;
            if (e == 'n') c = '\n';
            else if (e == 't') c = '\t';
            else if (e == '"' || e == '\\') c = e;
            else return err_at(r, r->p - 2, "unknown escape '\\%s' in a string%s", (char[]){e, 0}, "");
        }
        rf_buf_putc(b, c);
    }
    if (r->p >= r->end) return err_at(r, start, "a string without its closing quote%s%s", "", "");
    r->p++;
    return b->oom ? RF_ENOMEM : RF_OK;
}

/* One value of column type ty at r->p into v (width bytes). */
static rf_status value(reader *r, rf_txn *t, rf_type ty, uint8_t *v)
{
    skip_ws(r);
    const char *start = r->p;
    rf_buf b;
    rf_buf_init(&b);
    rf_status st = RF_OK;
    int quoted = r->p < r->end && *r->p == '"';
    if (quoted) {
        st = string_lit(r, &b);
    } else {
        while (r->p < r->end && *r->p != ',' && *r->p != ')' && *r->p != ']' &&
               !(*r->p == '/' && r->p + 1 < r->end && r->p[1] == '/'))
            r->p++;
        const char *e = r->p;
        while (e > start && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
        /* the value of `+f[k] = v.` ends the line: its '.' ends the fact */
        if ((r->p == r->end || *r->p == '/') && e > start && e[-1] == '.') r->p = --e;
        rf_buf_append(&b, start, e - start);
        if (e == start) st = err_at(r, start, "expected a %s value%s", rf_val_type_name(ty), "");
    }
    if (st) {
        rf_buf_free(&b);
        return st;
    }
    const char *s = b.len ? (const char *)b.data : "";
    int64_t n = b.len;
    rf_val_err ve = {NULL, 0};
    /* records are packed: parse into aligned storage, then copy */
    union {
        int64_t i;
        double f;
        int32_t d;
        uint8_t b;
    } u;
    switch (ty) {
    case RF_TYPE_INT: st = rf_val_parse_int(s, n, &u.i, &ve); if (!st) memcpy(v, &u.i, 8); break;
    case RF_TYPE_DECIMAL: st = rf_val_parse_decimal(s, n, &u.i, &ve); if (!st) memcpy(v, &u.i, 8); break;
    case RF_TYPE_FLOAT: st = rf_val_parse_float(s, n, &u.f, &ve); if (!st) memcpy(v, &u.f, 8); break;
    case RF_TYPE_DATE: st = rf_val_parse_date(s, n, &u.d, &ve); if (!st) memcpy(v, &u.d, 4); break;
    case RF_TYPE_BOOL: st = rf_val_parse_bool(s, n, &u.b, &ve); if (!st) *v = u.b; break;
    case RF_TYPE_STRING: {
        st = rf_val_check_utf8(s, n, &ve);
        if (!st && memchr(s, 0, (size_t)n)) {
            st = RF_EUSER;
            ve.why = "a NUL byte in a string";
        }
        uint32_t code = 0;
        if (!st) st = rf_rt_dict_intern(t->dict, s, n, &code);
        if (!st) memcpy(v, &code, 4);
        break;
    }
    }
    if (st == RF_EUSER) {
        char shown[80];
        snprintf(shown, sizeof shown, "%.*s", (int)(n > 60 ? 60 : n), s);
        rf_buf_free(&b);
        rf_loc loc = rf_mkloc(r->path, (int32_t)(r->line > INT32_MAX ? 0 : r->line), (int32_t)(start - r->line0) + 1);
        rf_error(r->d, loc, "expected a%s %s, found \"%s\"%s%s", ty == RF_TYPE_INT ? "n" : "", rf_val_type_name(ty),
                 shown, ve.why ? ": " : "", ve.why ? ve.why : "");
        return RF_EUSER;
    }
    rf_buf_free(&b);
    return st;
}

static rf_txn_pred *find_by_name(rf_txn *t, const char *name, int64_t n)
{
    for (int32_t i = 0; i < t->npreds; i++)
        if ((int64_t)strlen(t->preds[i].fe->name) == n && !memcmp(t->preds[i].fe->name, name, (size_t)n))
            return &t->preds[i];
    return NULL;
}

/* Applies one update (record rec, insert or delete) to p's state. */
static rf_status apply(reader *r, rf_txn *t, rf_txn_pred *p, batch_state *s, const uint8_t *rec, int insert,
                       const char *at)
{
    int64_t *slot = row_slot(s, rec);
    int64_t have = *slot ? *slot - 1 : -1;
    if (!insert) {
        if (have < 0 || s->state[have] != 1) return RF_OK; /* not there: nothing to delete */
        s->state[have] = 0;
        return RF_OK;
    }
    if (have >= 0 && s->state[have] == 1) return RF_OK; /* already there: sets */
    for (int32_t k = 0; k < s->nkeys; k++) {
        int64_t *ks = key_slot(s, &s->keys[k], rec);
        if (!*ks || s->state[*ks - 1] != 1) continue;
        rf_buf b;
        rf_buf_init(&b);
        fmt_key(t, s, p->fe, &s->keys[k], rec, &b);
        rf_buf row;
        rf_buf_init(&row);
        rf_buf_printf(&row, "%s", *ks - 1 < s->n0 ? "a row already in the database" : "an earlier insert of this batch");
        rf_status st = err_at(r, at, "key violation: `%s` already holds %s", p->fe->name, b.oom ? "this key" : rf_buf_cstr(&b));
        rf_diag_add(r->d, RF_SEV_NOTE, rf_mkloc(r->path, 0, 0),
                    "%s holds another row with this key (%s of `%s`): delete that row earlier in the batch to replace it",
                    rf_buf_cstr(&row), s->keys[k].what, p->fe->name);
        rf_buf_free(&b);
        rf_buf_free(&row);
        return st;
    }
    if (have >= 0) {
        s->state[have] = 1;
    } else {
        rf_status st = grow(s);
        if (st) return st;
        have = s->nrec++;
        memcpy(rec_at(s, have), rec, (size_t)s->width);
        s->state[have] = 1;
        *row_slot(s, rec) = have + 1;
    }
    for (int32_t k = 0; k < s->nkeys; k++) *key_slot(s, &s->keys[k], rec) = have + 1;
    return RF_OK;
}

/* One line: nothing, a comment, or an update. */
static rf_status line(reader *r, rf_txn *t, uint8_t *rec)
{
    skip_ws(r);
    if (r->p >= r->end || (r->end - r->p >= 2 && r->p[0] == '/' && r->p[1] == '/')) return RF_OK;
    const char *at = r->p;
    if (*r->p != '+' && *r->p != '-')
        return err_at(r, at, "expected '+' (insert) or '-' (delete) and a fact, as in +edge(1, 2)%s%s", "", "");
    int insert = *r->p++ == '+';
    skip_ws(r);
    const char *name = r->p;
    while (r->p < r->end && is_name_char(*r->p)) r->p++;
    if (r->p == name) return err_at(r, name, "expected a predicate name%s%s", "", "");
    char nm[256];
    snprintf(nm, sizeof nm, "%.*s", (int)(r->p - name > 200 ? 200 : r->p - name), name);
    rf_txn_pred *p = find_by_name(t, name, r->p - name);
    if (!p) return err_at(r, name, "unknown predicate `%s`: the program has no such predicate%s", nm, "");
    if (!p->base)
        return err_at(r, name, "`%s` is derived by the program's rules: a transaction changes only base predicates (those with lang:input)%s",
                      nm, "");
    const rf_fe_pred *f = p->fe;
    skip_ws(r);
    int functional = r->p < r->end && *r->p == '[';
    if (r->p >= r->end || (*r->p != '(' && *r->p != '['))
        return err_at(r, r->p, "expected '(' or '[' after `%s`%s", nm, "");
    r->p++;
    /* a predicate's state (a set of its rows) is built when the batch first
    ** names it: the tables a batch does not touch cost nothing */
    if (!p->batch) {
        rf_status st = state_new(p, (batch_state **)&p->batch);
        if (st) return st;
    }
    batch_state *s = p->batch;
    int32_t n = 0;
    char close = functional ? ']' : ')';
    for (;;) {
        skip_ws(r);
        if (n == 0 && r->p < r->end && *r->p == close && !functional) break;
        if (n >= f->arity) {
            char buf[32];
            snprintf(buf, sizeof buf, "%d", (int)f->arity);
            return err_at(r, r->p, "too many values: `%s` has %s columns", nm, buf);
        }
        rf_status st = value(r, t, f->types[n], rec + s->off[n]);
        if (st) return st;
        n++;
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) break;
        return err_at(r, r->p, "expected ',' or '%s'%s", functional ? "]" : ")", "");
    }
    r->p++;
    if (functional) {
        skip_ws(r);
        if (r->p >= r->end || *r->p != '=') return err_at(r, r->p, "expected '= value' after `%s[...]`%s", nm, "");
        r->p++;
        if (n >= f->arity) {
            char buf[32];
            snprintf(buf, sizeof buf, "%d", (int)f->arity);
            return err_at(r, r->p, "too many values: `%s` has %s columns", nm, buf);
        }
        rf_status st = value(r, t, f->types[n], rec + s->off[n]);
        if (st) return st;
        n++;
    }
    if (n != f->arity) {
        char want[32], got[32];
        snprintf(want, sizeof want, "%d", (int)f->arity);
        snprintf(got, sizeof got, "%d", (int)n);
        rf_loc loc = rf_mkloc(r->path, (int32_t)r->line, (int32_t)(at - r->line0) + 1);
        rf_error(r->d, loc, "`%s` has %s columns; this fact gives %s", nm, want, got);
        return RF_EUSER;
    }
    skip_ws(r);
    if (r->p < r->end && *r->p == '.') r->p++;
    skip_ws(r);
    if (r->p < r->end && !(r->end - r->p >= 2 && r->p[0] == '/' && r->p[1] == '/'))
        return err_at(r, r->p, "unexpected text after the fact%s%s", "", "");
    return apply(r, t, p, s, rec, insert, at);
}

static rf_status read_file(const char *path, rf_buf *b, rf_diags *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        rf_error(d, rf_mkloc(path, 0, 0), "cannot read the transaction file: %s", strerror(errno));
        return RF_EUSER;
    }
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) rf_buf_append(b, buf, (int64_t)n);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        rf_error(d, rf_mkloc(path, 0, 0), "cannot read the transaction file");
        return RF_EUSER;
    }
    return b->oom ? RF_ENOMEM : RF_OK;
}

rf_status rf_txn_batch_apply(rf_txn *t, const char *path, rf_diags *d)
{
    rf_status st = RF_OK;
    int32_t maxw = 8;
    for (int32_t i = 0; i < t->npreds; i++) {
        const rf_txn_pred *p = &t->preds[i];
        int32_t w = 0;
        for (int32_t c = 0; p->base && c < p->fe->arity; c++) w += rf_rt_type_width(p->fe->types[c]);
        if (w > maxw) maxw = w;
    }
    rf_buf text;
    rf_buf_init(&text);
    st = read_file(path, &text, d);
    if (st) {
        rf_buf_free(&text);
        return st;
    }
    uint8_t *rec = rf_calloc((size_t)maxw + 8, 1);
    if (!rec) {
        rf_buf_free(&text);
        return RF_ENOMEM;
    }
    reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.d = d;
    const char *p = text.len ? (const char *)text.data : "", *end = p + text.len;
    while (p < end && !st) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        r.line++;
        r.line0 = r.p = p;
        r.end = nl ? nl : end;
        st = line(&r, t, rec);
        p = nl ? nl + 1 : end;
    }
    free(rec);
    rf_buf_free(&text);
    return st;
}

/* The records of s that keep() accepts, as columns of p's types. */
static rf_status records_to_rel(const batch_state *s, const rf_fe_pred *f, int64_t lo, int64_t hi, int want,
                                rf_rt_rel *out)
{
    int64_t n = 0;
    for (int64_t i = lo; i < hi; i++) n += s->state[i] == want;
    rf_status st = rf_rt_rel_alloc(out, f->arity, f->types, n);
    if (st) return st;
    int64_t j = 0;
    for (int64_t i = lo; i < hi; i++) {
        if (s->state[i] != want) continue;
        const uint8_t *r = rec_at(s, i);
        for (int32_t c = 0; c < f->arity; c++) {
            int32_t w = rf_rt_type_width(f->types[c]);
            memcpy((uint8_t *)out->cols[c] + j * w, r + s->off[c], (size_t)w);
        }
        j++;
    }
    return RF_OK;
}

rf_status rf_txn_batch_finish(rf_txn *t, rf_diags *d)
{
    (void)d;
    rf_status st = RF_OK;
    for (int32_t i = 0; i < t->npreds && !st; i++) {
        rf_txn_pred *p = &t->preds[i];
        batch_state *s = p->batch;
        if (!p->base || !s) continue;
        st = records_to_rel(s, p->fe, 0, s->nrec, 1, &p->next);
        if (!st) st = records_to_rel(s, p->fe, s->n0, s->nrec, 1, &p->ins);
        if (!st) st = records_to_rel(s, p->fe, 0, s->n0, 0, &p->del);
        if (!st) {
            p->has_next = 1;
            p->changed = p->ins.nrows > 0 || p->del.nrows > 0;
            /* every old row kept, none a repeat: next is cur, then the inserted rows */
            int64_t kept = 0;
            while (kept < s->n0 && s->state[kept] == 1) kept++;
            p->prefix = kept == s->n0 && kept == p->cur.nrows ? p->prefix : 0;
        }
        state_free(s);
        p->batch = NULL;
    }
    return st;
}
