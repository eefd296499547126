/*
** runtime/rt_tuning.c: the table of tuning settings and its parser.
**
** Owns: each setting's name, kind (a count of rows, a switch, a size in
** MiB, a size in bytes with a K/M/G/T suffix, a path), default and meaning (the one place a
** setting is defined: rf_rt_tuning's fields are reached through it), the
** parser of `name=value` and the --help text. See rf_rt_tuning.h.
*/
#include "rf_rt_tuning.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ROWS_AUTO: a count of rows (1 or more), off, or auto (0: the user of the
** setting decides, as its help says) */
typedef enum { ROWS, ROWS_AUTO, SWITCH, MIB, PATH, SECONDS, BYTES } kind;

typedef struct setting {
    const char *name;
    kind k;
    size_t off;
    int64_t dflt;
    const char *help;
} setting;

/* Rows thresholds: a count, or "off" (never). Measurements behind the
** defaults: runtime/gpu/README.md and docs/BENCHMARKS.md. */
static const setting settings[] = {
    {"gpu_runs_min", ROWS, offsetof(rf_rt_tuning, gpu_runs_min), 65536,
     "rows from which unique, difference and group-by on the GPU first walk the runs of an "
     "ordered first column instead of hashing (a count, or off)"},
    {"gpu_ordered_min", ROWS, offsetof(rf_rt_tuning, gpu_ordered_min), 65536,
     "right rows from which a GPU join whose build side has one key column checks whether "
     "it ascends and then skips the sort (a count, or off)"},
    {"cpu_part_pairs", ROWS_AUTO, offsetof(rf_rt_tuning, cpu_part_pairs), 0,
     "the most join pairs a recursion's round of two joins or more holds at once on the CPU (auto: "
     "65536 a thread, 131072 on 2 threads; a count; or off: a join's pairs in one part): its "
     "joins' pairs are mapped, deduplicated and subtracted from the known rows part by part "
     "(--no-fuse: every kernel whole). A round of two joins or "
     "more runs in parts, its rules' negations and the later joins of a rule of three atoms or more "
     "included (a round of one join, a linear recursion of two atoms: see cpu_part_linear; "
     "--profile counts the rounds in parts)"},
    {"cpu_part_linear", ROWS, offsetof(rf_rt_tuning, cpu_part_linear), 16777216,
     "join pairs from which a recursion's round of one join (a linear recursion of two atoms) also "
     "runs in parts of cpu_part_pairs on the CPU, where its pairs are at least four times a bound on "
     "the rows they can map to (a count, or off: such a round holds its pairs at once, which is "
     "faster where they fit)"},
    {"hugepages", SWITCH, offsetof(rf_rt_tuning, hugepages), 1,
     "advise transparent huge pages for big host columns (on or off; off where huge-page "
     "compaction stalls the system)"},
    {"gpu_pool_mb", MIB, offsetof(rf_rt_tuning, gpu_pool_mb), 0,
     "the GPU memory pool's first arena in MiB (auto: a quarter of the GPU memory free when the "
     "run starts, at least 1 GiB; later arenas double)"},
    {"gpu_memory", BYTES, offsetof(rf_rt_tuning, gpu_memory), 0,
     "the most GPU memory a run may use, in bytes with an optional K, M, G or T suffix (powers "
     "of 1024; off: what the GPU has; also --gpu-memory N); values the current kernel does not "
     "read move to host memory and back while the cap is reached"},
    {"gpu_pool_exact", SWITCH, offsetof(rf_rt_tuning, gpu_pool_exact), 0,
     "one GPU allocation per buffer instead of the pool's arenas, so that memory checkers "
     "(compute-sanitizer, ASan in the emulator) see each buffer's bounds; for debugging, "
     "slower (on or off)"},
    {"gpu_trace", SWITCH, offsetof(rf_rt_tuning, gpu_trace), 0,
     "print every device operation of a GPU run on stderr: its start (ms into the run), "
     "host time, what (launch, copy, clear, wait, CUB call, kernel lookup) and its size "
     "(on or off)"},
    {"cache_dir", PATH, offsetof(rf_rt_tuning, cache_dir), 0,
     "where the NVRTC, GPU JIT and emulator caches live (default $XDG_CACHE_HOME/redfox, "
     "else ~/.cache/redfox; off or empty: no cache, ./off a folder of that name; also "
     "--cache-dir DIR, --no-cache)"},
    {"block_skip", SWITCH, offsetof(rf_rt_tuning, block_skip), 1,
     "from a database, read only the blocks whose min/max a constant range filter can accept "
     "(on or off; off reads every block, for comparison)"},
    {"rank_timeout_s", SECONDS, offsetof(rf_rt_tuning, rank_timeout_s), 300,
     "with several MPI ranks: seconds a rank waits for the others in an exchange before it stops "
     "all ranks with an error naming the ranks that did not answer (died or hang, or still busy: unlike "
     "the other settings, a limit, which stops a run whose ranks work longer than it between "
     "exchanges), and for MPI's own start (a number of seconds, 1 or more, or off: no limit)"},
    {"rank_broadcast_bytes", BYTES, offsetof(rf_rt_tuning, rank_broadcast_bytes), INT64_C(256) << 20,
     "with several MPI ranks: a join whose sides would move broadcasts a side instead when its "
     "bytes (all ranks' rows; strings the ranks do not share as codes at their length) are at "
     "most this and the broadcast sends fewer bytes than the moves it replaces (a size in bytes "
     "with an optional K, M, G or T suffix, or off)"},
    {"rank_plain_bytes", BYTES, offsetof(rf_rt_tuning, rank_plain_bytes), INT64_C(64) << 20,
     "with several MPI ranks, from a database: a plain (not dictionary-coded) string column whose "
     "strings take at most this many bytes is read whole by every rank before the run, so that "
     "rows moving between ranks carry its strings as codes the ranks share, not as bytes each "
     "receiver looks up again (a size in bytes with an optional K, M, G or T suffix, or off)"},
};

void rf_rt_tuning_init(rf_rt_tuning *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        char *at = (char *)t + settings[i].off;
        if (settings[i].k != SWITCH && settings[i].k != PATH) *(int64_t *)at = settings[i].dflt;
        else if (settings[i].k == PATH) *(const char **)at = NULL;
        else *(int *)at = (int)settings[i].dflt;
    }
}

const rf_rt_tuning *rf_rt_tuning_default(void)
{
    static rf_rt_tuning d;
    static int made;
    if (!made) {
        rf_rt_tuning_init(&d);
        made = 1;
    }
    return &d;
}

/* A size in bytes (rf_parse_bytes: digits and an optional K, M, G or T);
** "off" is 0. */
static rf_status parse_bytes(const char *name, const char *v, int64_t *at, char *why, size_t n)
{
    if (!strcmp(v, "off")) return *at = 0, RF_OK;
    if (!rf_parse_bytes(v, at)) {
        snprintf(why, n, "%s takes a size in bytes above 0 with an optional K, M, G or T suffix (like 512M), or off, "
                 "not '%s'", name, v);
        return RF_EUSAGE;
    }
    return RF_OK;
}

int64_t rf_rt_tuning_part_pairs(const rf_rt_tuning *t, int threads)
{
    if (!t) t = rf_rt_tuning_default();
    if (t->cpu_part_pairs > 0) return t->cpu_part_pairs;
    return RF_RT_PART_PAIRS_PER_THREAD * (threads > 1 ? threads : 1);
}

const char *rf_rt_tuning_name(int64_t i)
{
    return i >= 0 && (size_t)i < sizeof settings / sizeof settings[0] ? settings[i].name : NULL;
}

rf_status rf_rt_tuning_set(rf_rt_tuning *t, const char *assign, char *why, size_t n)
{
    const char *eq = strchr(assign, '=');
    if (!eq || eq == assign) {
        snprintf(why, n, "'%s': name=value expected", assign);
        return RF_EUSAGE;
    }
    size_t len = (size_t)(eq - assign);
    const char *v = eq + 1;
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const setting *s = &settings[i];
        if (strlen(s->name) != len || strncmp(s->name, assign, len)) continue;
        char *at = (char *)t + s->off;
        if (s->k == SWITCH) {
            if (!strcmp(v, "on") || !strcmp(v, "1")) *(int *)at = 1;
            else if (!strcmp(v, "off") || !strcmp(v, "0")) *(int *)at = 0;
            else {
                snprintf(why, n, "%s takes on or off, not '%s'", s->name, v);
                return RF_EUSAGE;
            }
            return RF_OK;
        }
        if (s->k == PATH) { /* off, as every other setting spells none (a folder of that name: ./off) */
            *(const char **)at = !strcmp(v, "off") ? "" : v;
            return RF_OK;
        }
        if (s->k == BYTES) return parse_bytes(s->name, v, (int64_t *)at, why, n);
        if (!strcmp(v, s->k == MIB ? "auto" : "off")) {
            *(int64_t *)at = s->k == MIB ? 0 : INT64_MAX;
            return RF_OK;
        }
        if (s->k == ROWS_AUTO && !strcmp(v, "auto")) {
            *(int64_t *)at = 0;
            return RF_OK;
        }
        char *end = NULL;
        errno = 0;
        long long x = *v >= '0' && *v <= '9' ? strtoll(v, &end, 10) : -1;
        /* (MiB: up to 2^40, so that the bytes fit in 64 bits; a number too
        ** big to read is refused, not taken as the largest, which is off; 0
        ** seconds is no wait at all, not the absence of a limit that the
        ** runtime's 0 means: a limit is 1 second or more, or off) */
        if (x < 0 || errno == ERANGE || *end || (s->k == MIB && (x == 0 || x > (1LL << 40))) ||
            ((s->k == SECONDS || s->k == ROWS_AUTO) && x == 0)) {
            snprintf(why, n, s->k == MIB ? "%s takes a size in MiB (1 or more) or auto, not '%s'"
                                         : s->k == SECONDS ? "%s takes a number of seconds (1 or more) or off, not '%s'"
                                         : s->k == ROWS_AUTO ? "%s takes a count of rows (1 or more), auto or off, not '%s'"
                                         : "%s takes a count of rows or off, not '%s'",
                     s->name, v);
            return RF_EUSAGE;
        }
        *(int64_t *)at = (int64_t)x;
        return RF_OK;
    }
    snprintf(why, n, "unknown setting '%.*s'", (int)len, assign);
    return RF_EUSAGE;
}

void rf_rt_tuning_help(rf_buf *out, const char *indent)
{
    for (size_t i = 0; i < sizeof settings / sizeof settings[0]; i++) {
        const setting *s = &settings[i];
        char d[32];
        if (s->k == SWITCH) snprintf(d, sizeof d, "%s", s->dflt ? "on" : "off");
        else if (s->k == MIB || (s->k == ROWS_AUTO && !s->dflt)) snprintf(d, sizeof d, "auto");
        else if (s->k == BYTES && !s->dflt) snprintf(d, sizeof d, "off");
        else if (s->k == BYTES) { /* in the biggest unit that divides it, as the parser reads it */
            int64_t x = s->dflt;
            const char *u = "";
            if (!(x % (INT64_C(1) << 30))) x >>= 30, u = "G";
            else if (!(x % (INT64_C(1) << 20))) x >>= 20, u = "M";
            else if (!(x % 1024)) x >>= 10, u = "K";
            snprintf(d, sizeof d, "%lld%s", (long long)x, u);
        }
        else if (s->k == PATH) snprintf(d, sizeof d, "the user's cache");
        else snprintf(d, sizeof d, "%lld", (long long)s->dflt);
        rf_buf_printf(out, "%s%s (default %s): ", indent, s->name, d);
        /* the meaning, wrapped at 78 columns, continued under the name */
        const char *h = s->help;
        int col = (int)(strlen(indent) + strlen(s->name) + strlen(d) + 12), first = 1;
        while (*h) {
            const char *sp = strchr(h, ' ');
            int w = sp ? (int)(sp - h) : (int)strlen(h);
            if (!first && col + 1 + w > 78) {
                rf_buf_printf(out, "\n%s    ", indent);
                col = (int)strlen(indent) + 4;
            } else if (!first) {
                rf_buf_putc(out, ' ');
                col++;
            }
            rf_buf_append(out, h, w);
            col += w;
            first = 0;
            h += w;
            while (*h == ' ') h++;
        }
        rf_buf_putc(out, '\n');
    }
}
