/*
** db/db_dict.c: a string column's dictionary, built by several threads.
**
** Owns: the distinct strings of one column in order of first appearance
** (docs/DATABASE.md, "Dictionaries") and the codes of appended rows. The
** strings are split into 64 shards by their hash, each with its own hash
** table, so that threads insert into different shards at once without
** locks. A batch of rows goes in four parallel passes: hash and look up
** (the dictionary is only read, so a column of few distinct strings, all in
** one shard, is parallel too), insert what was absent (each thread its
** shards, in row order), count each range's first appearances, and number
** them (a batch whose strings were all there ends after the first pass,
** its codes found with them): a string's code is its rank in order of first appearance, which
** does not depend on the number of threads (nor does the file). Also
** writing the dictionary file, and the choice of no dictionary at all (plain
** strings) for a column whose first rows are mostly distinct.
**
** Memory: per distinct string about 36 bytes besides its bytes (offset,
** hash, code, two slots, and its place in code order).
*/
#include "db_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <unistd.h>

#define NSHARD 64
#define SHARD_OF(h) ((int)((h) >> 58))

typedef struct shard {
    uint64_t *off;   /* nent + 1 offsets into bytes */
    uint64_t *hash;  /* per entry */
    uint32_t *code;  /* per entry: its code */
    char *bytes;
    uint64_t nbytes, capbytes;
    int64_t nent, capent;
    uint64_t *slot;  /* (hash >> 32) << 32 | (entry + 1); 0 empty: the hash's
                        high half tells most misses apart without reading the entry */
    uint64_t nslots;
} shard;

struct rf_db_dict {
    shard sh[NSHARD];
    int64_t n;           /* distinct strings so far */
    uint64_t *order;     /* code -> shard << 32 | entry */
    int64_t caporder;
    uint64_t nbytes;     /* bytes of all entries */
    /* scratch of one batch */
    uint64_t *h;
    uint32_t *loc;
    uint8_t *first;
    int64_t capscratch;
    int mostly_new;      /* the last batch was mostly first appearances */
};

uint64_t rf_db_hash_bytes(const char *p, int64_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ (uint64_t)n * 0xff51afd7ed558ccdULL;
    while (n >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        h = (h ^ x) * 0x9e3779b97f4a7c15ULL;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t x = 0;
    if (n) memcpy(&x, p, (size_t)n);
    h = (h ^ x) * 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 32;
    return h;
}

/* Big arrays are advised to use huge pages: with every thread inserting,
** page faults of 4 KiB pages contend on the process's memory map (on 16
** cores, more system time than work). Best effort. */
static void advise_huge(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
    if (n < ((size_t)4 << 20)) return;
    uintptr_t a = ((uintptr_t)p + ((2u << 20) - 1)) & ~(uintptr_t)((2u << 20) - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)((2u << 20) - 1);
    if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)p;
    (void)n;
#endif
}

static void *grow(void *p, size_t n)
{
    void *q = rf_realloc(p, n);
    if (q) advise_huge(q, n);
    return q;
}

rf_db_dict *rf_db_dict_new(void) { return rf_calloc(1, sizeof(rf_db_dict)); }

void rf_db_dict_free(rf_db_dict *dc)
{
    if (!dc) return;
    for (int s = 0; s < NSHARD; s++) {
        shard *sh = &dc->sh[s];
        free(sh->off);
        free(sh->hash);
        free(sh->code);
        free(sh->bytes);
        free(sh->slot);
    }
    free(dc->order);
    free(dc->h);
    free(dc->loc);
    free(dc->first);
    free(dc);
}

int64_t rf_db_dict_count(const rf_db_dict *dc) { return dc ? dc->n : 0; }

#define SLOT(h, e) ((((h) >> 32) << 32) | ((uint64_t)(e) + 1))
#define SLOT_ENTRY(v) ((int64_t)(uint32_t)(v)-1)
#define SLOT_TAG_OK(v, h) ((v) >> 32 == (h) >> 32)

static int grow_slots(shard *sh)
{
    uint64_t ns = sh->nslots ? sh->nslots * 2 : 256;
    uint64_t *s = rf_malloc((size_t)ns * sizeof *s);
    if (!s) return -1;
    advise_huge(s, (size_t)ns * sizeof *s);
    memset(s, 0, (size_t)ns * sizeof *s);
    for (int64_t i = 0; i < sh->nent; i++) {
        uint64_t j = sh->hash[i] & (ns - 1);
        while (s[j]) j = (j + 1) & (ns - 1);
        s[j] = SLOT(sh->hash[i], i);
    }
    free(sh->slot);
    sh->slot = s;
    sh->nslots = ns;
    return 0;
}

static int same_entry(const shard *sh, int64_t i, uint64_t h, const char *s, int64_t n)
{
    return sh->hash[i] == h && (int64_t)(sh->off[i + 1] - sh->off[i]) == n &&
           (n == 0 || !memcmp(sh->bytes + sh->off[i], s, (size_t)n));
}

/* The entry of string s (hash h) in sh, or -1 when absent; only reads. */
static int64_t shard_lookup(const shard *sh, uint64_t h, const char *s, int64_t n)
{
    if (!sh->nslots) return -1;
    uint64_t j = h & (sh->nslots - 1);
    for (;;) {
        uint64_t v = sh->slot[j];
        if (!v) return -1;
        if (SLOT_TAG_OK(v, h) && same_entry(sh, SLOT_ENTRY(v), h, s, n)) return SLOT_ENTRY(v);
        j = (j + 1) & (sh->nslots - 1);
    }
}

/* The entry of string s (hash h) in sh, added when new (*added = 1); -1 when
** memory ran out. */
static int64_t shard_find(shard *sh, uint64_t h, const char *s, int64_t n, int *added)
{
    *added = 0;
    if ((uint64_t)(sh->nent + 1) * 2 > sh->nslots && grow_slots(sh)) return -1;
    uint64_t j = h & (sh->nslots - 1);
    for (;;) {
        uint64_t v = sh->slot[j];
        if (!v) break;
        if (SLOT_TAG_OK(v, h) && same_entry(sh, SLOT_ENTRY(v), h, s, n)) return SLOT_ENTRY(v);
        j = (j + 1) & (sh->nslots - 1);
    }
    if (sh->nent + 2 > sh->capent) {
        int64_t nc = sh->capent ? sh->capent * 2 : 256;
        uint64_t *no = grow(sh->off, (size_t)nc * sizeof *no);
        if (!no) return -1;
        sh->off = no;
        uint64_t *nh = grow(sh->hash, (size_t)nc * sizeof *nh);
        if (!nh) return -1;
        sh->hash = nh;
        uint32_t *ncd = grow(sh->code, (size_t)nc * sizeof *ncd);
        if (!ncd) return -1;
        sh->code = ncd;
        sh->capent = nc;
    }
    if (sh->nbytes + (uint64_t)n > sh->capbytes) {
        uint64_t nc = sh->capbytes ? sh->capbytes * 2 : 16384;
        while (nc < sh->nbytes + (uint64_t)n) nc *= 2;
        char *nb = grow(sh->bytes, (size_t)nc);
        if (!nb) return -1;
        sh->bytes = nb;
        sh->capbytes = nc;
    }
    int64_t i = sh->nent++;
    if (i == 0) sh->off[0] = 0;
    if (n) memcpy(sh->bytes + sh->nbytes, s, (size_t)n);
    sh->nbytes += (uint64_t)n;
    sh->off[i + 1] = sh->nbytes;
    sh->hash[i] = h;
    sh->slot[j] = SLOT(h, i);
    *added = 1;
    return i;
}

typedef struct batch {
    rf_db_dict *dc;
    int64_t n;
    const int64_t *off;
    const char *bytes;
    uint32_t *codes;
    int nthreads;
    int oom[256];
    int64_t nabsent[256];  /* rows of thread t's range whose strings were not in the dictionary */
    int64_t nnew[256];     /* rows of first appearance in thread t's range */
    uint64_t newbytes[256];
} batch;

/* Row states in dc->first: */
#define ROW_KNOWN 0 /* found by the insert pass, not new: loc is its entry */
#define ROW_ABSENT 1 /* not found before this batch: its shard's thread inserts it */
#define ROW_FIRST 2 /* the first appearance of a new string: gets the next code */
#define ROW_CODED 3 /* found by the lookup pass: its code is written (h and loc are not) */

/* A thread's memo of short strings it found in the dictionary: a string of
** at most 24 bytes is told by its length and three words of it (for 8 to
** 24 bytes its first, middle and last eight, which overlap and cover it;
** below 8, its bytes as one word), so a hit needs no hash and no lookup: a
** column of few distinct short strings (a flag, a mode, a clerk) costs a
** few loads a row instead of a hash and a probe. Direct-mapped, 1,024
** entries: a column of a thousand clerks mostly hits too. */
#define MEMO_BITS 10
#define MEMO_MAX 24

typedef struct memo_ent {
    uint64_t w[3];
    int64_t len;    /* -1: empty */
    uint32_t code;
} memo_ent;

/* The key of string s of n <= MEMO_MAX bytes, which ends at byte end of the
** column's bytes (so the 8 bytes before its end lie in them when end >= 8). */
static inline void memo_key(const char *s, int64_t n, int64_t end, uint64_t w[3])
{
    if (n >= 8) {
        memcpy(&w[0], s, 8);
        memcpy(&w[1], s + (n - 8) / 2, 8);
        memcpy(&w[2], s + n - 8, 8);
        return;
    }
    w[1] = w[2] = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (end >= 8) {
        /* the word that ends with the string, its bytes before the string
        ** shifted out (in two steps: n = 0 shifts all 64 bits): one load and
        ** no branch on the length, the same word as the copy below */
        uint64_t v;
        memcpy(&v, s + n - 8, 8);
        w[0] = (v >> 1) >> (63 - 8 * n);
        return;
    }
#else
    (void)end;
#endif
    w[0] = 0;
    if (n) memcpy(&w[0], s, (size_t)n);
}

static inline int memo_slot(const uint64_t w[3], int64_t n)
{
    uint64_t x = (w[0] ^ w[1] * 0x9e3779b97f4a7c15ULL ^ w[2] * 0xc4ceb9fe1a85ec53ULL ^ (uint64_t)n) *
                 0xff51afd7ed558ccdULL;
    return (int)(x >> (64 - MEMO_BITS));
}

/* Thread t hashes its range of rows and finds those already in the
** dictionary (no thread writes to it in this phase): a column of few
** distinct strings, all in one shard, is then parallel from its second
** batch on. A string found has its code (every entry of an earlier batch
** has one), written at once, and nothing else is kept of its row (no hash,
** no entry: the later passes skip it): a batch whose strings are all known
** (a flag's column after its first rows) needs no other pass, and costs a
** code's store a row besides the lookup. */
static void hash_part(void *arg, int t)
{
    batch *b = arg;
    rf_db_dict *dc = b->dc;
    int64_t lo = b->n * t / b->nthreads, hi = b->n * (t + 1) / b->nthreads, absent = 0;
    /* a column of mostly distinct strings (a comment) skips the lookup:
    ** the insert pass finds the few repeats anyway */
    if (dc->mostly_new || dc->n == 0) {
        for (int64_t i = lo; i < hi; i++) {
            const char *str = b->bytes + b->off[i];
            int64_t len = b->off[i + 1] - b->off[i];
            uint64_t h = rf_db_hash_bytes(str, len);
            dc->h[i] = h;
            int64_t e = dc->mostly_new ? -1 : shard_lookup(&dc->sh[SHARD_OF(h)], h, str, len);
            dc->first[i] = e < 0 ? ROW_ABSENT : ROW_CODED;
            if (e >= 0) b->codes[i] = dc->sh[SHARD_OF(h)].code[e];
            else absent++;
        }
        b->nabsent[t] = absent;
        return;
    }
    memo_ent memo[1 << MEMO_BITS];
    for (int k = 0; k < 1 << MEMO_BITS; k++) memo[k].len = -1;
    for (int64_t i = lo; i < hi; i++) {
        const char *str = b->bytes + b->off[i];
        int64_t len = b->off[i + 1] - b->off[i];
        uint64_t w[3];
        memo_ent *m = NULL;
        if (len <= MEMO_MAX) {
            memo_key(str, len, b->off[i + 1], w);
            m = &memo[memo_slot(w, len)];
            if (m->len == len && m->w[0] == w[0] && m->w[1] == w[1] && m->w[2] == w[2]) {
                dc->first[i] = ROW_CODED;
                b->codes[i] = m->code;
                continue;
            }
        }
        uint64_t h = rf_db_hash_bytes(str, len);
        int64_t e = shard_lookup(&dc->sh[SHARD_OF(h)], h, str, len);
        if (e < 0) {
            dc->h[i] = h;
            dc->first[i] = ROW_ABSENT;
            absent++;
            continue;
        }
        dc->first[i] = ROW_CODED;
        uint32_t code = dc->sh[SHARD_OF(h)].code[e];
        b->codes[i] = code;
        if (m) *m = (memo_ent){{w[0], w[1], w[2]}, len, code};
    }
    b->nabsent[t] = absent;
}

/* Thread t inserts the absent rows of its shards, in row order. */
static void insert_part(void *arg, int t)
{
    batch *b = arg;
    rf_db_dict *dc = b->dc;
    int nt = b->nthreads < NSHARD ? b->nthreads : NSHARD;
    int s0 = NSHARD * t / nt, s1 = NSHARD * (t + 1) / nt;
    for (int64_t i = 0; i < b->n; i++) {
        if (dc->first[i] != ROW_ABSENT) continue;
        int s = SHARD_OF(dc->h[i]);
        if (s < s0 || s >= s1) continue;
        int added;
        int64_t e = shard_find(&dc->sh[s], dc->h[i], b->bytes + b->off[i], b->off[i + 1] - b->off[i], &added);
        if (e < 0) {
            b->oom[t] = 1;
            return;
        }
        dc->loc[i] = (uint32_t)e;
        dc->first[i] = added ? ROW_FIRST : ROW_KNOWN;
    }
}

static void count_part(void *arg, int t)
{
    batch *b = arg;
    int64_t lo = b->n * t / b->nthreads, hi = b->n * (t + 1) / b->nthreads, k = 0;
    for (int64_t i = lo; i < hi; i++) k += b->dc->first[i] == ROW_FIRST;
    b->nnew[t] = k;
}

/* Thread t gives the new strings of its range their codes: those before
** its range (nnew of the earlier threads, turned into a base) come first. */
static void assign_part(void *arg, int t)
{
    batch *b = arg;
    rf_db_dict *dc = b->dc;
    int64_t lo = b->n * t / b->nthreads, hi = b->n * (t + 1) / b->nthreads, code = b->nnew[t];
    uint64_t bytes = 0;
    for (int64_t i = lo; i < hi; i++) {
        if (dc->first[i] != ROW_FIRST) continue;
        int s = SHARD_OF(dc->h[i]);
        shard *sh = &dc->sh[s];
        uint32_t e = dc->loc[i];
        sh->code[e] = (uint32_t)code;
        dc->order[code++] = (uint64_t)s << 32 | e;
        bytes += sh->off[e + 1] - sh->off[e];
    }
    b->newbytes[t] = bytes;
}

static void code_part(void *arg, int t)
{
    batch *b = arg;
    rf_db_dict *dc = b->dc;
    int64_t lo = b->n * t / b->nthreads, hi = b->n * (t + 1) / b->nthreads;
    for (int64_t i = lo; i < hi; i++)
        if (dc->first[i] != ROW_CODED) b->codes[i] = dc->sh[SHARD_OF(dc->h[i])].code[dc->loc[i]];
}

static void run_serial(int nthreads, rf_db_task_fn fn, void *arg)
{
    for (int t = 0; t < nthreads; t++) fn(arg, t);
}

int rf_db_dict_encode(rf_db_dict *dc, int64_t n, const int64_t *off, const char *bytes, uint32_t *codes,
                      int nthreads, rf_db_parallel_fn par)
{
    if (n <= 0) return 0;
    if (!par || nthreads < 1) nthreads = 1;
    if (nthreads > 256) nthreads = 256;
    if (n < 4096) nthreads = 1;
    if (nthreads == 1) par = run_serial;
    if (n > dc->capscratch) {
        free(dc->h);
        free(dc->loc);
        free(dc->first);
        dc->h = rf_malloc((size_t)n * sizeof *dc->h);
        dc->loc = rf_malloc((size_t)n * sizeof *dc->loc);
        dc->first = rf_malloc((size_t)n);
        dc->capscratch = dc->h && dc->loc && dc->first ? n : 0;
        if (!dc->capscratch) return -1;
    }
    batch *b = rf_calloc(1, sizeof *b);
    if (!b) return -1;
    *b = (batch){dc, n, off, bytes, codes, nthreads, {0}, {0}, {0}, {0}};
    par(nthreads, hash_part, b);
    int64_t absent = 0;
    for (int t = 0; t < nthreads; t++) absent += b->nabsent[t];
    if (absent == 0) {
        /* every string known: every code written */
        dc->mostly_new = 0;
        free(b);
        return 0;
    }
    par(nthreads < NSHARD ? nthreads : NSHARD, insert_part, b);
    int oom = 0;
    for (int t = 0; t < nthreads; t++) oom |= b->oom[t];
    if (oom) {
        free(b);
        return -1;
    }
    /* codes in order of first appearance: each thread's new strings counted,
    ** the counts turned into bases, then numbered in row order */
    par(nthreads, count_part, b);
    int64_t total = dc->n;
    for (int t = 0; t < nthreads; t++) {
        int64_t k = b->nnew[t];
        b->nnew[t] = total;
        total += k;
    }
    if (total > RF_DB_MAX_DICT) {
        free(b);
        return -2;
    }
    if (total > dc->caporder) {
        int64_t nc = dc->caporder ? dc->caporder : 1024;
        while (nc < total) nc *= 2;
        uint64_t *no = grow(dc->order, (size_t)nc * sizeof *no);
        if (!no) {
            free(b);
            return -1;
        }
        dc->order = no;
        dc->caporder = nc;
    }
    par(nthreads, assign_part, b);
    dc->mostly_new = (total - dc->n) * 2 > n;
    dc->n = total;
    for (int t = 0; t < nthreads; t++) dc->nbytes += b->newbytes[t];
    par(nthreads, code_part, b);
    free(b);
    return 0;
}

static int write_all(int fd, const void *p, int64_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t r = write(fd, c, (size_t)(n > (1 << 30) ? (1 << 30) : n));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r;
        n -= r;
    }
    return 0;
}

int rf_db_dict_write(const rf_db_dict *dc, int fd, uint32_t *crc, uint64_t *size)
{
    /* the offsets, then the bytes, in code order, through one buffer */
    enum { CHUNK = 1 << 20 };
    char *buf = rf_malloc(CHUNK);
    if (!buf) return -1;
    uint32_t c = 0;
    int64_t len = 0;
    uint64_t at = 0, total = 0;
#define EMIT(ptr, k)                                                                                           \
    do {                                                                                                       \
        const char *src_ = (const char *)(ptr);                                                                \
        int64_t left_ = (int64_t)(k);                                                                          \
        while (left_ > 0) {                                                                                    \
            int64_t m_ = CHUNK - len < left_ ? CHUNK - len : left_;                                            \
            memcpy(buf + len, src_, (size_t)m_);                                                               \
            len += m_;                                                                                         \
            src_ += m_;                                                                                        \
            left_ -= m_;                                                                                       \
            if (len == CHUNK) {                                                                                \
                c = rf_db_crc32c(c, buf, len);                                                                 \
                if (write_all(fd, buf, len)) goto fail;                                                        \
                total += (uint64_t)len;                                                                        \
                len = 0;                                                                                       \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)
    EMIT(&at, 8);
    for (int64_t i = 0; i < dc->n; i++) {
        const shard *sh = &dc->sh[dc->order[i] >> 32];
        uint32_t e = (uint32_t)dc->order[i];
        at += sh->off[e + 1] - sh->off[e];
        EMIT(&at, 8);
    }
    for (int64_t i = 0; i < dc->n; i++) {
        const shard *sh = &dc->sh[dc->order[i] >> 32];
        uint32_t e = (uint32_t)dc->order[i];
        EMIT(sh->bytes + sh->off[e], sh->off[e + 1] - sh->off[e]);
    }
#undef EMIT
    if (len) {
        c = rf_db_crc32c(c, buf, len);
        if (write_all(fd, buf, len)) goto fail;
        total += (uint64_t)len;
    }
    free(buf);
    *crc = c;
    *size = total;
    return 0;
fail:
    free(buf);
    return -1;
}

/* ---- choosing plain strings ------------------------------------------ */

int rf_db_strings_mostly_distinct(int64_t n, const int64_t *off, const char *bytes)
{
    if (n > RF_DB_PLAIN_SAMPLE) n = RF_DB_PLAIN_SAMPLE;
    if (n < RF_DB_PLAIN_MIN_ROWS) return 0;
    /* distinct hashes in an open-addressing set of twice the sample (a
    ** collision of 64-bit hashes among 4096 strings is negligible) */
    enum { SLOTS = 2 * RF_DB_PLAIN_SAMPLE };
    uint64_t *set = rf_calloc(SLOTS, sizeof *set);
    if (!set) return 0;
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; i++) {
        uint64_t h = rf_db_hash_bytes(bytes + off[i], off[i + 1] - off[i]) | 1; /* 0 marks an empty slot */
        for (uint64_t s = h & (SLOTS - 1);; s = (s + 1) & (SLOTS - 1)) {
            if (set[s] == h) break;
            if (!set[s]) {
                set[s] = h;
                distinct++;
                break;
            }
        }
    }
    free(set);
    return distinct * 100 >= n * RF_DB_PLAIN_PERCENT;
}
