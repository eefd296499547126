/*
** tpch/gen/tpch_dists.c: reads the distributions dbgen draws words from.
**
** Owns: parsing of the copy of dists.dss compiled into the library (see
** embed_dists.cmake), with dbgen's reading rules, into rf_tpch_dists, and
** the stream jump-ahead helper.
*/
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tpch_internal.h"

extern const unsigned char rf_tpch_dists_dss[];
extern const size_t rf_tpch_dists_dss_len;

int64_t rf_tpch_rng_mult(int64_t n)
{
    int64_t r = 1, m = RF_TPCH_RNG_A;
    while (n > 0) {
        if (n & 1) r = rf_tpch_mulmod(r, m);
        m = rf_tpch_mulmod(m, m);
        n >>= 1;
    }
    return r;
}

/* One distribution while it is being read. */
typedef struct raw_dist {
    char name[64];
    int32_t count, cap;
    char **text;
    int32_t *weight;
} raw_dist;

static int raw_push(raw_dist *r, const char *text, size_t n, int32_t w)
{
    if (r->count == r->cap) {
        int32_t ncap = r->cap ? r->cap * 2 : 32;
        char **t = rf_realloc(r->text, (size_t)ncap * sizeof *t);
        if (!t) return -1;
        r->text = t;
        int32_t *wt = rf_realloc(r->weight, (size_t)ncap * sizeof *wt);
        if (!wt) return -1;
        r->weight = wt;
        r->cap = ncap;
    }
    r->text[r->count] = rf_strndup(text, n);
    if (!r->text[r->count]) return -1;
    r->weight[r->count++] = w;
    return 0;
}

static void raw_free(raw_dist *r, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < r[i].count; j++) free(r[i].text[j]);
        free(r[i].text);
        free(r[i].weight);
    }
    free(r);
}

/* Converts one raw distribution into the lookup form. */
static int finish(rf_tpch_dists *ds, rf_tpch_dist *out, const raw_dist *r)
{
    rf_arena *a = &ds->arena;
    out->count = r->count;
    out->text = rf_arena_alloc(a, (size_t)r->count * sizeof *out->text);
    out->len = rf_arena_alloc(a, (size_t)r->count * sizeof *out->len);
    out->cum = rf_arena_alloc(a, (size_t)r->count * sizeof *out->cum);
    if (!out->text || !out->len || !out->cum) return -1;
    int32_t sum = 0;
    for (int32_t i = 0; i < r->count; i++) {
        /* Zero padding so that words can be copied in whole 16-byte moves
        ** (the text pool, the rows) without reading past the allocation. */
        size_t n = strlen(r->text[i]);
        char *t = rf_arena_alloc(a, n + 17);
        if (!t) return -1;
        memcpy(t, r->text[i], n);
        out->text[i] = t;
        out->len[i] = (int32_t)n;
        sum += r->weight[i];
        out->cum[i] = sum; /* dbgen keeps weights cumulative */
    }
    /* dbgen draws from 1 to the last cumulative weight */
    out->total = r->count ? out->cum[r->count - 1] : 0;
    if (out->total < 1) return 0; /* nothing to pick from */
    out->lut = rf_arena_alloc(a, ((size_t)out->total + 1) * sizeof *out->lut);
    if (!out->lut) return -1;
    /* dbgen walks the list from the top until the cumulative weight reaches
    ** the draw (the nations' weights are not monotonic, hence no shortcut) */
    for (int32_t j = 1; j <= out->total; j++) {
        int32_t i = 0;
        while (i < r->count - 1 && out->cum[i] < j) i++;
        out->lut[j] = i;
    }
    return 0;
}

rf_status rf_tpch_dists_load(rf_tpch_dists *ds, rf_diags *d)
{
    static const rf_loc here = {"dists.dss", 0, 0};
    memset(ds, 0, sizeof *ds);
    rf_arena_init(&ds->arena);

    int32_t nraw = 0, capraw = 64;
    raw_dist *raw = rf_calloc((size_t)capraw, sizeof *raw);
    if (!raw) return RF_ENOMEM;
    raw_dist *cur = NULL;
    rf_status st = RF_OK;

    const char *p = (const char *)rf_tpch_dists_dss, *end = p + rf_tpch_dists_dss_len;
    int32_t lineno = 0;
    while (p < end && st == RF_OK) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        char line[512];
        size_t n = (size_t)(le - p);
        if (n >= sizeof line) n = sizeof line - 1;
        memcpy(line, p, n);
        line[n] = 0;
        p = nl ? nl + 1 : end;
        lineno++;
        char *c;
        if ((c = strchr(line, '#'))) *c = 0;
        if ((c = strchr(line, '\r'))) *c = 0;
        if (!line[0]) continue;

        if (!cur) {
            char tok[64], name[64];
            if (sscanf(line, "%63s %63s", tok, name) != 2 || strncasecmp(tok, "begin", 5)) continue;
            if (nraw == capraw) {
                st = RF_EINTERNAL;
                break;
            }
            cur = &raw[nraw++];
            strcpy(cur->name, name);
            continue;
        }
        if (!strncasecmp(line, "end", 3)) {
            cur = NULL;
            continue;
        }
        char *bar = strchr(line, '|');
        if (!bar) {
            rf_loc l = here;
            l.line = lineno;
            rf_error(d, l, "malformed distribution entry");
            st = RF_EINTERNAL;
            break;
        }
        int32_t w = (int32_t)strtol(bar + 1, NULL, 10);
        if (!strncasecmp(line, "count", 5) && bar == line + 5) continue;
        if (raw_push(cur, line, (size_t)(bar - line), w)) st = RF_ENOMEM;
    }

    static const struct {
        const char *name;
        size_t off;
    } want[] = {
        {"p_cntr", offsetof(rf_tpch_dists, p_cntr)},
        {"instruct", offsetof(rf_tpch_dists, instruct)},
        {"msegmnt", offsetof(rf_tpch_dists, msegmnt)},
        {"nations", offsetof(rf_tpch_dists, nations)},
        {"regions", offsetof(rf_tpch_dists, regions)},
        {"o_oprio", offsetof(rf_tpch_dists, o_oprio)},
        {"rflag", offsetof(rf_tpch_dists, rflag)},
        {"smode", offsetof(rf_tpch_dists, smode)},
        {"p_types", offsetof(rf_tpch_dists, p_types)},
        {"colors", offsetof(rf_tpch_dists, colors)},
        {"nouns", offsetof(rf_tpch_dists, nouns)},
        {"verbs", offsetof(rf_tpch_dists, verbs)},
        {"adverbs", offsetof(rf_tpch_dists, adverbs)},
        {"articles", offsetof(rf_tpch_dists, articles)},
        {"prepositions", offsetof(rf_tpch_dists, prepositions)},
        {"auxillaries", offsetof(rf_tpch_dists, auxillaries)},
        {"terminators", offsetof(rf_tpch_dists, terminators)},
        {"adjectives", offsetof(rf_tpch_dists, adjectives)},
        {"grammar", offsetof(rf_tpch_dists, grammar)},
        {"np", offsetof(rf_tpch_dists, np)},
        {"vp", offsetof(rf_tpch_dists, vp)},
    };
    for (size_t w = 0; st == RF_OK && w < sizeof want / sizeof want[0]; w++) {
        const raw_dist *r = NULL;
        for (int32_t i = 0; i < nraw; i++)
            if (!strcasecmp(raw[i].name, want[w].name)) r = &raw[i];
        if (!r || r->count == 0) {
            rf_error(d, here, "distribution '%s' is missing", want[w].name);
            st = RF_EINTERNAL;
            break;
        }
        if (finish(ds, (rf_tpch_dist *)((char *)ds + want[w].off), r)) st = RF_ENOMEM;
    }
    /* the tables index these lists directly, and a part name's shuffle
    ** must fit in the 92 draws its stream reserves per row */
    if (st == RF_OK && (ds->nations.count != 25 || ds->regions.count != 5 || ds->colors.count < 5 ||
                        ds->colors.count > rf_tpch_streams[RF_TPCH_P_NAME].per_row)) {
        rf_error(d, here, "distributions nations, regions or colors have the wrong size");
        st = RF_EINTERNAL;
    }
    raw_free(raw, nraw);
    if (st == RF_ENOMEM) rf_error(d, here, "out of memory reading the distributions");
    else if (st == RF_EINTERNAL && d->nerrors == 0)
        rf_error(d, here, "too many distributions");
    if (st != RF_OK) rf_tpch_dists_free(ds);
    return st;
}

void rf_tpch_dists_free(rf_tpch_dists *ds) { rf_arena_free(&ds->arena); }
