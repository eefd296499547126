/*
** tools/db_import.c: text rows into a redfox database: the work behind
** `redfox import` and `redfox tpch gen --format db`.
**
** Owns: reading input files a block of whole lines at a time (64 MiB
** unless rf_import_text_block says otherwise, so
** memory stays bounded by the blocks in hand, the columns' write buffers
** and the string dictionaries, not by the file; a regular file is mapped
** and each block parsed in place, then dropped from the mapping, a pipe is
** read into a buffer), parsing each block with the text loader
** (runtime/io: the same parsers, the same file:line:col errors, parallel
** within the block), choosing the string columns' encodings, handing each
** parsed block and each ended table to the work that runs beside the
** parsing (tools/db_import_jobs.c), the lines a table's rows start on where
** records span lines (for its key errors), the progress line, and the
** stop at the next block, table or commit when its caller holds a SIGINT,
** SIGTERM or SIGHUP (rf_file_hold_signals): the caller then frees the
** importer, which removes the temporary folder, and ends by the signal.
*/
#include "db_import_internal.h"

#include "rf_cpu.h"
#include "rf_db.h"
#include "rf_file.h"
#include "rf_load.h"
#include "rf_rt_input.h"
#include "rf_sys.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define QUOTE_PIECE (4LL << 20) /* bytes searched for '"' per thread at least */


static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

rf_status rf_import_new(const char *out, int threads, int progress, rf_importer **imp, rf_diags *d)
{
    *imp = NULL;
    rf_importer *m = rf_calloc(1, sizeof *m);
    if (!m) return RF_ENOMEM;
    m->threads = threads > 0 ? threads : online_cpus();
    m->block = RF_IMPORT_TEXT_BLOCK;
    pthread_mutex_init(&m->turn_mu, NULL);
    pthread_cond_init(&m->turn_cv, NULL);
    m->progress = progress;
    m->t0 = rf_now();
    m->cpu0 = rf_import_process_cpu();
    rf_status st = rf_db_writer_new(out, RF_VERSION_STRING, &m->w, d);
    if (!st && !(m->out = rf_strdup(out))) {
        rf_db_writer_free(m->w);
        st = RF_ENOMEM;
    }
    if (st) {
        pthread_mutex_destroy(&m->turn_mu);
        pthread_cond_destroy(&m->turn_cv);
        free(m);
        return st;
    }
    *imp = m;
    return RF_OK;
}

void rf_import_block_rows(rf_importer *imp, uint32_t rows) { rf_db_writer_block_rows(imp->w, rows); }

void rf_import_strings(rf_importer *imp, int mode) { imp->strings = mode; }

void rf_import_narrow(rf_importer *imp, int on) { rf_db_writer_narrow(imp->w, on); }

void rf_import_text_block(rf_importer *imp, int64_t bytes) { imp->block = bytes > 0 ? bytes : RF_IMPORT_TEXT_BLOCK; }

/* Chooses, on the table's first piece of rows, which string columns are
** stored plain (the same first rows whatever the pieces' sizes, as long as
** the first piece holds RF_DB_PLAIN_SAMPLE rows or the whole table:
** `tpch gen --format db` and `import` of its text agree). */
static rf_status choose_encodings(rf_importer *imp, itable *it, const rf_rt_texttable *tt, rf_diags *d)
{
    it->encoded = 1;
    for (int32_t c = 0; c < it->t.ncols; c++) {
        if (it->t.types[c] != RF_TYPE_STRING || imp->strings == RF_IMPORT_STRINGS_DICT) continue;
        const rf_rt_textcol *col = &tt->cols[c];
        if (imp->strings == RF_IMPORT_STRINGS_PLAIN ||
            rf_db_strings_mostly_distinct(tt->nrows, col->str_off, col->str_bytes)) {
            rf_status st = rf_db_writer_plain(imp->w, it->tid, c, d);
            if (st) return st;
        }
    }
    return RF_OK;
}

/* Do a and b declare the same key (the same columns, in any order) and the
** same functional dependency? (Either has nothing more to check.) */
static int same_checks(const rf_import_table *a, const rf_import_table *b)
{
    if (a->nfd != b->nfd || a->nkey != b->nkey) return 0;
    for (int32_t k = 0; k < a->nkey; k++) {
        int found = 0;
        for (int32_t m = 0; m < b->nkey && !found; m++) found = a->key[k] == b->key[m];
        if (!found) return 0;
    }
    return 1;
}

rf_status rf_import_add(rf_importer *imp, const rf_import_table *t, int32_t *tid, rf_diags *d)
{
    /* the writer's tables grow: nothing may be writing them */
    rf_status sst = rf_import_settle(imp, d);
    if (sst) return sst;
    for (int32_t i = 0; i < imp->n; i++) {
        const rf_import_table *o = &imp->tabs[i].t;
        if (strcmp(o->file, t->file)) continue;
        if (o->ncols != t->ncols || memcmp(o->types, t->types, (size_t)t->ncols * sizeof *t->types) ||
            o->delimiter != t->delimiter || o->header != t->header) {
            rf_error(d, rf_mkloc(t->file, 0, 0),
                     "`%s` and `%s` both read this file, with different columns or format: a database holds one "
                     "table per file, so import them from two files",
                     o->pred, t->pred);
            return RF_EUSER;
        }
        /* another key or dependency over the same rows: checked at the end */
        itable *it = &imp->tabs[i];
        int same = t->nkey == 0 && t->nfd < 0 ? 1 : same_checks(o, t);
        for (int32_t k = 0; k < it->nalso && !same; k++) same = same_checks(&it->also[k], t);
        if (!same) {
            rf_import_table *na = rf_realloc(it->also, ((size_t)it->nalso + 1) * sizeof *na);
            if (!na) return RF_ENOMEM;
            it->also = na;
            it->also[it->nalso++] = *t;
        }
        *tid = i;
        return RF_OK;
    }
    if (imp->n == imp->cap) {
        int32_t nc = imp->cap ? imp->cap * 2 : 16;
        itable *nt = rf_realloc(imp->tabs, (size_t)nc * sizeof *nt);
        if (!nt) return RF_ENOMEM;
        imp->tabs = nt;
        imp->cap = nc;
    }
    itable *it = &imp->tabs[imp->n];
    memset(it, 0, sizeof *it);
    it->t = *t;
    it->done = rf_calloc((size_t)t->ncols + 1, sizeof *it->done);
    if (!it->done) return RF_ENOMEM;
    if (t->nfd > 0) {
        if (!(it->fd_cols = rf_malloc((size_t)t->nfd * sizeof *it->fd_cols))) {
            free(it->done);
            return RF_ENOMEM;
        }
        for (int32_t c = 0; c < t->nfd; c++) it->fd_cols[c] = c;
    }
    rf_status st = rf_db_writer_table(imp->w, t->file, t->ncols, t->types, t->colnames, t->nkey, t->key, &it->tid, d);
    if (st) {
        free(it->fd_cols);
        free(it->done);
        return st;
    }
    rf_import_order_init(&it->key_order, t->types, t->nkey, t->key);
    rf_import_order_init(&it->fd_order, t->types, it->fd_cols ? t->nfd : 0, it->fd_cols);
    *tid = imp->n++;
    return RF_OK;
}

/* The database at out as it is now, into imp->kept (once): the manifest's
** bytes read first and the database taken from them, so that the commit's
** comparison covers every file the carried tables link. */
static rf_status open_kept(rf_importer *imp, rf_diags *d)
{
    if (imp->kept_manifest) return RF_OK;
    char *path = rf_sprintf("%s/%s", imp->out, RF_DB_MANIFEST);
    if (!path) return RF_ENOMEM;
    struct stat sb;
    const char *why = "not a regular file";
    rf_status st = stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) ? RF_EIO
                                                               : rf_read_file(path, &imp->kept_manifest, &imp->kept_len, &why);
    if (st) rf_error(d, rf_mkloc(path, 0, 0), "cannot read the database manifest: %s", why);
    free(path);
    if (!st) st = rf_db_open_bytes(imp->out, (const uint8_t *)imp->kept_manifest, imp->kept_len, &imp->kept, d);
    if (st) {
        free(imp->kept_manifest);
        imp->kept_manifest = NULL;
    }
    return st;
}

rf_status rf_import_carry(rf_importer *imp, const char *table, rf_diags *d)
{
    if (!rf_db_is_database(imp->out)) return RF_OK;
    /* the writer's tables grow: nothing may be writing them */
    rf_status st = rf_import_settle(imp, d);
    if (!st) st = open_kept(imp, d);
    const rf_db_table *tb = st ? NULL : rf_db_find_table(imp->kept, table);
    if (!tb) return st;
    int32_t tid = -1;
    /* a 1.0 database's blocks have no CRC-32Cs, which the new manifest
    ** would claim: such a table is not carried (rf_db_writer_table_from
    ** links the files and copies the block records as they are) */
    if (imp->kept->block_crcs) st = rf_db_writer_table_from(imp->w, imp->kept, tb, 0, &tid, d);
    if (!st && tid < 0) {
        rf_error(d, rf_mkloc(imp->out, 0, 0),
                 "cannot keep the table '%s' in the new database (%s): generate every table, without --tables", table,
                 imp->kept->block_crcs ? "its files cannot be linked" : "it is of database format 1.0");
        st = RF_EUSER;
    }
    return st;
}

/* Under the folder's lock: whether the database at out is still the one
** rf_import_carry read (the same manifest, byte for byte). */
static rf_status kept_unchanged(rf_importer *imp, rf_diags *d)
{
    if (!imp->kept_manifest) return RF_OK;
    char *path = rf_sprintf("%s/%s", imp->out, RF_DB_MANIFEST), *now = NULL;
    int64_t len = 0;
    const char *why = "";
    int same = path && rf_read_file(path, &now, &len, &why) == RF_OK && len == imp->kept_len &&
               memcmp(now, imp->kept_manifest, (size_t)len) == 0;
    free(path);
    free(now);
    if (same) return RF_OK;
    rf_error(d, rf_mkloc(imp->out, 0, 0),
             "another process changed the database while its tables were being kept: nothing was written; run again");
    return RF_EUSER;
}

/* A SIGINT, SIGTERM or SIGHUP that came while the caller holds the signals
** (from before rf_import_new to after rf_import_free: the temporary folder
** is removed by rf_import_free, which a signal handler cannot do): the
** import stops here, before its commit, as a failure that every later call
** returns. Polled where a block, a table or the commit starts, so that an
** import of gigabytes stops within a block's work. */
static rf_status stop_if_signalled(rf_importer *imp, rf_diags *d)
{
    int sig = rf_file_signal_held();
    if (!sig || imp->failed) return imp->failed;
    if (imp->kept_manifest || rf_db_is_database(imp->out))
        rf_error(d, rf_mkloc(imp->out, 0, 0),
                 "stopped by %s before the new database was complete: nothing written, the database here is as it was",
                 rf_file_signal_name(sig));
    else
        rf_error(d, rf_mkloc(imp->out, 0, 0), "stopped by %s before the database was complete: nothing written",
                 rf_file_signal_name(sig));
    imp->failed = RF_EUSER;
    return RF_EUSER;
}

/* A search for '"' in a block of text, a piece per thread. */
typedef struct quote_scan {
    const char *buf;
    int64_t len;
    int n;
    int found; /* (atomic) */
} quote_scan;

static void scan_piece(void *arg, int t)
{
    quote_scan *q = arg;
    int64_t b = q->len / q->n * t, e = t == q->n - 1 ? q->len : q->len / q->n * (t + 1);
    if (e > b && memchr(q->buf + b, '"', (size_t)(e - b))) __atomic_store_n(&q->found, 1, __ATOMIC_RELAXED);
}

/* Whether buf[0, len) holds a '"'. The block is read whole (the file's
** pages faulted in), so a large one is searched by several threads: one
** thread alone would hold up the next block's parse. */
static int has_quote(const char *buf, int64_t len, int threads)
{
    int n = (int)(len / QUOTE_PIECE);
    if (n > threads) n = threads;
    if (n <= 1) return memchr(buf, '"', (size_t)len) != NULL;
    quote_scan q = {buf, len, n, 0};
    rf_rt_parallel(n, scan_piece, &q);
    return q.found;
}

/* Where the last whole record of buf[0, len) ends (0: none yet). buf starts
** at a record's start. A record ends at a line end outside quotes (RFC
** 4180: a field that starts with '"' runs to the '"' not doubled, and may
** hold line ends), so a quoted field is never cut in two; the rules are the
** loader's (runtime/io/rf_load.c). Without any '"' it is the last line end. */
static int64_t record_end(const char *buf, int64_t len, char delim, int threads)
{
    if (!delim) delim = '|';
    if (!has_quote(buf, len, threads)) {
        const char *nl = memrchr(buf, '\n', (size_t)len);
        return nl ? nl - buf + 1 : 0;
    }
    int64_t end = 0;
    int at_start = 1, quoted = 0;
    for (int64_t i = 0; i < len; i++) {
        char c = buf[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < len && buf[i + 1] == '"') i++;
                else quoted = 0;
            }
        } else if (c == '"' && at_start) {
            quoted = 1;
            at_start = 0;
        } else if (c == '\n') {
            end = i + 1;
            at_start = 1;
        } else {
            at_start = c == delim;
        }
    }
    return end;
}

/* record_end of a window of the file; at the file's start a UTF-8 byte
** order mark is first passed over, as the loader skips it
** (runtime/io/rf_load.c): behind the mark, a first field opening with '"'
** is quoted, and its line ends are no record's end. */
static int64_t window_end(const char *buf, int64_t len, int file_start, char delim, int threads)
{
    int64_t bom = file_start && len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    int64_t end = record_end(buf + bom, len - bom, delim, threads);
    return end ? end + bom : 0;
}

/* The lines on which tt's rows start (a block of it, its text from line
** first_line, a header line skipped first): a pair for each row that does
** not start on the line after the row before's, as the text path keeps a
** line per row (runtime/io/rf_load.h) but only where they differ. */
static rf_status note_lines(itable *it, const rf_rt_texttable *tt, int64_t first_line, int header)
{
    /* a file without quotes: one line a row, from the first */
    int64_t n = tt->lines ? tt->nrows : tt->nrows > 0;
    for (int64_t r = 0; r < n; r++) {
        int64_t line = tt->lines ? tt->lines[r] : first_line + (header ? 1 : 0);
        int64_t row = it->rows + r;
        int64_t want = row == 0 ? 1 + (it->t.header ? 1 : 0) : it->last_line + 1;
        if (line != want) {
            if (it->njumps == it->capjumps) {
                int64_t nc = it->capjumps ? it->capjumps * 2 : 16;
                int64_t(*nj)[2] = rf_realloc(it->jumps, (size_t)nc * sizeof *nj);
                if (!nj) return RF_ENOMEM;
                it->jumps = nj;
                it->capjumps = nc;
            }
            it->jumps[it->njumps][0] = row;
            it->jumps[it->njumps][1] = line;
            it->njumps++;
        }
        it->last_line = line;
    }
    if (tt->nrows > 0 && !tt->lines) it->last_line += tt->nrows - 1;
    it->rows += tt->nrows;
    return RF_OK;
}

int64_t *rf_import_lines(const itable *it, int64_t n)
{
    if (!it->njumps || n <= 0) return NULL;
    int64_t *lines = rf_malloc((size_t)n * sizeof *lines);
    if (!lines) return NULL;
    int64_t j = -1;
    for (int64_t g = 0; g < n; g++) {
        if (j + 1 < it->njumps && it->jumps[j + 1][0] == g) j++;
        lines[g] = j < 0 ? g + 1 + (it->t.header ? 1 : 0) : it->jumps[j][1] + (g - it->jumps[j][0]);
    }
    return lines;
}

rf_status rf_import_text(rf_importer *imp, int32_t tid, const char *path, const char *data, int64_t size, rf_diags *d)
{
    if (imp->failed) return imp->failed;
    if (stop_if_signalled(imp, d)) return imp->failed;
    itable *it = &imp->tabs[tid];
    if (!it->path && !(it->path = rf_strdup(path))) return RF_ENOMEM;
    /* a table whose end failed beside this one: that comes first, and
    ** parsing on would be wasted */
    if (rf_import_end_failed(imp)) return rf_import_settle(imp, d);
    rf_rt_load_opts lo = {.delimiter = it->t.delimiter, .header = it->lines == 0 ? it->t.header : 0,
                          .threads = imp->threads, .pred = it->t.pred};
    if (size < (8LL << 20)) lo.threads = 1;
    rf_rt_texttable tt;
    memset(&tt, 0, sizeof tt);
    rf_diags pd; /* the parse's, after whatever the work in flight reports */
    rf_diags_init(&pd);
    double t0 = rf_now();
    rf_status st = rf_rt_load_mem(path, data, size, it->lines + 1, it->t.types, it->t.ncols, &lo, &tt, &pd);
    imp->times.parse.wall += rf_now() - t0;
    imp->times.bytes += size;
    if (!st) st = note_lines(it, &tt, it->lines + 1, lo.header);
    if (!st) {
        it->lines += tt.nlines; /* a quoted field may span lines */
        if (!it->encoded) st = choose_encodings(imp, it, &tt, &pd);
    }
    /* room for this block's columns: the oldest block in flight done */
    rf_status wst = st ? rf_import_settle(imp, d) : rf_import_settle_block(imp, d);
    if (!wst) {
        for (int64_t k = 0; k < pd.count; k++) rf_diag_add(d, pd.items[k].sev, pd.items[k].loc, "%s", pd.items[k].msg);
    } else {
        st = wst;
    }
    rf_diags_free(&pd);
    if (!st) st = rf_import_start_block(imp, it, &tt);
    if (st && !imp->failed) imp->failed = st;
    rf_rt_texttable_free(&tt);
    return st;
}

/* Until fd (a pipe, FIFO or device, opened O_NONBLOCK) has bytes or its
** end to read: 1; 0 once a signal is held (tools/db_import.h). A blocking
** read would restart after the handler (SA_RESTART), and a ^C would wait
** for the writer, maybe for ever. */
static int wait_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (!rf_file_signal_held()) {
        int r = poll(&p, 1, 50);
        if (r > 0 || (r < 0 && errno != EINTR)) return 1;
    }
    return 0;
}

static void show_progress(const char *path, int64_t done, int64_t total)
{
    if (total > 0)
        fprintf(stderr, "\rimporting %s: %3d%% (%lld of %lld MB)", path, (int)(done * 100 / total),
                (long long)(done >> 20), (long long)(total >> 20));
    else
        fprintf(stderr, "\rimporting %s: %lld MB", path, (long long)(done >> 20));
    fflush(stderr);
}

/* A regular file of size bytes, mapped and handed on a window of whole
** records at a time (imp->block bytes, more where one record is longer): the
** parsing threads read the page cache straight, with no copy into a buffer
** and no serial read ahead of them. A window's pages leave the mapping once
** parsed, so the process holds about a window of text whatever the file's
** size. *mapped = 0: the file cannot be mapped (the caller reads it). */
static rf_status import_mapped(rf_importer *imp, int32_t tid, const char *path, int fd, int64_t size, int *mapped,
                               rf_diags *d)
{
    double t0 = rf_now();
    char *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    *mapped = map != MAP_FAILED;
    if (!*mapped) return RF_OK;
    madvise(map, (size_t)size, MADV_SEQUENTIAL);
    /* a file cut short meanwhile: NUL bytes past its end, not SIGBUS */
    int guard = rf_rt_map_guard_add(map, size);
    imp->times.read.wall += rf_now() - t0;
    const int64_t page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    int64_t pos = 0, dropped = 0;
    rf_status st = RF_OK;
    while (!st && pos < size) {
        int64_t left = size - pos, cut = left;
        double c0 = rf_now(), cc0 = rf_import_thread_cpu();
        for (int64_t win = imp->block; win < left; win *= 2) {
            cut = window_end(map + pos, win, pos == 0, imp->tabs[tid].t.delimiter, imp->threads);
            if (cut > 0) break;
            cut = left; /* no record ends in the window: a larger one */
        }
        imp->times.cuts.wall += rf_now() - c0;
        imp->times.cuts.cpu += rf_import_thread_cpu() - cc0;
        if (pos + cut < size) {
            /* the next window read ahead while this one is parsed */
            int64_t nb = (pos + cut) / page * page, ne = pos + cut + imp->block < size ? pos + cut + imp->block : size;
            madvise(map + nb, (size_t)(ne - nb), MADV_WILLNEED);
        }
        st = rf_import_text(imp, tid, path, map + pos, cut, d);
        pos += cut;
        int64_t upto = pos < size ? pos / page * page : size;
        if (upto > dropped) madvise(map + dropped, (size_t)(upto - dropped), MADV_DONTNEED);
        dropped = upto > dropped ? upto : dropped;
        if (imp->progress) show_progress(path, pos, size);
    }
    if (imp->progress) fputc('\n', stderr);
    rf_rt_map_guard_remove(guard);
    munmap(map, (size_t)size);
    return st;
}

rf_status rf_import_file(rf_importer *imp, int32_t tid, const char *path, rf_diags *d)
{
    rf_loc loc = rf_mkloc(path, 0, 0);
    if (imp->failed) return imp->failed;
    /* O_NONBLOCK: a FIFO's open does not wait for its writer (wait_readable
    ** does, a signal held ending it); a regular file reads as without */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || S_ISDIR(sb.st_mode)) {
        int err = errno;
        /* the work in flight is earlier: its failure comes first */
        rf_status sst = rf_import_settle(imp, d);
        if (sst) {
            if (fd >= 0) close(fd);
            return sst;
        }
        if (fd < 0)
            rf_rt_load_open_error(path, imp->tabs[tid].t.pred, err, d);
        else
            rf_error(d, loc, "cannot open file: it is a folder");
        if (fd >= 0) close(fd);
        return RF_EIO;
    }
    int64_t total = S_ISREG(sb.st_mode) ? (int64_t)sb.st_size : 0, done = 0;
    if (!imp->tabs[tid].path && !(imp->tabs[tid].path = rf_strdup(path))) {
        close(fd);
        return RF_ENOMEM;
    }
    if (total > 0) {
        int mapped;
        rf_status st = import_mapped(imp, tid, path, fd, total, &mapped, d);
        if (mapped) {
            close(fd);
            return st;
        }
    }
    int64_t cap = imp->block, len = 0, nl_done = 0; /* line ends in the bytes imported */
    char *buf = rf_malloc((size_t)cap);
    rf_status st = buf ? RF_OK : RF_ENOMEM;
    int eof = 0;
    while (!st && !eof) {
        if (len == cap) {
            /* one line longer than the block: a larger one */
            char *nb = rf_realloc(buf, (size_t)cap * 2);
            if (!nb) {
                st = RF_ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        double t0 = rf_now();
        if (!wait_readable(fd)) {
            st = stop_if_signalled(imp, d);
            break;
        }
        ssize_t r = read(fd, buf + len, (size_t)(cap - len));
        imp->times.read.wall += rf_now() - t0;
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (r < 0) {
            int err = errno;
            if ((st = rf_import_settle(imp, d)) != RF_OK) break;
            rf_error(d, loc, "cannot read file: %s", strerror(err));
            st = imp->failed = RF_EIO;
            break;
        }
        if (r == 0) eof = 1;
        /* a NUL byte is an error wherever it stands (as the loader's,
        ** runtime/io/rf_load_file.c): the read stops there, so that a
        ** special file of NULs (a link to /dev/zero) is not one endless line */
        const char *z = r > 0 ? memchr(buf + len, 0, (size_t)r) : NULL;
        if (z) {
            if ((st = rf_import_settle(imp, d)) != RF_OK) break;
            int64_t line = nl_done + 1, at = 0;
            for (const char *q = buf; q < z && (q = memchr(q, '\n', (size_t)(z - q))) != NULL; q++) {
                line++;
                at = q + 1 - buf;
            }
            rf_error(d, rf_mkloc(path, (int32_t)line, (int32_t)(z - buf - at + 1)),
                     "a NUL byte: a text input may not contain NUL bytes (is it a special file, such as /dev/zero?)");
            st = imp->failed = RF_EUSER;
            break;
        }
        len += r;
        if (!eof && len < cap) continue;
        /* whole lines: up to the last line end (all of it at the end) */
        int64_t cut = len;
        if (!eof) {
            double c0 = rf_now(), cc0 = rf_import_thread_cpu();
            cut = window_end(buf, len, done == 0, imp->tabs[tid].t.delimiter, imp->threads);
            imp->times.cuts.wall += rf_now() - c0;
            imp->times.cuts.cpu += rf_import_thread_cpu() - cc0;
            if (cut == 0) continue;
        }
        if (cut > 0 || imp->tabs[tid].lines == 0) st = rf_import_text(imp, tid, path, buf, cut, d);
        for (const char *q = buf; q < buf + cut && (q = memchr(q, '\n', (size_t)(buf + cut - q))) != NULL; q++) nl_done++;
        memmove(buf, buf + cut, (size_t)(len - cut));
        len -= cut;
        done += cut;
        if (imp->progress) show_progress(path, done, total);
    }
    if (imp->progress) fputc('\n', stderr);
    free(buf);
    close(fd);
    return st;
}

rf_status rf_import_end(rf_importer *imp, int32_t tid, rf_diags *d)
{
    itable *it = &imp->tabs[tid];
    if (imp->failed) return imp->failed;
    if (it->ended) return RF_OK;
    if (stop_if_signalled(imp, d)) return imp->failed;
    rf_status st = rf_import_start_end(imp, it, d);
    if (!st) it->ended = 1;
    return st;
}

rf_status rf_import_commit(rf_importer *imp, rf_diags *d)
{
    rf_status st = RF_OK;
    for (int32_t i = 0; i < imp->n && !st; i++) st = rf_import_end(imp, i, d);
    if (!st) st = rf_import_settle(imp, d);
    if (!st) st = stop_if_signalled(imp, d);
    double t0 = rf_now(), c0 = rf_import_process_cpu();
    /* a database replaced is locked as `redfox exec` locks it: a commit
    ** under way there ends first (then this one replaces its result), and
    ** one that starts after finds this database (it took the new folder
    ** from under an exec's commit, which then swapped the old data back) */
    int lock = -1, waited = 0;
    if (!st && rf_db_is_database(imp->out)) {
        /* a wait that a held signal ends (rf_file.h) is this stop: said as
        ** the others are */
        rf_diags ld;
        rf_diags_init(&ld);
        st = rf_file_lock_folder(imp->out, &lock, &waited, &ld);
        if (st && rf_file_signal_held()) st = stop_if_signalled(imp, d);
        else
            for (int64_t k = 0; k < ld.count; k++) rf_diag_add(d, ld.items[k].sev, ld.items[k].loc, "%s", ld.items[k].msg);
        rf_diags_free(&ld);
    }
    if (!st && waited)
        rf_diag_add(d, RF_SEV_NOTE, rf_mkloc(imp->out, 0, 0),
                    "waited for another process's transaction or run on this database before replacing it");
    if (!st) st = kept_unchanged(imp, d);
    if (!st) st = rf_db_writer_commit(imp->w, d);
    rf_file_unlock(lock);
    imp->times.commit.wall += rf_now() - t0;
    imp->times.commit.cpu += rf_import_process_cpu() - c0;
    return st;
}

void rf_import_get_times(const rf_importer *imp, rf_import_times *out)
{
    *out = imp->times;
    out->wall = rf_now() - imp->t0;
    out->cpu = rf_import_process_cpu() - imp->cpu0;
    out->columns.cpu = out->encode.cpu + out->append.cpu + out->order.cpu;
    double other = out->columns.cpu + out->end.cpu + out->keys.cpu + out->commit.cpu + out->cuts.cpu;
    out->parse.cpu = out->cpu > other ? out->cpu - other : 0;
    rf_db_write_stats ws;
    rf_db_writer_stats(imp->w, &ws);
    out->written = ws.bytes;
    out->write = (rf_import_phase){ws.write.wall, ws.write.cpu};
    out->writeback = (rf_import_phase){ws.writeback.wall, ws.writeback.cpu};
}

void rf_import_free(rf_importer *imp)
{
    if (!imp) return;
    rf_import_abandon(imp);
    rf_db_writer_free(imp->w);
    for (int32_t i = 0; i < imp->n; i++) {
        free(imp->tabs[i].path);
        free(imp->tabs[i].fd_cols);
        free(imp->tabs[i].also);
        free(imp->tabs[i].done);
        free(imp->tabs[i].jumps);
        rf_import_order_free(&imp->tabs[i].key_order);
        rf_import_order_free(&imp->tabs[i].fd_order);
    }
    free(imp->tabs);
    free(imp->out);
    rf_db_close(imp->kept);
    free(imp->kept_manifest);
    pthread_mutex_destroy(&imp->turn_mu);
    pthread_cond_destroy(&imp->turn_cv);
    free(imp);
}

rf_status rf_import_tables_of(const rf_fe_program *fe, const rf_hir_program *hir, rf_arena *arena,
                              rf_import_table **out, int32_t *n)
{
    *out = NULL;
    *n = 0;
    int32_t cap = fe ? fe->npreds : hir->nvars;
    rf_import_table *ts = rf_arena_alloc(arena, ((size_t)cap + 1) * sizeof *ts);
    if (!ts) return RF_ENOMEM;
    int32_t k = 0;
    for (int32_t i = 0; i < cap; i++) {
        rf_import_table *t = &ts[k];
        if (fe) {
            const rf_fe_pred *p = fe->preds[i];
            if (!p->input_file) continue;
            *t = (rf_import_table){p->input_file, p->name, p->arity, p->types, p->cols, p->delimiter, p->header,
                                   p->ninput_key, p->input_key, p->functional ? p->arity - 1 : -1};
        } else {
            const rf_hir_var *v = hir->vars[i];
            if (v->role != RF_HIR_ROLE_INPUT || v->kind != RF_HIR_V_REL) continue;
            *t = (rf_import_table){v->input_file, v->name, v->ncols, v->types, v->colnames, v->delimiter, v->header,
                                   v->ninput_key, v->input_key,
                                   v->pred_name && v->nkeys >= 0 && v->nkeys < v->ncols ? v->nkeys : -1};
        }
        k++;
    }
    *out = ts;
    *n = k;
    return RF_OK;
}
