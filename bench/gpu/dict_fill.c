/*
** bench/gpu/dict_fill.c: the host's side of the GPU dictionary copy
** (runtime/gpu/rt_gpu_str.c's rf_gpu_dict_sync), timed on the emulated
** device, for a string column of a redfox database (TPC-H's o_comment).
**
** Owns: nothing of the product; it times, for each thread count given:
**   intern   the column's rows into a fresh run dictionary (the load's
**            rf_rt_db_load_strings, as `redfox run` does from a database);
**   sync     rf_gpu_dict_sync of that dictionary into the emulator's
**            memory (second of two syncs: the destination already touched,
**            as the real device's pinned staging buffers are), the bytes
**            per second over the strings' bytes plus the u64 offsets, and
**            the CPU time of all threads (steadier on a shared machine);
**            the best of REPS syncs (-r, default 4; the first not
**            counted);
**   memcpy   one plain copy of as many bytes between two touched buffers
**            with the same threads: what a fill that only moves bytes
**            could reach on this host.
** The emulator's h2d_fill makes the bytes where the real device's staging
** buffers would get them, with the same threads, so sync's rate is the
** host's fill rate, the bound on the real copy where PCIe is faster.
**
** usage: dict_fill [-r REPS] DB TABLE COLUMN [THREADS...]   (threads: 1 2)
** e.g.   dict_fill /tmp/sf1db orders.tbl 8 1 2
*/
#include "rf_rt_data.h"
#include "rf_rt_input.h"
#include "rt_gpu_internal.h"
#include "rf_sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CPU seconds of the process (all its threads): less disturbed than the
** wall clock by other processes on a shared machine. */
static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct mc {
    char *dst;
    const char *src;
} mc;

static void mc_part(void *ctx, int64_t b, int64_t e, int w)
{
    const mc *m = ctx;
    (void)w;
    memcpy(m->dst + b, m->src + b, (size_t)(e - b));
}

static int bench(const rf_db *db, const rf_db_table *t, int32_t c, int threads, int reps)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_rt_dict *dict = rf_rt_dict_new();
    uint32_t *codes = NULL;
    double t0 = rf_now(), ct0 = cpu_now();
    if (!dict || rf_rt_db_load_strings(db, t, c, NULL, dict, threads, &codes, &d)) {
        fprintf(stderr, "cannot intern the column\n");
        return 1;
    }
    double intern_s = rf_now() - t0, intern_cpu = cpu_now() - ct0;
    free(codes);
    gdev g;
    gpool *pool = NULL;
    rf_cpu_pool *cpu = NULL;
    if (rf_gpu_emu_open(&g, &d) || rf_gpool_new(&g, &pool) || rf_cpu_pool_new(threads, &cpu)) {
        fprintf(stderr, "cannot open the emulated device\n");
        return 1;
    }
    g.pool = pool;
    g.cpu = threads > 1 ? cpu : NULL;
    gstr s;
    memset(&s, 0, sizeof s);
    s.g = &g;
    s.pool = pool;
    s.dict = dict;
    s.threads = threads;
    double best = 1e30, cbest = 1e30;
    uint64_t bytes = 0;
    for (int rep = 0; rep < reps; rep++) {
        rf_gpu_dict_free(&s);
        s.copied = 0;
        double a = rf_now(), ca = cpu_now();
        if (rf_gpu_dict_sync(&s, 0)) {
            fprintf(stderr, "sync failed\n");
            return 1;
        }
        double b = rf_now() - a, cb = cpu_now() - ca;
        if (rep && b < best) best = b; /* (the first touches the destination) */
        if (rep && cb < cbest) cbest = cb;
        bytes = s.copied;
    }
    /* a plain copy of as many bytes, touched buffers, the same threads */
    mc m = {malloc((size_t)bytes), malloc((size_t)bytes)};
    if (!m.dst || !m.src) return 1;
    memset(m.dst, 1, (size_t)bytes);
    memset((char *)m.src, 2, (size_t)bytes);
    double mbest = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double a = rf_now();
        if (threads > 1)
            rf_cpu_parallel_for(cpu, (int64_t)bytes, (int64_t)1 << 20, mc_part, &m);
        else
            mc_part(&m, 0, (int64_t)bytes, 0);
        double b = rf_now() - a;
        if (b < mbest) mbest = b;
    }
    printf("threads %d: %lld strings, %.1f MB: intern %.1f ms (CPU %.1f ms); ", threads,
           (long long)rf_rt_dict_count(dict), (double)bytes / 1e6, intern_s * 1e3, intern_cpu * 1e3);
    printf("sync %.1f ms, %.2f GB/s (CPU %.1f ms); memcpy %.1f ms, %.2f GB/s\n", best * 1e3,
           (double)bytes / best / 1e9, cbest * 1e3, mbest * 1e3, (double)bytes / mbest / 1e9);
    free(m.dst);
    free((char *)m.src);
    rf_gpu_dict_free(&s);
    rf_gpool_free(pool);
    g.ops->close(&g);
    rf_cpu_pool_free(cpu);
    rf_rt_dict_free(dict);
    rf_diags_free(&d);
    return 0;
}

int main(int argc, char **argv)
{
    int reps = 4;
    if (argc > 2 && !strcmp(argv[1], "-r")) {
        reps = atoi(argv[2]);
        argc -= 2;
        argv += 2;
    }
    if (argc < 4 || reps < 2) {
        fprintf(stderr, "usage: dict_fill [-r REPS (2 or more)] DB TABLE COLUMN [THREADS...]\n");
        return 2;
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_db *db = NULL;
    if (rf_db_open(argv[1], &db, &d)) {
        rf_diags_print(&d, stderr);
        return 1;
    }
    const rf_db_table *t = rf_db_find_table(db, argv[2]);
    int32_t c = (int32_t)atoi(argv[3]);
    if (!t || c < 0 || c >= t->ncols || t->cols[c].type != RF_TYPE_STRING) {
        fprintf(stderr, "%s: no string column %s in table %s\n", argv[1], argv[3], argv[2]);
        return 2;
    }
    int bad = 0;
    if (argc == 4) bad |= bench(db, t, c, 1, reps) || bench(db, t, c, 2, reps);
    for (int i = 4; i < argc && !bad; i++) bad |= bench(db, t, c, atoi(argv[i]), reps);
    rf_db_close(db);
    rf_diags_free(&d);
    return bad;
}
