/*
** tpch/gen/tpch_pool.c: the 300 MiB text pool that every comment column is
** cut from.
**
** Owns: the sentence grammar (dists grammar/np/vp over the word lists) and
** building the pool from its own random stream, as dbgen does: the pool is
** the first RF_TPCH_POOL_SIZE bytes of "sentence sentence ...", each
** sentence followed by one space.
**
** The stream is sequential, so the pool is built in parallel by guessing:
** segment t starts at a draw number near t/T of the way and assumes a
** sentence starts there. Two parses of the same stream that ever start a
** sentence at the same draw agree from then on, so segment t-1 runs until it
** starts a sentence at a draw where segment t also started one, and the
** pieces are joined there. Should a guess never line up, the work simply
** falls back to the sequential path; the result is the same either way.
** Each segment writes into its own slot of the pool's mapping, a little
** larger than its share, and the pieces are then moved down into place.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tpch_internal.h"

/* Draws consumed per pool byte, measured once; it only balances the load. */
#define DRAWS_PER_BYTE 0.2031
/* Sentence starts a segment records for its predecessor to meet. */
#define SYNC_STARTS 4096
/* Room past the end for one more sentence plus the 16-byte word copies. */
#define SENTENCE_SLACK 1024

typedef struct phrase {
    int32_t n;
    const rf_tpch_dist *dist[8];
    char punct[8]; /* a character glued after the word (the "," in "J,") */
} phrase;

typedef struct grammar {
    const rf_tpch_dists *ds;
    int32_t nsent, nnp, nvp;
    char sent[16][16]; /* grammar: one part of speech letter per element */
    phrase np[16], vp[16];
} grammar;

static int compile_phrase(const rf_tpch_dists *ds, const char *syntax, phrase *ph)
{
    ph->n = 0;
    const char *s = syntax;
    while (*s) {
        while (*s == ' ') s++;
        if (!*s) break;
        const rf_tpch_dist *dist;
        switch (*s) {
        case 'A': dist = &ds->articles; break;
        case 'J': dist = &ds->adjectives; break;
        case 'D': dist = &ds->adverbs; break;
        case 'N': dist = &ds->nouns; break;
        case 'V': dist = &ds->verbs; break;
        case 'X': dist = &ds->auxillaries; break;
        default: return -1;
        }
        if (ph->n == 8) return -1;
        char punct = (s[1] && s[1] != ' ') ? s[1] : 0;
        ph->dist[ph->n] = dist;
        ph->punct[ph->n++] = punct;
        s++;
        while (*s && *s != ' ') s++;
    }
    return ph->n ? 0 : -1;
}

static int max_word(const rf_tpch_dist *d)
{
    int m = 0;
    for (int32_t i = 0; i < d->count; i++)
        if (d->len[i] > m) m = d->len[i];
    return m;
}

static int compile(const rf_tpch_dists *ds, grammar *g)
{
    memset(g, 0, sizeof *g);
    g->ds = ds;
    const rf_tpch_dist *words[] = {&ds->articles, &ds->adjectives, &ds->adverbs, &ds->nouns,
                                   &ds->verbs, &ds->auxillaries, &ds->prepositions,
                                   &ds->terminators};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (max_word(words[i]) > 16) return -1; /* copies move 16 bytes per word */
    if (ds->grammar.count > 16 || ds->np.count > 16 || ds->vp.count > 16) return -1;
    g->nsent = ds->grammar.count;
    for (int32_t i = 0; i < g->nsent; i++) {
        int32_t k = 0;
        for (const char *s = ds->grammar.text[i]; *s; s++) {
            if (*s == ' ') continue;
            if (!strchr("NVPT", *s) || k == 15) return -1;
            g->sent[i][k++] = *s;
        }
        g->sent[i][k] = 0;
        /* dbgen's spacing rules are only reproduced for sentences that end
        ** in their single terminator, as all of dists.dss's do */
        if (k < 2 || g->sent[i][k - 1] != 'T' || strchr(g->sent[i], 'T') != &g->sent[i][k - 1])
            return -1;
    }
    g->nnp = ds->np.count;
    for (int32_t i = 0; i < g->nnp; i++)
        if (compile_phrase(ds, ds->np.text[i], &g->np[i])) return -1;
    g->nvp = ds->vp.count;
    for (int32_t i = 0; i < g->nvp; i++)
        if (compile_phrase(ds, ds->vp.text[i], &g->vp[i])) return -1;
    return 0;
}

/* The stream position: seed and how many draws were taken so far. */
typedef struct cursor {
    int64_t seed;
    int64_t draws;
} cursor;

static inline char *put_word(char *p, const rf_tpch_dist *d, cursor *c)
{
    int32_t i = rf_tpch_pick(d, &c->seed);
    c->draws++;
    memcpy(p, d->text[i], 16);
    return p + d->len[i];
}

/* Every word is followed by a space (and its punctuation before that). */
static inline char *put_phrase(char *p, const phrase *set, const rf_tpch_dist *which, cursor *c)
{
    const phrase *ph = &set[rf_tpch_pick(which, &c->seed)];
    c->draws++;
    for (int32_t k = 0; k < ph->n; k++) {
        p = put_word(p, ph->dist[k], c);
        if (ph->punct[k]) *p++ = ph->punct[k];
        *p++ = ' ';
    }
    return p;
}

/* Writes one sentence and the space that separates it from the next. */
static inline char *put_sentence(const grammar *g, char *p, cursor *c)
{
    const rf_tpch_dists *ds = g->ds;
    const char *s = g->sent[rf_tpch_pick(&ds->grammar, &c->seed)];
    c->draws++;
    for (; *s; s++) {
        switch (*s) {
        case 'N': p = put_phrase(p, g->np, &ds->np, c); break;
        case 'V': p = put_phrase(p, g->vp, &ds->vp, c); break;
        case 'P':
            p = put_word(p, &ds->prepositions, c);
            memcpy(p, " the ", 5);
            p = put_phrase(p + 5, g->np, &ds->np, c);
            break;
        case 'T':
            /* the terminator takes the place of the last word's space */
            p = put_word(p - 1, &ds->terminators, c);
            *p++ = ' ';
            break;
        }
    }
    return p;
}

/* One piece of the pool, written in its slot of the pool's mapping. */
typedef struct segment {
    const grammar *g;
    struct segment *all;
    int32_t index, nseg;
    int64_t first_draw; /* where this segment's guess starts */
    cursor cur;
    char *buf;
    int64_t len, cap, limit; /* limit: stop when len reaches it (tail role) */
    /* sentence starts seen first: draw number and byte offset */
    int64_t *start_draw, *start_off;
    int32_t nstarts;
    /* where this segment handed over: next segment and its start index */
    int32_t sync_seg, sync_start;
    int64_t end;
} segment;

/* Big buffers come straight from mmap with transparent huge pages asked
** for: comments are cut from random places in the pool, and with 4 KiB
** pages nearly every cut would also miss the TLB. */
static char *map_big(int64_t n)
{
    void *p = mmap(NULL, (size_t)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, (size_t)n, MADV_HUGEPAGE);
#endif
    return p;
}

static int64_t page_round(int64_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) page = 4096;
    return (n + page - 1) / page * page;
}

static void unmap_big(char *p, int64_t n)
{
    if (p) munmap(p, (size_t)page_round(n));
}

/* The finished pool: its bytes, a NUL, and room for the 16-byte copies. */
#define POOL_MAP_SIZE (RF_TPCH_POOL_SIZE + SENTENCE_SLACK)

void rf_tpch_pool_free(char *pool) { unmap_big(pool, POOL_MAP_SIZE); }

/* Room for one more sentence? A full segment just stops: the pieces are
** then joined and the rest is produced in order. */
static int full(const segment *s) { return s->cap - s->len < SENTENCE_SLACK; }

/* Phase one: record where the guessed sentences start. */
static void *record_starts(void *arg)
{
    segment *s = arg;
    for (int32_t i = 0; i < SYNC_STARTS && !full(s); i++) {
        s->start_draw[i] = s->cur.draws;
        s->start_off[i] = s->len;
        s->len = put_sentence(s->g, s->buf + s->len, &s->cur) - s->buf;
        s->nstarts = i + 1;
    }
    return NULL;
}

/* Phase two: run on until a sentence start meets one of a later segment's. */
static void *run_to_sync(void *arg)
{
    segment *s = arg;
    int32_t next = s->index + 1, k = 0;
    for (;;) {
        while (next < s->nseg && s->cur.draws >= s->all[next].first_draw) {
            const segment *n = &s->all[next];
            while (k < n->nstarts && n->start_draw[k] < s->cur.draws) k++;
            if (k < n->nstarts && n->start_draw[k] == s->cur.draws) {
                s->sync_seg = next;
                s->sync_start = k;
                s->end = s->len;
                return NULL;
            }
            if (k < n->nstarts) break; /* not yet: keep going */
            next++;                    /* missed it entirely: try the one after */
            k = 0;
        }
        if (s->len >= s->limit || full(s)) break;
        s->len = put_sentence(s->g, s->buf + s->len, &s->cur) - s->buf;
    }
    s->end = s->len;
    return NULL;
}

static int run_threads(segment *segs, int32_t from, int32_t n, void *(*fn)(void *))
{
    pthread_t tid[256];
    int32_t started = 0;
    int rc = 0;
    /* the calling thread takes the first segment itself */
    for (int32_t i = from + 1; i < n; i++) {
        if (pthread_create(&tid[i], NULL, fn, &segs[i])) {
            rc = -1;
            break;
        }
        started = i;
    }
    if (rc == 0) fn(&segs[from]);
    for (int32_t i = from + 1; i <= started; i++) pthread_join(tid[i], NULL);
    return rc;
}

static void free_segments(segment *segs, int32_t nseg)
{
    if (!segs) return;
    for (int32_t t = 0; t < nseg; t++) {
        free(segs[t].start_draw);
        free(segs[t].start_off);
    }
    free(segs);
}

char *rf_tpch_pool_build(const rf_tpch_dists *ds, int jobs, rf_status *st, rf_diags *d)
{
    static const rf_loc nowhere = {NULL, 0, 0};
    grammar *g = rf_malloc(sizeof *g);
    if (!g) {
        *st = RF_ENOMEM;
        rf_error(d, nowhere, "out of memory building the text pool");
        return NULL;
    }
    if (compile(ds, g)) {
        free(g);
        *st = RF_EINTERNAL;
        rf_error(d, nowhere, "the text grammar in dists.dss is not understood");
        return NULL;
    }
    int32_t nseg = jobs < 1 ? 1 : jobs > 256 ? 256 : jobs;
    /* slots: a share plus 2% and 1 MiB for the error of the estimate */
    int64_t share = RF_TPCH_POOL_SIZE / nseg;
    int64_t slot = nseg == 1 ? POOL_MAP_SIZE : share + share / 50 + ((int64_t)1 << 20);
    int64_t map_size = nseg * slot + SENTENCE_SLACK;
    if (map_size < POOL_MAP_SIZE) map_size = POOL_MAP_SIZE;
    char *pool = map_big(map_size);
    segment *segs = rf_calloc((size_t)nseg, sizeof *segs);
    if (!pool || !segs) goto oom;

    const int64_t seed = rf_tpch_streams[RF_TPCH_TEXT_POOL].seed;
    const double total_draws = (double)RF_TPCH_POOL_SIZE * DRAWS_PER_BYTE;
    for (int32_t t = 0; t < nseg; t++) {
        segment *s = &segs[t];
        s->g = g;
        s->all = segs;
        s->index = t;
        s->nseg = nseg;
        s->first_draw = (int64_t)(total_draws * t / nseg);
        s->cur.seed = rf_tpch_rng_skip(seed, s->first_draw);
        s->cur.draws = s->first_draw;
        s->sync_seg = -1;
        s->buf = pool + t * slot;
        s->cap = slot;
        /* as the tail, a segment produces what its estimated start leaves */
        int64_t guess = (int64_t)((double)s->first_draw / DRAWS_PER_BYTE);
        s->limit = RF_TPCH_POOL_SIZE - guess;
        if (t > 0) {
            s->limit += s->limit / 50 + (1 << 16);
            s->start_draw = rf_malloc(SYNC_STARTS * sizeof *s->start_draw);
            s->start_off = rf_malloc(SYNC_STARTS * sizeof *s->start_off);
            if (!s->start_draw || !s->start_off) goto oom;
        }
    }
    if (nseg > 1 && run_threads(segs, 1, nseg, record_starts)) goto nothreads;
    if (run_threads(segs, 0, nseg, run_to_sync)) goto nothreads;

    /* Join the pieces, following the hand-over points from segment 0. A
    ** piece never holds more than its slot and the chain only goes up, so
    ** each moves down, onto space already done with. */
    int64_t pos = segs[0].end;
    segment *s = &segs[0];
    while (pos < RF_TPCH_POOL_SIZE && s->sync_seg >= 0) {
        segment *n = &segs[s->sync_seg];
        int64_t from = n->start_off[s->sync_start];
        int64_t take = n->end - from;
        if (take > RF_TPCH_POOL_SIZE - pos) take = RF_TPCH_POOL_SIZE - pos;
        memmove(pool + pos, n->buf + from, (size_t)take);
        pos += take;
        s = n;
    }
    /* The last piece may fall short of the estimate: carry on in order. */
    cursor cur = s->cur;
    while (pos < RF_TPCH_POOL_SIZE) pos = put_sentence(g, pool + pos, &cur) - pool;
    pool[RF_TPCH_POOL_SIZE] = 0;
    /* keep just the pool, so that rf_tpch_pool_free knows the size */
    int64_t keep = page_round(POOL_MAP_SIZE);
    if (page_round(map_size) > keep) munmap(pool + keep, (size_t)(page_round(map_size) - keep));
    free_segments(segs, nseg);
    free(g);
    *st = RF_OK;
    return pool;

nothreads:
    *st = RF_EINTERNAL;
    rf_error(d, nowhere, "cannot start threads for the text pool");
    goto fail;
oom:
    *st = RF_ENOMEM;
    rf_error(d, nowhere, "out of memory building the text pool");
fail:
    free_segments(segs, nseg);
    unmap_big(pool, map_size);
    free(g);
    return NULL;
}
