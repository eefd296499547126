/*
** runtime/rt_place_bin.c: the placement model read for a choice through a
** cache of its parsed records (rf_rt_place_load, rf_rt_place.h).
**
** Owns: <cache>/place/model.bin, the records of model.txt's first bytes as
** this build holds them in memory, and the check that those bytes are
** still model.txt's. model.txt stays the model (the text every run appends
** to, docs/LANGUAGE.md); the cache only spares a choice its parsing: a
** full model (4,096 records, some 270 KB) took 0.7-1.2 ms to parse, as much
** as a small program's run, every time auto chose. A run appends its lines
** at model.txt's end, so the cache stays good for the bytes it covers and
** only the lines after them are parsed; once those are many, or when
** model.txt was written anew (another file: its inode), the cache is made
** again from the text. Any doubt (another build, another size, the covered
** bytes not as they were: their CRC-32, read and summed at every use, some
** 0.05 ms for a full model against the 1 ms of its parse, so that a line
** edited or damaged in place is never served from the cache but found by
** the parse, with its warning) and the text is read as before: the cache
** can be deleted at any time.
*/
#include "rf_rt_place.h"

#include "rf_gpu_codegen.h" /* rf_gpu_cache_write */
#include "rf_sys.h"

#include <fcntl.h>
#include <math.h>
#include <zlib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BIN_MAGIC "redfox placement cache 3" /* 2: no reading in a run record; 1: the covered bytes' last 64 kept */
#define BIN_REMAKE_LINES 256  /* lines after the covered bytes that make the cache again */

typedef struct bin_head {
    char magic[32];
    uint64_t rec_size;  /* sizeof(rf_rt_place_rec) of the build that wrote it */
    uint64_t dev, ino;  /* model.txt's file */
    int64_t covered;    /* its bytes the records come from (whole lines) */
    int64_t lines;      /* its lines among them, the version line included */
    uint64_t crc;       /* the covered bytes' CRC-32: an edit in place, anywhere, changes it */
    int64_t n;          /* records after the head */
} bin_head;

static int ok_num(double v) { return isfinite(v) && v >= 0; }

/* The cache's path beside the model's: model.txt -> model.bin. */
static char *bin_path(const char *path)
{
    size_t l = strlen(path);
    if (l > 4 && !strcmp(path + l - 4, ".txt")) return rf_sprintf("%.*s.bin", (int)(l - 4), path);
    return rf_sprintf("%s.bin", path);
}

/* Writes m as the cache of model.txt's first covered bytes (lines lines,
** crc their CRC-32), aside and renamed; failures are not errors. */
static void bin_write(const char *bpath, const struct stat *sb, int64_t covered, int64_t lines, uint64_t crc,
                      const rf_rt_place_model *m)
{
    bin_head h;
    memset(&h, 0, sizeof h);
    snprintf(h.magic, sizeof h.magic, "%s", BIN_MAGIC);
    h.rec_size = sizeof(rf_rt_place_rec);
    h.dev = (uint64_t)sb->st_dev;
    h.ino = (uint64_t)sb->st_ino;
    h.covered = covered;
    h.lines = lines;
    h.crc = crc;
    h.n = m->n;
    size_t bytes = sizeof h + (size_t)m->n * sizeof(rf_rt_place_rec);
    char *buf = rf_malloc(bytes);
    char *dir = rf_strdup(bpath);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (buf && slash) {
        *slash = 0;
        memcpy(buf, &h, sizeof h);
        if (m->n) memcpy(buf + sizeof h, m->recs, (size_t)m->n * sizeof(rf_rt_place_rec));
        rf_rt_place_sweep(bpath);
        rf_gpu_cache_write(dir, bpath, buf, (uint64_t)bytes);
    }
    free(dir);
    free(buf);
}

/* Reads n bytes at off of fd into a new buffer (one more, for a NUL): NULL
** when they are not all there. */
static char *read_at(int fd, int64_t off, int64_t n)
{
    char *b = rf_malloc((size_t)n + 1);
    int64_t got = 0;
    while (b && got < n) {
        ssize_t r = pread(fd, b + got, (size_t)(n - got), off + got);
        if (r <= 0) break;
        got += r;
    }
    if (b && got < n) {
        free(b);
        return NULL;
    }
    if (b) b[n] = 0;
    return b;
}

/* The cache at bpath into m when it serves model.txt (fd, sb): 1, with
** *h its head; else 0 (m empty). */
static int bin_read(const char *bpath, int fd, const struct stat *sb, rf_rt_place_model *m, bin_head *h)
{
    int bfd = open(bpath, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a named pipe there: not waited on */
    if (bfd < 0) return 0;
    struct stat bs;
    int ok = fstat(bfd, &bs) == 0 && S_ISREG(bs.st_mode) && bs.st_size >= (off_t)sizeof *h && pread(bfd, h, sizeof *h, 0) == sizeof *h &&
             !strncmp(h->magic, BIN_MAGIC, sizeof h->magic) && h->rec_size == sizeof(rf_rt_place_rec) &&
             h->dev == (uint64_t)sb->st_dev && h->ino == (uint64_t)sb->st_ino && h->covered > 0 &&
             h->covered <= (int64_t)sb->st_size && h->lines >= 1 && h->n >= 0 && h->n <= RF_RT_PLACE_MAX_RECORDS &&
             (int64_t)bs.st_size == (int64_t)sizeof *h + h->n * (int64_t)sizeof(rf_rt_place_rec);
    if (ok) { /* the covered bytes as they were: model.txt not edited in place, anywhere */
        char *t = read_at(fd, 0, h->covered);
        ok = t && crc32(crc32(0L, Z_NULL, 0), (const Bytef *)t, (uInt)h->covered) == h->crc;
        free(t);
    }
    if (ok && h->n > 0) {
        m->recs = rf_malloc((size_t)h->n * sizeof(rf_rt_place_rec));
        ok = m->recs && pread(bfd, m->recs, (size_t)h->n * sizeof(rf_rt_place_rec), sizeof *h) ==
                            (ssize_t)(h->n * (int64_t)sizeof(rf_rt_place_rec));
        if (ok) m->n = m->cap = h->n;
    }
    if (ok) /* the records as a parse would give them (a damaged cache: the text again) */
        for (int64_t i = 0; i < m->n && ok; i++) {
            const rf_rt_place_rec *r = &m->recs[i];
            ok = (r->type == 'r' || r->type == 'k' || r->type == 'h') && (r->gpu == 0 || r->gpu == 1) && r->fresh >= 0 && r->fresh <= 2 &&
                 memchr(r->kind, 0, sizeof r->kind) && memchr(r->host, 0, sizeof r->host) && r->kernels >= 0 &&
                 ok_num(r->rows) && ok_num(r->bytes) && (r->read_s == -1 || ok_num(r->read_s)) && ok_num(r->start_s) && ok_num(r->copy_s) &&
                 ok_num(r->seconds) && rf_rt_place_rec_plausible(r);
        }
    close(bfd);
    if (!ok) rf_rt_place_model_free(m);
    return ok;
}

rf_status rf_rt_place_load(const char *path, rf_rt_place_model *m, rf_diags *d)
{
    memset(m, 0, sizeof *m);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a named pipe there: not waited on */
    if (fd < 0) return RF_OK; /* none yet */
    struct stat sb;
    char *bpath = bin_path(path);
    if (!rf_rt_place_file_ok(fd, &sb) || !bpath) { /* the plain read, which says what is wrong */
        close(fd);
        free(bpath);
        return rf_rt_place_read(path, m, d);
    }
    bin_head h;
    int cached = bin_read(bpath, fd, &sb, m, &h);
    int64_t from = cached ? h.covered : 0, line0 = cached ? h.lines : 0;
    /* the text after the cache's bytes (all of it without a cache) */
    char *text = read_at(fd, from, (int64_t)sb.st_size - from);
    close(fd);
    if (!text) { /* changed under us: the plain read */
        rf_rt_place_model_free(m);
        free(bpath);
        return rf_rt_place_read(path, m, d);
    }
    /* its whole lines: a last one without its newline may be an append
    ** still being written, neither read nor covered by a cache made now */
    int64_t raw = (int64_t)sb.st_size - from, len = rf_rt_place_whole_lines(text, raw), lines = line0;
    /* the lines' CRC-32 (the cache's covered part's, continued), before the
    ** parse cuts the text into lines */
    uint64_t crc = crc32(cached ? (uLong)h.crc : crc32(0L, Z_NULL, 0), (const Bytef *)text, (uInt)len);
    rf_status st = RF_OK;
    int64_t bad = len > 0 ? rf_rt_place_parse(text, len, line0, m, &lines, &st) : 0;
    free(text);
    if (!bad && !cached && raw > 0 && lines == 0) bad = 1;
    if (bad || st) {
        if (bad) rf_rt_place_damaged(path, bad, m, d);
        else rf_rt_place_model_free(m);
        free(bpath);
        return st;
    }
    rf_rt_place_trim(m);
    /* made again when there was none, or when many lines came after it */
    if (len > 0 && (!cached || lines - line0 >= BIN_REMAKE_LINES))
        bin_write(bpath, &sb, from + len, lines, crc, m);
    free(bpath);
    return RF_OK;
}
