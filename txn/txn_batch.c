/*
** txn/txn_batch.c: the transaction files of `redfox exec` (or texts of
** rf_exec given in memory) applied to the base predicates, as one batch in
** batch order.
**
** Owns: the order of a batch's application and its errors. Each file is
** read and parsed into columns in parallel (txn_parse.c); after the last,
** each base predicate's updates are resolved in bulk against its rows
** (txn_kset.c: GPUTx's rule, conflicting updates to one key take effect in
** batch order, the rest commute), so a `-f[k] = v` followed by
** `+f[k] = w` replaces the value, and `+f[k] = w` while another row holds
** k is a key violation that aborts the batch. The error is the one a
** line-by-line application meets first: the earliest bad line or key
** violation in batch order. Also a transaction file read ahead, on the
** caller's thread while the transaction before it runs (`exec --each`),
** and whether the file is still the one read; a file parsed ahead
** (txn_parse_ahead.c) is taken in its place in the order, its errors
** reported here as a file's parsed now.
*/
#include "rf_cpu.h"
#include "rf_file.h"
#include "rf_sys.h"
#include "rf_txn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The batches read so far: their texts stay for the messages. */
typedef struct batches {
    rf_cpu_pool *pool;
    int32_t n, cap;
    char **paths;
    char **texts;  /* owned, except where borrowed */
    int64_t *lens;
    uint8_t *borrowed;
} batches;

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
    case RF_TYPE_DEC128: {
        rf_dec128 w;
        memcpy(&w, v, 16);
        rf_val_fmt_dec128(b, w);
        break;
    }
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

/* "(names) = (values)" of key columns cols[0..n) of update op of p. */
static void fmt_key(const rf_txn *t, const rf_txn_pred *p, const int32_t *cols, int32_t n, int64_t op, rf_buf *b)
{
    const rf_fe_pred *f = p->fe;
    rf_buf_putc(b, '(');
    for (int32_t i = 0; i < n; i++)
        rf_buf_printf(b, "%s%s", i ? ", " : "", f->cols && f->cols[cols[i]] ? f->cols[cols[i]] : "_");
    rf_buf_puts(b, ") = (");
    for (int32_t i = 0; i < n; i++) {
        if (i) rf_buf_puts(b, ", ");
        int32_t w = rf_rt_type_width(f->types[cols[i]]);
        fmt_value(t, f->types[cols[i]], (const uint8_t *)p->ops->cols[cols[i]] + op * w, b);
    }
    rf_buf_putc(b, ')');
}


/* ---- the batch ------------------------------------------------------------ */

/* A regular file's first bytes read by the pool's threads, a part each
** (pread; the buffer's pages touched in parallel too): one thread's fread
** of a 34 MB batch took 26 ms of a transaction on the H100 host. */
typedef struct pread_job {
    int fd;
    char *buf;
    int failed; /* a read error or a short read (the file shrank): read again in order */
} pread_job;

static void pread_part(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    pread_job *j = ctx;
    while (begin < end && !j->failed) {
        ssize_t got = pread(j->fd, j->buf + begin, (size_t)(end - begin), (off_t)begin);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            j->failed = 1;
            return;
        }
        begin += got;
    }
}

/* Until the stream fd (opened O_NONBLOCK) has bytes or its end to read:
** 1; 0 once a SIGINT, SIGTERM or SIGHUP is held (rf_file.h). A FIFO opened
** to block waits in the open for its writer, and a blocking read restarts
** after the handler (SA_RESTART): a ^C held while the commit before ended
** on its thread (`exec --each`) then waited for a writer that might never
** come. */
static int stream_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (!rf_file_signal_held()) {
        int r = poll(&p, 1, 50);
        if (r > 0 || (r < 0 && errno != EINTR)) return 1;
    }
    return 0;
}

/* The whole file into *text (NUL-terminated), sized once where the size is
** known; a large regular file read in parallel parts, then on in order (to
** its end, should it have grown). A stream (FIFO, pipe, terminal) is
** opened without waiting for its writer and read as its bytes come
** (stream_readable). */
static rf_status read_file(const char *path, rf_cpu_pool *pool, char **text, int64_t *len, rf_diags *d)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        int e = errno;
        if (fd >= 0) close(fd);
        rf_error(d, rf_mkloc(path, 0, 0), "cannot read the transaction file: %s", strerror(e));
        return RF_EUSER;
    }
    struct stat sb;
    int have = fstat(fileno(f), &sb) == 0, regular = have && S_ISREG(sb.st_mode);
    if (have && S_ISDIR(sb.st_mode)) {
        fclose(f);
        rf_error(d, rf_mkloc(path, 0, 0), "cannot read the transaction file: it is a folder");
        return RF_EUSER;
    }
    int64_t cap = regular ? (int64_t)sb.st_size + 1 : 65536, n = 0;
    int rerr = 0, stopped = 0; /* a stream's read error; a signal held while it waited */
    char *buf = rf_malloc((size_t)cap + 1);
    rf_status st = buf ? RF_OK : RF_ENOMEM;
    enum { PART = 1 << 20 };
    if (!st && regular && sb.st_size >= 2 * PART && rf_cpu_pool_threads(pool) > 1) {
        pread_job j = {fileno(f), buf, 0};
        rf_cpu_parallel_for(pool, (int64_t)sb.st_size, PART, pread_part, &j);
        if (!j.failed && fseeko(f, (off_t)sb.st_size, SEEK_SET) == 0) n = (int64_t)sb.st_size;
    }
    while (!st) {
        if (n == cap) {
            char *nb = rf_realloc(buf, (size_t)cap * 2 + 1);
            if (!nb) {
                st = RF_ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        /* a NUL byte is never in a transaction file (text; nor in its
        ** strings): a stream that holds one (/dev/zero, a binary pipe) is
        ** read no further, its error named by the parse, rather than read
        ** until memory runs out or its writer ends; so a stream is read as
        ** its bytes come (read(2)), not a buffer's worth at a time */
        size_t got;
        if (regular) {
            got = fread(buf + n, 1, (size_t)(cap - n), f);
        } else {
            ssize_t r = -1;
            while (!(stopped = !stream_readable(fileno(f))) &&
                   (r = read(fileno(f), buf + n, (size_t)(cap - n))) < 0 &&
                   (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {}
            if (r < 0 && !stopped) rerr = errno;
            got = r > 0 ? (size_t)r : 0;
        }
        if (!got) break;
        n += (int64_t)got;
        if (!regular && memchr(buf + n - (int64_t)got, 0, got)) break;
    }
    int bad = ferror(f) || rerr, e = rerr ? rerr : errno;
    fclose(f);
    if (!st && stopped) {
        rf_error(d, rf_mkloc(path, 0, 0), "stopped by %s while waiting for the transaction file's bytes",
                 rf_file_signal_name(rf_file_signal_held()));
        st = RF_EUSER;
    } else if (!st && bad) {
        rf_error(d, rf_mkloc(path, 0, 0), "cannot read the transaction file: %s", strerror(e ? e : EIO));
        st = RF_EUSER;
    }
    if (st) {
        free(buf);
        return st;
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return RF_OK;
}

rf_status rf_txn_batch_copy_text(const rf_txn *t, int32_t file, char **text, int64_t *len)
{
    const batches *b = t->batches;
    *text = NULL;
    *len = 0;
    if (!b || file < 0 || file >= b->n || !b->texts[file]) return RF_EINTERNAL;
    char *c = rf_malloc((size_t)b->lens[file] + 1);
    if (!c) return RF_ENOMEM;
    memcpy(c, b->texts[file], (size_t)b->lens[file]);
    c[b->lens[file]] = 0;
    *text = c;
    *len = b->lens[file];
    return RF_OK;
}

void rf_txn_batch_free(rf_txn *t)
{
    batches *b = t->batches;
    for (int32_t i = 0; i < t->npreds; i++) {
        rf_txn_ops_free(t->preds[i].ops);
        t->preds[i].ops = NULL;
    }
    if (!b) return;
    for (int32_t i = 0; i < b->n; i++) {
        free(b->paths[i]);
        if (!b->borrowed[i]) free(b->texts[i]);
    }
    free(b->paths);
    free(b->texts);
    free(b->lens);
    free(b->borrowed);
    rf_cpu_pool_free(b->pool);
    free(b);
    t->batches = NULL;
}

/* Resolves every base predicate's updates; on a key violation, the earliest
** (batch order) is reported and RF_EUSER returned. With check_only, the new
** states are dropped (a bad line follows: only a violation before it counts). */
static rf_status resolve_all(rf_txn *t, int check_only, rf_diags *d)
{
    batches *b = t->batches;
    rf_status st = RF_OK;
    int32_t vp = -1;
    rf_txn_violation best = {-1, 0, 0};
    for (int32_t i = 0; i < t->npreds && !st; i++) {
        rf_txn_pred *p = &t->preds[i];
        if (!p->base || !p->ops || !p->ops->n) continue;
        rf_txn_violation v;
        st = rf_txn_kset_resolve(p, b->pool, &v);
        if (st == RF_EUSER && v.op >= 0) {
            st = RF_OK;
            const rf_txn_ops *o = p->ops;
            if (vp < 0 || o->file[v.op] < t->preds[vp].ops->file[best.op] ||
                (o->file[v.op] == t->preds[vp].ops->file[best.op] && o->at[v.op] < t->preds[vp].ops->at[best.op])) {
                vp = i;
                best = v;
            }
        }
        if (!st && check_only) {
            rf_rt_rel_free(&p->next);
            rf_rt_rel_free(&p->ins);
            rf_rt_rel_free(&p->del);
            p->replaced = 0;
            p->has_next = 0;
            p->tail = 0;
        }
    }
    if (st || vp < 0) return st;
    /* the message of the first violation */
    rf_txn_pred *p = &t->preds[vp];
    const rf_fe_pred *f = p->fe;
    int32_t cols[64], n = 0;
    if (best.key == 0 && f->ninput_key > 0 && f->ninput_key <= 64) {
        n = f->ninput_key;
        memcpy(cols, f->input_key, (size_t)n * sizeof *cols);
    } else {
        n = f->arity - 1;
        for (int32_t c = 0; c < n; c++) cols[c] = c;
    }
    int32_t file = p->ops->file[best.op];
    int64_t line;
    int32_t col;
    rf_txn_text_pos(b->texts[file], p->ops->at[best.op], &line, &col);
    rf_buf kb;
    rf_buf_init(&kb);
    fmt_key(t, p, cols, n, best.op, &kb);
    rf_error(d, rf_mkloc(b->paths[file], (int32_t)(line > INT32_MAX ? 0 : line), col),
             "key violation: `%s` already holds %s", f->name, kb.oom ? "this key" : rf_buf_cstr(&kb));
    rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(b->paths[file], 0, 0),
                "%s holds this key (%s of `%s`): delete that row earlier in the batch to replace it",
                best.holder_old ? "another row, already in the database," : "another row, inserted earlier in this batch,",
                best.key == 0 && f->ninput_key > 0 && f->ninput_key <= 64 ? "lang:input:key" : "functional dependency", f->name);
    rf_buf_free(&kb);
    return RF_EUSER;
}

rf_status rf_txn_batch_apply(rf_txn *t, const char *path, const char *given, int64_t given_len, int borrowed,
                             rf_txn_parsed *parsed, rf_diags *d)
{
    rf_status st = RF_OK;
    batches *b = t->batches;
    if (!b) {
        if (!(b = t->batches = rf_calloc(1, sizeof *b))) return RF_ENOMEM;
        if ((st = rf_cpu_pool_new(t->threads > 0 ? t->threads : 1, &b->pool))) return st;
    }
    if (b->n == b->cap) {
        int32_t nc = b->cap ? b->cap * 2 : 4;
        char **np = rf_realloc(b->paths, (size_t)nc * sizeof *np);
        if (!np) return RF_ENOMEM;
        b->paths = np;
        char **nt = rf_realloc(b->texts, (size_t)nc * sizeof *nt);
        if (!nt) return RF_ENOMEM;
        b->texts = nt;
        int64_t *nl = rf_realloc(b->lens, (size_t)nc * sizeof *nl);
        if (!nl) return RF_ENOMEM;
        b->lens = nl;
        uint8_t *nb = rf_realloc(b->borrowed, (size_t)nc);
        if (!nb) return RF_ENOMEM;
        b->borrowed = nb;
        b->cap = nc;
    }
    int32_t file = b->n;
    if (!given || !borrowed || !rf_txn_parsed_usable(parsed, t, file)) parsed = NULL;
    b->texts[file] = NULL;
    b->lens[file] = 0;
    b->borrowed[file] = 0;
    if (!(b->paths[file] = rf_strdup(path))) return RF_ENOMEM;
    b->n++;
    double t0 = rf_now();
    if (given && borrowed) { /* NUL-terminated, and stays while the transaction runs */
        b->texts[file] = (char *)given;
        b->lens[file] = given_len;
        b->borrowed[file] = 1;
    } else if (given) { /* a text in memory: copied, NUL-terminated as a file's */
        if (!(b->texts[file] = rf_malloc((size_t)given_len + 1))) return RF_ENOMEM;
        memcpy(b->texts[file], given, (size_t)given_len);
        b->texts[file][given_len] = 0;
        b->lens[file] = given_len;
    } else {
        st = read_file(path, b->pool, &b->texts[file], &b->lens[file], d);
    }
    double t1 = rf_now();
    t->t_read += t1 - t0;
    if (st) return st;
    const char *text = b->texts[file];
    int64_t len = b->lens[file], bad = -1;
    /* parsed ahead: its updates taken, its strings interned now */
    if (parsed) {
        st = rf_txn_parsed_take(t, parsed, &bad);
        t->parse_ahead_files++;
        t->parse_ahead_seconds += rf_txn_parsed_seconds(parsed);
        if (!st && bad >= 0) st = RF_EUSER;
    } else {
        st = rf_txn_parse(t, b->pool, file, path, text, len, &bad, d);
    }
    t->t_parse += rf_now() - t1;
    if (st != RF_EUSER || bad < 0) return st;
    /* a bad line: a key violation before it is the error, else the line */
    st = resolve_all(t, 1, d);
    if (st) return st;
    return rf_txn_parse_report(t, b->paths[file], text, len, bad, d);
}

/* ---- a file read ahead ------------------------------------------------------ */

static int64_t stat_ns(struct timespec ts) { return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec; }

static int same_file(const struct stat *a, const rf_txn_read_ahead *ra)
{
    return (uint64_t)a->st_dev == ra->dev && (uint64_t)a->st_ino == ra->ino && (int64_t)a->st_size == ra->size &&
           stat_ns(a->st_mtim) == ra->mtime_ns && stat_ns(a->st_ctim) == ra->ctime_ns;
}

void rf_txn_batch_read_ahead(const char *path, rf_txn_read_ahead *ra)
{
    memset(ra, 0, sizeof *ra);
    double t0 = rf_now();
    /* a FIFO (or a terminal, a socket) is never opened here: its
    ** transaction reads it in order, and a writer waiting on it is not
    ** met by a reader that is not its transaction */
    struct stat sb, after;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 0) {
        close(fd);
        return;
    }
    ra->dev = (uint64_t)sb.st_dev;
    ra->ino = (uint64_t)sb.st_ino;
    ra->size = (int64_t)sb.st_size;
    ra->mtime_ns = stat_ns(sb.st_mtim);
    ra->ctime_ns = stat_ns(sb.st_ctim);
    char *buf = rf_malloc((size_t)ra->size + 1);
    int64_t n = 0;
    while (buf && n < ra->size) {
        ssize_t got = read(fd, buf + n, (size_t)(ra->size - n));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        n += got;
    }
    /* the bytes read are the file's only where it did not change meanwhile */
    int ok = buf && n == ra->size && fstat(fd, &after) == 0 && same_file(&after, ra);
    close(fd);
    if (!ok) {
        free(buf);
        return;
    }
    buf[n] = 0;
    ra->text = buf;
    ra->len = n;
    ra->seconds = rf_now() - t0;
}

int rf_txn_batch_read_ahead_current(const char *path, const rf_txn_read_ahead *ra)
{
    struct stat sb;
    return ra->text && stat(path, &sb) == 0 && S_ISREG(sb.st_mode) && same_file(&sb, ra);
}

void rf_txn_read_ahead_free(rf_txn_read_ahead *ra)
{
    free(ra->text);
    memset(ra, 0, sizeof *ra);
}

rf_status rf_txn_batch_finish(rf_txn *t, rf_diags *d)
{
    double t0 = rf_now();
    rf_status st = t->batches ? resolve_all(t, 0, d) : RF_OK;
    t->t_resolve += rf_now() - t0;
    rf_txn_batch_free(t);
    return st;
}
