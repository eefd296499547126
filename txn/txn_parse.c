/*
** txn/txn_parse.c: a transaction file of `redfox exec` parsed into
** columns, in parallel.
**
** Owns: the transaction file's syntax (docs/TRANSACTIONS.md: one
** `+pred(v, ...)` or `-pred(v, ...)` a line, `f[k] = v` for a functional
** predicate, // comments), its errors (path:line:col), and the parallel
** parse: the text is cut into chunks at line starts, each chunk parsed by a
** thread of the pool into packed records per base predicate, then the
** chunks' records moved, in file order, into each predicate's typed columns
** (rf_txn_ops). Strings are interned after the parse, in file order, so
** their codes are those a line-by-line reading gives. The first bad line in
** file order is the error, whatever thread met it first: a chunk stops at
** its own first bad line, and the earliest chunk with one decides.
*/
#include "rf_cpu.h"
#include "rf_txn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A chunk's updates of one predicate, packed records in line order. */
typedef struct chunk_ops {
    uint8_t *rec;
    uint8_t *insert;
    int64_t *at;
    int64_t n, cap;
} chunk_ops;

/* A string value waiting for its code: written into op's column col. */
typedef struct str_patch {
    int32_t pred, col;
    int64_t op;
    int64_t soff, slen; /* in the chunk's strs */
} str_patch;

typedef struct chunk {
    const char *begin, *end; /* whole lines */
    chunk_ops *ops;          /* [npreds] */
    rf_buf strs;
    str_patch *patches;
    int64_t npatches, cappatches;
    int64_t bad;             /* byte offset (in the file) of its first bad line, -1 none */
    rf_status st;            /* a failure other than a bad line */
} chunk;

typedef struct parse_job {
    rf_txn *t;
    const char *text;
    chunk *chunks;
    int32_t nchunks;
} parse_job;

/* ---- one line ---------------------------------------------------------------- */

typedef struct reader {
    const char *path;
    const char *p, *end; /* the current line */
    const char *line0;   /* its start */
    int64_t line;        /* its number (0 while parsing a chunk: messages come later) */
    rf_diags *d;         /* NULL: no message (a chunk's parse) */
    chunk *c;
    rf_txn *t;
    int32_t last;        /* the predicate of the line before, -1 none */
} reader;

static rf_status err_at(reader *r, const char *at, const char *fmt, const char *a, const char *b)
{
    if (!r->d) return RF_EUSER;
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

/* One value of column col (type ty) of predicate pred at r->p into v. A
** string is checked and kept in the chunk's strs, its code patched in later.
** The text is parsed where it lies; only a string with escapes is copied. */
static rf_status value(reader *r, int32_t pred, int32_t col, int64_t op, rf_type ty, uint8_t *v)
{
    skip_ws(r);
    const char *start = r->p;
    if (ty == RF_TYPE_INT) {
        /* the common case: at most 18 digits right before ',', ')' or ']'
        ** (what the general path below gives them; anything else goes there) */
        const char *q = r->p;
        int neg = q < r->end && *q == '-';
        if (q < r->end && (*q == '-' || *q == '+')) q++;
        const char *ds = q;
        uint64_t x = 0;
        while (q < r->end && (unsigned)(*q - '0') < 10 && q - ds < 18) x = x * 10 + (uint64_t)(*q++ - '0');
        if (q > ds && q < r->end && (*q == ',' || *q == ')' || *q == ']')) {
            int64_t i = neg ? -(int64_t)x : (int64_t)x;
            memcpy(v, &i, 8);
            r->p = q;
            return RF_OK;
        }
    }
    rf_buf b;
    rf_buf_init(&b);
    rf_status st = RF_OK;
    const char *s = "";
    int64_t n = 0;
    if (r->p < r->end && *r->p == '"') {
        const char *q = r->p + 1;
        while (q < r->end && *q != '"' && *q != '\\') q++;
        if (q < r->end && *q == '"') { /* no escapes: the text itself */
            s = r->p + 1;
            n = q - s;
            r->p = q + 1;
        } else {
            st = string_lit(r, &b);
            s = b.len ? (const char *)b.data : "";
            n = b.len;
        }
    } else {
        while (r->p < r->end && *r->p != ',' && *r->p != ')' && *r->p != ']' &&
               !(*r->p == '/' && r->p + 1 < r->end && r->p[1] == '/'))
            r->p++;
        const char *e = r->p;
        while (e > start && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
        /* the value of `+f[k] = v.` ends the line: its '.' ends the fact */
        if ((r->p == r->end || *r->p == '/') && e > start && e[-1] == '.') r->p = --e;
        s = start;
        n = e - start;
        if (e == start) st = err_at(r, start, "expected a%s %s value", ty == RF_TYPE_INT ? "n" : "", rf_val_type_name(ty));
    }
    if (st) {
        rf_buf_free(&b);
        return st;
    }
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
    case RF_TYPE_DEC128: /* a total's wide decimal: never a stored predicate's column (docs/TRANSACTIONS.md) */
        st = RF_EUSER;
        ve.why = "a total beyond 64 bits (a wide decimal) cannot be given in a transaction";
        ve.off = 0;
        break;
    case RF_TYPE_FLOAT: st = rf_val_parse_float(s, n, &u.f, &ve); if (!st) memcpy(v, &u.f, 8); break;
    case RF_TYPE_DATE: st = rf_val_parse_date(s, n, &u.d, &ve); if (!st) memcpy(v, &u.d, 4); break;
    case RF_TYPE_BOOL: st = rf_val_parse_bool(s, n, &u.b, &ve); if (!st) *v = u.b; break;
    case RF_TYPE_STRING: {
        st = rf_val_check_utf8(s, n, &ve);
        if (!st && memchr(s, 0, (size_t)n)) {
            st = RF_EUSER;
            ve.why = "a NUL byte in a string";
        }
        chunk *c = r->c;
        if (!st && c->npatches == c->cappatches) {
            int64_t nc = c->cappatches ? c->cappatches * 2 : 64;
            str_patch *np = rf_realloc(c->patches, (size_t)nc * sizeof *np);
            if (!np) st = RF_ENOMEM;
            else c->patches = np, c->cappatches = nc;
        }
        if (!st) {
            c->patches[c->npatches++] = (str_patch){pred, col, op, c->strs.len, n};
            rf_buf_append(&c->strs, s, n);
            if (c->strs.oom) st = RF_ENOMEM;
        }
        memset(v, 0, 4);
        break;
    }
    }
    if (st == RF_EUSER) {
        char shown[RF_VAL_QUOTE_BUF];
        rf_val_quote(shown, s, n);
        rf_buf_free(&b);
        if (!r->d) return RF_EUSER;
        rf_loc loc = rf_mkloc(r->path, (int32_t)(r->line > INT32_MAX ? 0 : r->line), (int32_t)(start - r->line0) + 1);
        rf_error(r->d, loc, "expected a%s %s, found %s%s%s", ty == RF_TYPE_INT ? "n" : "", rf_val_type_name(ty),
                 shown, ve.why ? ": " : "", ve.why ? ve.why : "");
        return RF_EUSER;
    }
    rf_buf_free(&b);
    return st;
}

static int32_t find_by_name(rf_txn *t, const char *name, int64_t n)
{
    for (int32_t i = 0; i < t->npreds; i++) {
        const char *pn = t->preds[i].fe->name;
        if (!strncmp(pn, name, (size_t)n) && pn[n] == 0) return i;
    }
    return -1;
}

/* Room for one more record in o (width bytes); at first for a record per
** 16 bytes of the chunk (a line is longer: the buffers rarely grow). */
static rf_status ops_room(chunk_ops *o, int32_t width, int64_t chunk_bytes)
{
    if (o->n < o->cap) return RF_OK;
    int64_t nc = o->cap ? o->cap * 2 : chunk_bytes / 16 + 16;
    uint8_t *r = rf_realloc(o->rec, (size_t)(nc * width) + 1);
    if (!r) return RF_ENOMEM;
    o->rec = r;
    uint8_t *in = rf_realloc(o->insert, (size_t)nc);
    if (!in) return RF_ENOMEM;
    o->insert = in;
    int64_t *at = rf_realloc(o->at, (size_t)nc * sizeof *at);
    if (!at) return RF_ENOMEM;
    o->at = at;
    o->cap = nc;
    return RF_OK;
}

static const char *pred_name(char *buf, size_t size, const char *name, const char *end)
{
    snprintf(buf, size, "%.*s", (int)(end - name > 200 ? 200 : end - name), name);
    return buf;
}

/* One line: nothing, a comment, or an update appended to the chunk. */
static rf_status line(reader *r, const char *text)
{
    rf_txn *t = r->t;
    skip_ws(r);
    if (r->p >= r->end || (r->end - r->p >= 2 && r->p[0] == '/' && r->p[1] == '/')) return RF_OK;
    const char *at = r->p;
    if (!*r->p) return err_at(r, at, "a NUL byte: a transaction file is text, one update a line%s%s", "", "");
    if (*r->p != '+' && *r->p != '-')
        return err_at(r, at, "expected '+' (insert) or '-' (delete) and a fact, as in +edge(1, 2)%s%s", "", "");
    int insert = *r->p++ == '+';
    skip_ws(r);
    const char *name = r->p;
    while (r->p < r->end && is_name_char(*r->p)) r->p++;
    if (r->p == name) return err_at(r, name, "expected a predicate name%s%s", "", "");
    const char *name_end = r->p;
    char nm[256]; /* the name for a message, made only for one */
#define NM pred_name(nm, sizeof nm, name, name_end)
    int32_t pi = r->last >= 0 && !strncmp(t->preds[r->last].fe->name, name, (size_t)(r->p - name)) &&
                         t->preds[r->last].fe->name[r->p - name] == 0
                     ? r->last
                     : find_by_name(t, name, r->p - name);
    r->last = pi;
    if (pi < 0) {
        /* (a predicate the program only declares has no relation here) */
        for (int32_t i = 0; t->fe && i < t->fe->npreds; i++) {
            const char *pn = t->fe->preds[i]->name;
            if (!strncmp(pn, name, (size_t)(r->p - name)) && pn[r->p - name] == 0)
                return err_at(r, name, "`%s` is not a base predicate (it has no lang:input): a transaction changes only base "
                                       "predicates%s", NM, "");
        }
        return err_at(r, name, "unknown predicate `%s`: the program has no such predicate%s", NM, "");
    }
    rf_txn_pred *p = &t->preds[pi];
    if (!p->base)
        return err_at(r, name, "`%s` is derived by the program's rules: a transaction changes only base predicates (those with lang:input)%s",
                      NM, "");
    const rf_fe_pred *f = p->fe;
    skip_ws(r);
    int functional = r->p < r->end && *r->p == '[';
    if (r->p >= r->end || (*r->p != '(' && *r->p != '['))
        return err_at(r, r->p, "expected '(' or '[' after `%s`%s", NM, "");
    r->p++;
    const rf_txn_ops *po = p->ops;
    chunk_ops *o = &r->c->ops[pi];
    rf_status st = ops_room(o, po->width, r->c->end - r->c->begin);
    if (st) return st;
    uint8_t *rec = o->rec + o->n * po->width;
    int32_t n = 0;
    char close = functional ? ']' : ')';
    for (;;) {
        skip_ws(r);
        if (n == 0 && r->p < r->end && *r->p == close && !functional) break;
        if (n >= f->arity) {
            char buf[32];
            snprintf(buf, sizeof buf, "%d", (int)f->arity);
            return err_at(r, r->p, "too many values: `%s` has %s columns", NM, buf);
        }
        if ((st = value(r, pi, n, o->n, f->types[n], rec + po->off[n]))) return st;
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
        if (r->p >= r->end || *r->p != '=') return err_at(r, r->p, "expected '= value' after `%s[...]`%s", NM, "");
        r->p++;
        if (n >= f->arity) {
            char buf[32];
            snprintf(buf, sizeof buf, "%d", (int)f->arity);
            return err_at(r, r->p, "too many values: `%s` has %s columns", NM, buf);
        }
        if ((st = value(r, pi, n, o->n, f->types[n], rec + po->off[n]))) return st;
        n++;
    }
    if (n != f->arity) {
        if (!r->d) return RF_EUSER;
        char want[32], got[32];
        snprintf(want, sizeof want, "%d", (int)f->arity);
        snprintf(got, sizeof got, "%d", (int)n);
        rf_loc loc = rf_mkloc(r->path, (int32_t)r->line, (int32_t)(at - r->line0) + 1);
        rf_error(r->d, loc, "`%s` has %s columns; this fact gives %s", NM, want, got);
        return RF_EUSER;
    }
    skip_ws(r);
    if (r->p < r->end && *r->p == '.') r->p++;
    skip_ws(r);
    /* (a NUL byte there is named as one: it was "unexpected text") */
    if (r->p < r->end && !*r->p)
        return err_at(r, r->p, "a NUL byte: a transaction file is text, one update a line%s%s", "", "");
    if (r->p < r->end && !(r->end - r->p >= 2 && r->p[0] == '/' && r->p[1] == '/'))
        return err_at(r, r->p, "unexpected text after the fact%s%s", "", "");
    o->insert[o->n] = (uint8_t)insert;
    o->at[o->n] = at - text;
    o->n++;
    return RF_OK;
#undef NM
}

/* ---- chunks ------------------------------------------------------------------ */

static void parse_chunk(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    parse_job *j = ctx;
    for (int64_t ci = begin; ci < end; ci++) {
        chunk *c = &j->chunks[ci];
        reader r;
        memset(&r, 0, sizeof r);
        r.c = c;
        r.t = j->t;
        r.last = -1;
        const char *p = c->begin;
        while (p < c->end) {
            const char *nl = memchr(p, '\n', (size_t)(c->end - p));
            r.line0 = r.p = p;
            r.end = nl ? nl : c->end;
            rf_status st = line(&r, j->text);
            if (st == RF_EUSER) {
                c->bad = p - j->text;
                break;
            }
            if (st) {
                c->st = st;
                break;
            }
            p = nl ? nl + 1 : c->end;
        }
    }
}

typedef struct move_job {
    rf_txn *t;
    chunk *chunks;
    int64_t **base;  /* [chunk][pred]: the first op index of the chunk's records */
    int32_t file;
} move_job;

/* A chunk's records into the predicates' columns. */
static void move_chunk(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    move_job *j = ctx;
    for (int64_t ci = begin; ci < end; ci++) {
        chunk *c = &j->chunks[ci];
        for (int32_t pi = 0; pi < j->t->npreds; pi++) {
            chunk_ops *co = &c->ops[pi];
            rf_txn_ops *o = j->t->preds[pi].ops;
            if (!co->n) continue;
            int64_t b = j->base[ci][pi];
            for (int32_t col = 0; col < o->ncols; col++) {
                int32_t w = rf_rt_type_width(j->t->preds[pi].fe->types[col]);
                uint8_t *dst = (uint8_t *)o->cols[col] + b * w;
                const uint8_t *src = co->rec + o->off[col];
                int64_t rw = o->width, n = co->n;
                /* a fixed-size copy per width: the compiler's loads and
                ** stores, not a call of memcpy per value */
                switch (w) {
                case 8:
                    for (int64_t i = 0; i < n; i++) memcpy(dst + i * 8, src + i * rw, 8);
                    break;
                case 4:
                    for (int64_t i = 0; i < n; i++) memcpy(dst + i * 4, src + i * rw, 4);
                    break;
                case 1:
                    for (int64_t i = 0; i < n; i++) dst[i] = src[i * rw];
                    break;
                default:
                    for (int64_t i = 0; i < n; i++) memcpy(dst + i * w, src + i * rw, (size_t)w);
                }
            }
            memcpy(o->insert + b, co->insert, (size_t)co->n);
            memcpy(o->at + b, co->at, (size_t)co->n * sizeof *o->at);
            for (int64_t i = 0; i < co->n; i++) o->file[b + i] = j->file;
        }
    }
}

static rf_status ops_new(const rf_fe_pred *f, rf_txn_ops **out)
{
    rf_txn_ops *o = rf_calloc(1, sizeof *o);
    if (!o) return RF_ENOMEM;
    o->ncols = f->arity;
    for (int32_t c = 0; c < f->arity; c++) {
        o->off[c] = o->width;
        o->width += rf_rt_type_width(f->types[c]);
    }
    if (!(o->cols = rf_calloc((size_t)f->arity + 1, sizeof *o->cols))) {
        free(o);
        return RF_ENOMEM;
    }
    *out = o;
    return RF_OK;
}

static rf_status ops_reserve(rf_txn_pred *p, int64_t n)
{
    rf_txn_ops *o = p->ops;
    if (o->n + n <= o->cap) return RF_OK;
    int64_t nc = o->cap ? o->cap : 1024;
    while (nc < o->n + n) nc *= 2;
    for (int32_t c = 0; c < o->ncols; c++) {
        void *v = rf_realloc(o->cols[c], (size_t)(nc * rf_rt_type_width(p->fe->types[c])));
        if (!v) return RF_ENOMEM;
        o->cols[c] = v;
    }
    uint8_t *in = rf_realloc(o->insert, (size_t)nc);
    if (!in) return RF_ENOMEM;
    o->insert = in;
    int32_t *fi = rf_realloc(o->file, (size_t)nc * sizeof *fi);
    if (!fi) return RF_ENOMEM;
    o->file = fi;
    int64_t *at = rf_realloc(o->at, (size_t)nc * sizeof *at);
    if (!at) return RF_ENOMEM;
    o->at = at;
    o->cap = nc;
    return RF_OK;
}

void rf_txn_ops_free(rf_txn_ops *o)
{
    if (!o) return;
    for (int32_t c = 0; o->cols && c < o->ncols; c++) free(o->cols[c]);
    free(o->cols);
    free(o->insert);
    free(o->file);
    free(o->at);
    free(o);
}

/* A chunk of 16 KiB at least (a line is far smaller, and handing a chunk
** to a thread costs more than parsing a few lines), and 8 chunks a thread at
** most (so that a slow thread's share is small). */
#define CHUNK_MIN (16 * 1024)

/* A chunk's strings, waiting for their codes: each patch's op is its
** index among the predicate's ops of the parse (0 = the parse's first). */
typedef struct strings_piece {
    rf_buf strs;
    str_patch *patches;
    int64_t n;
} strings_piece;

struct rf_txn_strings {
    strings_piece *pieces; /* in file order */
    int32_t n;
};

void rf_txn_strings_free(rf_txn_strings *s)
{
    if (!s) return;
    for (int32_t i = 0; i < s->n; i++) {
        rf_buf_free(&s->pieces[i].strs);
        free(s->pieces[i].patches);
    }
    free(s->pieces);
    free(s);
}

rf_status rf_txn_strings_intern(rf_txn *t, const rf_txn_strings *s, const int64_t *first)
{
    rf_status st = RF_OK;
    for (int32_t i = 0; s && i < s->n && !st; i++) {
        const strings_piece *pc = &s->pieces[i];
        for (int64_t k = 0; k < pc->n && !st; k++) {
            const str_patch *sp = &pc->patches[k];
            uint32_t code = 0;
            st = rf_rt_dict_intern(t->dict, (const char *)pc->strs.data + sp->soff, sp->slen, &code);
            rf_txn_ops *o = t->preds[sp->pred].ops;
            int64_t op = (first ? first[sp->pred] : 0) + sp->op;
            if (!st && (!o || op >= o->n)) st = RF_EINTERNAL;
            if (!st) memcpy((uint8_t *)o->cols[sp->col] + op * 4, &code, 4);
        }
    }
    return st;
}

rf_status rf_txn_ops_take(rf_txn_pred *p, rf_txn_ops **from)
{
    rf_txn_ops *f = *from;
    if (!f) return RF_OK;
    if (!p->ops || !p->ops->n) { /* the whole of it, not copied (empty: still the pred's ops, as a parse leaves them) */
        rf_txn_ops_free(p->ops);
        p->ops = f;
        *from = NULL;
        return RF_OK;
    }
    rf_txn_ops *o = p->ops;
    if (!f->n) return RF_OK;
    if (o->ncols != f->ncols) return RF_EINTERNAL;
    rf_status st = ops_reserve(p, f->n);
    if (st) return st;
    for (int32_t c = 0; c < o->ncols; c++) {
        size_t w = (size_t)rf_rt_type_width(p->fe->types[c]);
        memcpy((uint8_t *)o->cols[c] + (size_t)o->n * w, f->cols[c], (size_t)f->n * w);
    }
    memcpy(o->insert + o->n, f->insert, (size_t)f->n);
    memcpy(o->file + o->n, f->file, (size_t)f->n * sizeof *o->file);
    memcpy(o->at + o->n, f->at, (size_t)f->n * sizeof *o->at);
    o->n += f->n;
    return RF_OK;
}

rf_status rf_txn_parse_pending(rf_txn *t, rf_cpu_pool *pool, int32_t file, const char *text, int64_t len, int64_t *bad,
                               rf_txn_strings **strings)
{
    *bad = -1;
    *strings = NULL;
    rf_status st = RF_OK;
    for (int32_t i = 0; i < t->npreds && !st; i++)
        if (t->preds[i].base && !t->preds[i].ops) st = ops_new(t->preds[i].fe, &t->preds[i].ops);
    if (st) return st;
    int threads = rf_cpu_pool_threads(pool);
    int64_t nchunks = len / CHUNK_MIN;
    if (nchunks > (int64_t)threads * 8) nchunks = (int64_t)threads * 8;
    if (nchunks < 1) nchunks = 1;
    chunk *chunks = rf_calloc((size_t)nchunks, sizeof *chunks);
    rf_txn_strings *ss = rf_calloc(1, sizeof *ss);
    if (ss) ss->pieces = rf_calloc((size_t)nchunks, sizeof *ss->pieces);
    if (!chunks || !ss || !ss->pieces) {
        free(chunks);
        rf_txn_strings_free(ss);
        return RF_ENOMEM;
    }
    /* cut at line starts: each chunk ends after the newline at or after its
    ** share (a UTF-8 byte order mark at the start skipped, as a program's
    ** and an input file's are) */
    const char *p = text + rf_txn_bom_len(text, len), *end = text + len;
    int32_t nc = 0;
    for (int64_t i = 0; i < nchunks && p < end; i++) {
        const char *e = i + 1 == nchunks ? end : text + len * (i + 1) / nchunks;
        if (e < p) e = p;
        if (e < end) {
            const char *nl = memchr(e, '\n', (size_t)(end - e));
            e = nl ? nl + 1 : end;
        }
        chunk *c = &chunks[nc++];
        c->begin = p;
        c->end = e;
        c->bad = -1;
        rf_buf_init(&c->strs);
        if (!(c->ops = rf_calloc((size_t)t->npreds + 1, sizeof *c->ops))) st = RF_ENOMEM;
        p = e;
    }
    parse_job pj = {t, text, chunks, nc};
    if (!st) rf_cpu_parallel_for(pool, nc, 1, parse_chunk, &pj);
    /* the chunks up to the first with a bad line (its lines before that one count) */
    int32_t upto = nc;
    for (int32_t i = 0; i < nc && !st; i++) {
        if (chunks[i].st) st = chunks[i].st;
        if (chunks[i].bad >= 0) {
            *bad = chunks[i].bad;
            upto = i + 1;
            break;
        }
    }
    int64_t **base = rf_calloc((size_t)nc + 1, sizeof *base);
    if (!base) st = st ? st : RF_ENOMEM;
    for (int32_t i = 0; i < upto && !st; i++)
        if (!(base[i] = rf_calloc((size_t)t->npreds + 1, sizeof **base))) st = RF_ENOMEM;
    for (int32_t pi = 0; pi < t->npreds && !st; pi++) {
        rf_txn_pred *pr = &t->preds[pi];
        if (!pr->base) continue;
        int64_t add = 0;
        for (int32_t i = 0; i < upto; i++) {
            base[i][pi] = pr->ops->n + add;
            add += chunks[i].ops[pi].n;
        }
        if (add && !(st = ops_reserve(pr, add))) pr->ops->n += add;
    }
    move_job mj = {t, chunks, base, file};
    if (!st) rf_cpu_parallel_for(pool, upto, 1, move_chunk, &mj);
    /* the strings, in file order, their ops' indexes made the ops' own (the
    ** bad line's left out): interned by rf_txn_strings_intern */
    for (int32_t i = 0; i < upto && !st; i++) {
        chunk *c = &chunks[i];
        strings_piece *pc = &ss->pieces[ss->n++];
        int64_t kept = 0;
        for (int64_t k = 0; k < c->npatches; k++) {
            str_patch sp = c->patches[k];
            if (sp.op >= c->ops[sp.pred].n) continue; /* the bad line's own */
            sp.op += base[i][sp.pred];
            c->patches[kept++] = sp;
        }
        pc->strs = c->strs;
        pc->patches = c->patches;
        pc->n = kept;
        rf_buf_init(&c->strs);
        c->patches = NULL;
    }
    for (int32_t i = 0; i < nc; i++) {
        for (int32_t pi = 0; chunks[i].ops && pi < t->npreds; pi++) {
            free(chunks[i].ops[pi].rec);
            free(chunks[i].ops[pi].insert);
            free(chunks[i].ops[pi].at);
        }
        free(chunks[i].ops);
        free(chunks[i].patches);
        rf_buf_free(&chunks[i].strs);
        if (base) free(base[i]);
    }
    free(base);
    free(chunks);
    if (st) {
        rf_txn_strings_free(ss);
        return st;
    }
    *strings = ss;
    return *bad >= 0 ? RF_EUSER : RF_OK;
}

rf_status rf_txn_parse(rf_txn *t, rf_cpu_pool *pool, int32_t file, const char *path, const char *text, int64_t len,
                       int64_t *bad, rf_diags *d)
{
    (void)path;
    (void)d;
    rf_txn_strings *ss = NULL;
    rf_status st = rf_txn_parse_pending(t, pool, file, text, len, bad, &ss);
    /* strings in file order: the codes a line-by-line reading gives */
    if (!st || st == RF_EUSER) {
        rf_status ist = rf_txn_strings_intern(t, ss, NULL);
        if (ist) st = ist;
    }
    rf_txn_strings_free(ss);
    return st;
}

int64_t rf_txn_bom_len(const char *text, int64_t len)
{
    return len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3) ? 3 : 0;
}

void rf_txn_text_pos(const char *text, int64_t at, int64_t *line, int32_t *col)
{
    int64_t ln = 1, l0 = rf_txn_bom_len(text, at); /* (columns of line 1 count after a byte order mark) */
    for (int64_t i = l0; i < at; i++)
        if (text[i] == '\n') ln++, l0 = i + 1;
    *line = ln;
    *col = (int32_t)(at - l0 + 1);
}

rf_status rf_txn_parse_report(rf_txn *t, const char *path, const char *text, int64_t len, int64_t bad, rf_diags *d)
{
    chunk c;
    memset(&c, 0, sizeof c);
    rf_buf_init(&c.strs);
    rf_status st = RF_OK;
    if (!(c.ops = rf_calloc((size_t)t->npreds + 1, sizeof *c.ops))) st = RF_ENOMEM;
    reader r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.d = d;
    r.c = &c;
    r.t = t;
    r.last = -1;
    int32_t col;
    rf_txn_text_pos(text, bad, &r.line, &col);
    const char *nl = memchr(text + bad, '\n', (size_t)(len - bad));
    r.line0 = r.p = text + bad;
    r.end = nl ? nl : text + len;
    if (!st) st = line(&r, text);
    if (!st) { /* the chunk's parse said this line was bad */
        rf_internal_error(d, rf_mkloc(path, (int32_t)r.line, 1), "a line read twice gave two answers");
        st = RF_EINTERNAL;
    }
    for (int32_t pi = 0; c.ops && pi < t->npreds; pi++) {
        free(c.ops[pi].rec);
        free(c.ops[pi].insert);
        free(c.ops[pi].at);
    }
    free(c.ops);
    free(c.patches);
    rf_buf_free(&c.strs);
    return st;
}
