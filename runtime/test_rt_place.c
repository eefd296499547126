/*
** runtime/test_rt_place.c: the placement model (rt_place.c) on synthetic,
** deterministic records: the fits, the model file (round trip, damage,
** versions, the bound, killed writers' temporaries swept, an append cut
** short by the disk cut back), the predictions
** and the choices.
**
** usage: test_rt_place TMPDIR
*/
#include "rf_rt_place.h"

#include "rf_gpu_codegen.h" /* rf_gpu_cache_tmp_name */
#include "rf_sys.h"

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fails;
#define CHECK(c)                                                                                                       \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                                               \
            fails++;                                                                                                   \
        }                                                                                                              \
    } while (0)

static int near(double a, double b) { return fabs(a - b) <= 1e-9 + 1e-6 * fabs(b); }

static void test_fits(void)
{
    rf_rt_place_fit f;
    double x[4] = {1, 2, 3, 4}, y[4];
    for (int i = 0; i < 4; i++) y[i] = 2 + 3 * x[i];
    CHECK(rf_rt_place_fit_lsq(x, NULL, y, 4, &f) && near(f.c[0], 2) && near(f.c[1], 3) && f.c[2] == 0);
    /* one point: proportional */
    double x1 = 1e6, y1 = 0.5;
    CHECK(rf_rt_place_fit_lsq(&x1, NULL, &y1, 1, &f) && f.c[0] == 0 && near(f.c[1], 0.5e-6));
    CHECK(near(rf_rt_place_fit_eval(&f, 2e6, 0), 1.0));
    /* falling times: no negative slope, the mean instead */
    double yd[4] = {4, 3, 2, 1};
    CHECK(rf_rt_place_fit_lsq(x, NULL, yd, 4, &f) && f.c[1] == 0 && f.c[2] == 0 && near(f.c[0], 2.5));
    /* two features at realistic scales */
    double r[5] = {1e6, 5e6, 2e7, 3e7, 1e8}, b[5] = {8e6, 1e8, 4e7, 9e8, 2e8}, t[5];
    for (int i = 0; i < 5; i++) t[i] = 0.01 + 1e-9 * r[i] + 2e-10 * b[i];
    CHECK(rf_rt_place_fit_lsq(r, b, t, 5, &f) && near(f.c[0], 0.01) && near(f.c[1], 1e-9) && near(f.c[2], 2e-10));
    CHECK(!rf_rt_place_fit_lsq(r, b, t, 0, &f));
}

static rf_rt_place_rec run_rec(uint64_t prog, int gpu, int fresh, double rows, double bytes, double start,
                               double copy, double secs)
{
    rf_rt_place_rec r;
    memset(&r, 0, sizeof r);
    r.type = 'r';
    r.prog = prog;
    r.gpu = gpu;
    r.fresh = fresh;
    r.rows = rows;
    r.bytes = bytes;
    r.kernels = 3;
    r.read_s = -1; /* not known (read_rec sets one) */
    r.start_s = start;
    r.copy_s = copy;
    r.seconds = secs;
    return r;
}

/* A run record with its reading (-1: not known). */
static rf_rt_place_rec read_rec(uint64_t prog, int gpu, int fresh, double read, double start, double copy, double secs)
{
    rf_rt_place_rec r = run_rec(prog, gpu, fresh, 1e6, 1e8, start, copy, secs);
    r.read_s = read;
    return r;
}

static rf_rt_place_rec kern_rec(int gpu, const char *kind, double rows, double bytes, double secs)
{
    rf_rt_place_rec r;
    memset(&r, 0, sizeof r);
    r.type = 'k';
    r.gpu = gpu;
    snprintf(r.kind, sizeof r.kind, "%s", kind);
    r.rows = rows;
    r.bytes = bytes;
    r.seconds = secs;
    return r;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_file(const char *tmp)
{
    char *path = rf_sprintf("%s/place/model.txt", tmp);
    remove(path);
    rf_diags d;
    rf_diags_init(&d);
    rf_rt_place_rec recs[2] = {run_rec(0xabcdef0123456789ULL, 1, 1, 1e6, 8e6, 0.31, 0.002, 0.0125),
                               kern_rec(0, "join_index", 12345, 98765, 0.5)};
    CHECK(!rf_rt_place_append(path, recs, 2, &d));
    rf_rt_place_model m;
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 2 && d.count == 0);
    if (m.n == 2) {
        CHECK(m.recs[0].type == 'r' && m.recs[0].prog == 0xabcdef0123456789ULL && m.recs[0].gpu == 1 &&
              m.recs[0].fresh == 1 && near(m.recs[0].rows, 1e6) && near(m.recs[0].start_s, 0.31) &&
              near(m.recs[0].seconds, 0.0125) && m.recs[0].kernels == 3);
        CHECK(m.recs[1].type == 'k' && !m.recs[1].gpu && !strcmp(m.recs[1].kind, "join_index") &&
              near(m.recs[1].bytes, 98765) && near(m.recs[1].seconds, 0.5));
    }
    rf_rt_place_model_free(&m);
    /* appended: the old records stay */
    CHECK(!rf_rt_place_append(path, recs, 1, &d));
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 3);
    rf_rt_place_model_free(&m);
    /* host records: what a look for the GPU found */
    write_text(path, "redfox placement model 1\nh node-1 none -\nh node-2 gpu NVIDIA_H100_80GB_HBM3\n");
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 2 && d.count == 0);
    if (m.n == 2) {
        CHECK(m.recs[0].type == 'h' && !strcmp(m.recs[0].host, "node-1") && m.recs[0].gpu == 0);
        CHECK(m.recs[1].type == 'h' && m.recs[1].gpu == 1 && !strcmp(m.recs[1].kind, "NVIDIA_H100_80GB_HBM3"));
        rf_buf b;
        rf_buf_init(&b);
        CHECK(!rf_rt_place_format(&m, &b) && b.data &&
              !strcmp(b.data, "redfox placement model 2\nh node-1 none -\nh node-2 gpu NVIDIA_H100_80GB_HBM3\n"));
        rf_buf_free(&b);
    }
    rf_rt_place_model_free(&m);
    char kind[24], host[64];
    rf_rt_place_gpu_kind("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79 GiB, driver 12.8)", kind);
    CHECK(!strcmp(kind, "NVIDIA_H100_80GB_HBM3"));
    rf_rt_place_gpu_kind("", kind);
    CHECK(!strcmp(kind, "-"));
    rf_rt_place_host(host);
    CHECK(host[0] && !strchr(host, ' ') && strlen(host) < 64);
    /* the bounds themselves are measurements */
    write_text(path, "redfox placement model 1\nk cpu map 18446744073709551616 18446744073709551616 1e9\n"
                     "r 00000000000000ab gpu 1 0 0 13 1e9 1e9 1e9\n");
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 2 && d.count == 0);
    rf_rt_place_model_free(&m);
    /* damage of every kind: ignored with a warning naming the file, empty */
    const char *bad[] = {
        "redfox placement model 1\nh node-1 maybe -\n",
        "redfox placement model 1\nh node-1 gpu\n",
        "redfox placement model 1\nh node-1 gpu a b\n",
        "redfox placement model 1\nr 00000000000000ab cpu 0 1 2 3 0 0 0.1\nr zz cpu 0 1 2 3 0 0 0.1\n",
        "redfox placement model 99\n",
        "redfox placement model 1\nk gpu map 1 2 -3\n",
        "redfox placement model 1\nk gpu map 1 2 nan\n",
        "redfox placement model 1\nk tpu map 1 2 3\n",
        "redfox placement model 1\nk gpu map 1 2 3 4\n",
        /* numbers no measurement has: a time past 10^9 s, a count past 2^64 */
        "redfox placement model 1\nr 00000000000000ab cpu 0 5 40 13 0 0 1e308\n",
        "redfox placement model 1\nr 00000000000000ab gpu 1 5 40 13 2e9 0 0.1\n",
        "redfox placement model 1\nr 00000000000000ab gpu 1 5 40 13 0 1e300 0.1\n",
        "redfox placement model 1\nk cpu map 1e300 2 3\n",
        "redfox placement model 1\nk cpu map 1 2e19 3\n",
        /* a start state past 2 (held) */
        "redfox placement model 2\nr 00000000000000ab gpu 3 5 40 13 0.1 0 0.1\n",
        "redfox placement model 2\nr 00000000000000ab gpu 12 5 40 13 0.1 0 0.1\n",
        "redfox placement model 3\n",
        "\x01\x02garbage",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i]);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 0 && d.count == 1 && d.items[0].sev == RF_SEV_WARNING &&
              d.items[0].loc.file && strstr(d.items[0].loc.file, "model.txt"));
        rf_rt_place_model_free(&m);
    }
    /* a damaged file is written anew by the next append */
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(!rf_rt_place_append(path, recs, 2, &d));
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 2 && d.count == 0);
    rf_rt_place_model_free(&m);
    /* a line damaged in the middle: an append does not parse the file (it
    ** adds its lines), the next read finds it, and a reset starts it anew */
    write_text(path, "redfox placement model 2\nk gpu map 1 2 zz\n");
    CHECK(!rf_rt_place_append(path, recs, 2, &d));
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 0 && d.count == 1 && d.items[0].loc.line == 2);
    rf_rt_place_model_free(&m);
    CHECK(!rf_rt_place_reset(path));
    CHECK(!rf_rt_place_append(path, recs, 2, &d));
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 2 && d.count == 0);
    rf_rt_place_model_free(&m);
    /* a last line without its newline: another run's append still being
    ** written (a reader sees a write's first page before the rest), or a
    ** file cut short. Not read and no damage: the records before it stay
    ** (they were all thrown away, with a warning, when a few dozen runs
    ** appended at once), for a read and for a choice's (model.bin made of
    ** the whole lines only: the line once finished is read as a record) */
    write_text(path, "redfox placement model 1\nk gpu map 1 2 3\nk cpu ma");
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 1 && d.count == 0);
    rf_rt_place_model_free(&m);
    char *bin = rf_sprintf("%s", path);
    if (bin) strcpy(bin + strlen(bin) - 4, ".bin");
    if (bin) unlink(bin);
    CHECK(!rf_rt_place_load(path, &m, &d) && m.n == 1 && d.count == 0);
    rf_rt_place_model_free(&m);
    struct stat bs;
    CHECK(bin && stat(bin, &bs) == 0); /* the cache of the whole lines */
    FILE *f = fopen(path, "a");
    CHECK(f && fputs("p 4 5 6\n", f) >= 0 && fclose(f) == 0);
    CHECK(!rf_rt_place_load(path, &m, &d) && m.n == 2 && d.count == 0 && m.recs[1].rows == 4 && !m.recs[1].gpu);
    rf_rt_place_model_free(&m);
    free(bin);
    /* an append finding one writes the file anew without it */
    write_text(path, "redfox placement model 1\nk gpu map 1 2 3");
    CHECK(!rf_rt_place_append(path, recs, 1, &d));
    CHECK(d.count == 0);
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 1 && d.count == 0 && m.recs[0].type == 'r');
    rf_rt_place_model_free(&m);
    /* no newline at all: no version line, damage */
    write_text(path, "redfox placement model 1");
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 0 && d.count == 1 && d.items[0].loc.line == 1);
    rf_rt_place_model_free(&m);
    rf_diags_free(&d);
    rf_diags_init(&d);
    /* bounded: the newest records stay */
    int64_t many = RF_RT_PLACE_MAX_RECORDS + 100;
    rf_rt_place_rec *lots = calloc((size_t)many, sizeof *lots);
    for (int64_t i = 0; lots && i < many; i++) lots[i] = run_rec((uint64_t)i, 0, 0, (double)i, 0, 0, 0, 1);
    CHECK(lots && !rf_rt_place_append(path, lots, many, &d));
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == RF_RT_PLACE_MAX_RECORDS &&
          m.recs[m.n - 1].prog == (uint64_t)(many - 1));
    rf_rt_place_model_free(&m);
    free(lots);
    rf_diags_free(&d);
    free(path);
}

/* A query of one program of one map kernel over rows and bytes of inputs. */
static rf_rt_place_query map_query(uint64_t prog, int threads, double rows, double bytes)
{
    static const char *kinds[1] = {"map"};
    rf_rt_place_query q;
    memset(&q, 0, sizeof q);
    q.prog = prog;
    q.nkernels = 1;
    q.kinds = kinds;
    q.threads = threads;
    q.rows = rows;
    q.bytes = bytes;
    return q;
}

/* A fresh process's start while `redfox hold` holds the driver (start
** state 2): the held runs' own starts where there are any, else a share of
** a fresh start (RF_RT_PLACE_HELD_SHARE); version 1's files read, state 2
** kept through a round trip. */
static void test_held(const char *tmp)
{
    rf_rt_place_query q = map_query(7, 4, 1e6, 1e8);
    rf_rt_place_choice ch;
    rf_rt_place_model m = {NULL, 0, 0};
    /* CPU 0.15 s; GPU fresh start 0.2 s, copies 0.02 s, run 0.01 s */
    rf_rt_place_rec rs[] = {run_rec(7, 0, 0, 1e6, 1e8, 0, 0, 0.15), run_rec(7, 1, 1, 1e6, 1e8, 0.2, 0.02, 0.01),
                            run_rec(7, 1, 1, 1e6, 1e8, 0.2, 0.02, 0.01)};
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) CHECK(!rf_rt_place_add(&m, &rs[i]));
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_start_s, 0.2) && !ch.gpu && !ch.gpu_held && !ch.held_guessed);
    /* held, no held start measured: half the fresh one's, 0.13 s against
    ** 0.15 s, more than the tie's 10 % under: the GPU */
    q.gpu_held = 1;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_start_s, RF_RT_PLACE_HELD_SHARE * 0.2) && ch.gpu_held && ch.held_guessed && ch.gpu);
    /* one measured: its start, 0.12 s: 0.15 s, the CPU */
    rf_rt_place_rec h = run_rec(7, 1, 2, 1e6, 1e8, 0.12, 0.02, 0.01);
    CHECK(!rf_rt_place_add(&m, &h));
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_start_s, 0.12) && ch.gpu_held && !ch.held_guessed && !ch.gpu);
    /* the fresh start, not held, is not the held one's */
    q.gpu_held = 0;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_start_s, 0.2) && !ch.gpu_held);
    /* no record at all: half the default */
    rf_rt_place_model none = {NULL, 0, 0};
    q.gpu_held = 1;
    rf_rt_place_predict(&none, &q, &ch);
    CHECK(near(ch.gpu_start_s, RF_RT_PLACE_HELD_SHARE * RF_RT_PLACE_GPU_START_S) && ch.held_guessed);
    /* started in the process: no start, held or not */
    q.gpu_started = 1;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(ch.gpu_start_s == 0 && !ch.gpu_held);
    /* the file: state 2 kept through an append and a read; a version 1
    ** file is read, and an append to it writes the file anew as version 2 */
    char *path = rf_sprintf("%s/place/held.txt", tmp);
    remove(path);
    rf_diags d;
    rf_diags_init(&d);
    CHECK(!rf_rt_place_append(path, &h, 1, &d));
    rf_rt_place_model back;
    CHECK(!rf_rt_place_read(path, &back, &d) && back.n == 1 && back.recs[0].fresh == 2 && d.count == 0);
    rf_rt_place_model_free(&back);
    write_text(path, "redfox placement model 1\nr 0000000000000007 gpu 1 1000000 100000000 4 0.2 0.02 0.01\n");
    CHECK(!rf_rt_place_read(path, &back, &d) && back.n == 1 && back.recs[0].fresh == 1 && d.count == 0);
    rf_rt_place_model_free(&back);
    CHECK(!rf_rt_place_append(path, &h, 1, &d));
    CHECK(!rf_rt_place_read(path, &back, &d) && back.n == 2 && back.recs[1].fresh == 2 && d.count == 0);
    rf_rt_place_model_free(&back);
    char head[32] = "";
    FILE *f = fopen(path, "r");
    CHECK(f && fgets(head, sizeof head, f) && !strcmp(head, "redfox placement model 2\n"));
    if (f) fclose(f);
    rf_diags_free(&d);
    free(path);
    rf_rt_place_model_free(&m);
}

/* Each device's reading of the program's inputs (issue 27): TPC-H q01 at SF
** 10 on the H200 read its database in 0.163 s on the CPU (narrow columns
** widened as read) and about 0.06 s on the GPU (narrow copies, widened on
** the device); not counted, the CPU's run of 0.22 s came out ahead of the
** GPU's 0.227 s of start, copies and run (or within the tie of it), and
** auto chose the CPU: 0.42 s against the GPU's 0.31 s. */
static void test_reading(const char *tmp)
{
    rf_rt_place_query q = map_query(9, 16, 1e6, 1e8);
    rf_rt_place_choice ch;
    rf_rt_place_model m = {NULL, 0, 0};
    rf_rt_place_rec rs[] = {read_rec(9, 0, 0, 0.163, 0, 0, 0.22), read_rec(9, 1, 1, 0.06, 0.19, 0.035, 0.002)};
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) CHECK(!rf_rt_place_add(&m, &rs[i]));
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.cpu_read_s, 0.163) && near(ch.gpu_read_s, 0.06) && near(ch.cpu_s, 0.383) && near(ch.gpu_s, 0.287));
    CHECK(ch.gpu && !ch.tie);
    /* readings not known: none weighed, the CPU as before */
    m.recs[0].read_s = m.recs[1].read_s = -1;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(ch.cpu_read_s == 0 && ch.gpu_read_s == 0 && !ch.gpu);
    /* one device's only: it stands for both (no difference) */
    m.recs[0].read_s = 0.163;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.cpu_read_s, 0.163) && near(ch.gpu_read_s, 0.163) && !ch.gpu);
    /* another program's readings are not this one's */
    m.recs[0].read_s = -1;
    rf_rt_place_rec other = read_rec(10, 0, 0, 5.0, 0, 0, 0.22);
    CHECK(!rf_rt_place_add(&m, &other));
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(ch.cpu_read_s == 0 && ch.gpu_read_s == 0);
    /* three runs over kept inputs: read once on each device */
    m.recs[0].read_s = 0.163;
    m.recs[1].read_s = 0.06;
    q.runs = 3;
    q.kept = 1;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.cpu_total_s, 3 * 0.22 + 0.163) && near(ch.gpu_total_s, 0.19 + 0.035 + 0.06 + 3 * 0.002));
    rf_rt_place_model_free(&m);
    /* the file: the reading kept, "-" for none; version 1's ten tokens read as none */
    char *path = rf_sprintf("%s/place/reading.txt", tmp);
    remove(path);
    rf_diags d;
    rf_diags_init(&d);
    rf_rt_place_rec two[2] = {read_rec(9, 0, 0, 0.163, 0, 0, 0.22), read_rec(9, 1, 2, -1, 0.05, 0.035, 0.002)};
    CHECK(!rf_rt_place_append(path, two, 2, &d));
    rf_rt_place_model back;
    CHECK(!rf_rt_place_read(path, &back, &d) && back.n == 2 && d.count == 0);
    if (back.n == 2) CHECK(near(back.recs[0].read_s, 0.163) && back.recs[1].read_s == -1 && back.recs[1].fresh == 2);
    rf_rt_place_model_free(&back);
    rf_buf b;
    rf_buf_init(&b);
    rf_rt_place_model mm = {two, 2, 2};
    CHECK(!rf_rt_place_format(&mm, &b) && b.data && strstr(b.data, " 3 0.163 0 0 0.22\n") &&
          strstr(b.data, " 3 - 0.05 0.035 0.002\n"));
    rf_buf_free(&b);
    write_text(path, "redfox placement model 1\nr 0000000000000009 cpu 0 1000000 100000000 3 0 0 0.22\n");
    CHECK(!rf_rt_place_read(path, &back, &d) && back.n == 1 && back.recs[0].read_s == -1 && d.count == 0);
    rf_rt_place_model_free(&back);
    /* a reading no run measures: damage */
    const char *bad[] = {"redfox placement model 2\nr 0000000000000009 cpu 0 1 2 3 -2 0 0 0.22\n",
                         "redfox placement model 2\nr 0000000000000009 cpu 0 1 2 3 2e9 0 0 0.22\n",
                         "redfox placement model 2\nr 0000000000000009 cpu 0 1 2 3 x 0 0 0.22\n",
                         "redfox placement model 2\nr 0000000000000009 cpu 0 1 2 3 0.1 0 0 0.22 9\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(path, bad[i]);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(!rf_rt_place_read(path, &back, &d) && back.n == 0 && d.count == 1);
        rf_rt_place_model_free(&back);
    }
    rf_diags_free(&d);
    free(path);
}

/* A near tie (issue 27): a GPU not started must win by RF_RT_PLACE_TIE of
** the CPU's time; a started one needs only to be faster. */
static void test_tie(void)
{
    rf_rt_place_query q = map_query(5, 4, 1e6, 1e8);
    rf_rt_place_choice ch;
    rf_rt_place_model m = {NULL, 0, 0};
    /* CPU 1.0 s; GPU: fresh start 0.3 s, copies 0.1 s, run 0.52 s: 0.92 s,
    ** 8 % under: the CPU (the GPU must be below 0.9 s) */
    rf_rt_place_rec rs[] = {run_rec(5, 0, 0, 1e6, 1e8, 0, 0, 1.0), run_rec(5, 1, 1, 1e6, 1e8, 0.3, 0.1, 0.52),
                            run_rec(5, 1, 0, 1e6, 1e8, 0.0, 0.1, 0.52)};
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) CHECK(!rf_rt_place_add(&m, &rs[i]));
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.cpu_total_s, 1.0) && near(ch.gpu_total_s, 0.92) && !ch.gpu && ch.tie);
    /* the GPU's run 0.45 s: 0.85 s, 15 % under: the GPU */
    m.recs[1].seconds = m.recs[2].seconds = 0.45;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_total_s, 0.85) && ch.gpu && !ch.tie);
    /* the GPU slower: the CPU, and no tie */
    m.recs[1].seconds = m.recs[2].seconds = 0.7;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(!ch.gpu && !ch.tie);
    /* started already (no start to pay): 0.1 + 0.88 s against 1.0 s is enough */
    m.recs[1].seconds = m.recs[2].seconds = 0.88;
    q.gpu_started = 1;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_total_s, 0.98) && ch.gpu && !ch.tie);
    q.gpu_started = 0;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(!ch.gpu && !ch.tie); /* fresh: 1.28 s against 1.0 s */
    rf_rt_place_model_free(&m);
}

static void test_choice(void)
{
    const char *kinds[3] = {"map", "join_index", "group"};
    rf_rt_place_query q;
    memset(&q, 0, sizeof q);
    q.prog = 42;
    q.nkernels = 3;
    q.kinds = kinds;
    q.threads = 16;
    rf_rt_place_choice ch;
    rf_rt_place_model m = {NULL, 0, 0};
    /* no records: the defaults; small inputs on the CPU, large on the GPU */
    q.rows = 1000;
    q.bytes = 8000;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(!ch.gpu && ch.records == 0 && !strcmp(ch.cpu_basis, "defaults"));
    CHECK(near(ch.gpu_s, RF_RT_PLACE_GPU_START_S + 3 * (1000 * RF_RT_PLACE_GPU_NS_ROW * 1e-9 + RF_RT_PLACE_GPU_KERNEL_S) +
                             8000 / RF_RT_PLACE_GPU_BW));
    q.rows = 3e8;
    q.bytes = 2.4e9;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(ch.gpu && ch.gpu_s < ch.cpu_s);
    /* this program's runs: CPU 0.1 s a million rows; GPU 0.01 s, a fresh
    ** start of 0.3 s, copies at 10 GB/s */
    rf_rt_place_rec rs[] = {run_rec(42, 0, 0, 1e6, 1e8, 0, 0, 0.1), run_rec(42, 0, 0, 2e6, 2e8, 0, 0, 0.2),
                            run_rec(42, 1, 1, 1e6, 1e8, 0.3, 0.01, 0.01), run_rec(7, 1, 0, 1e6, 1e8, 0.001, 0.01, 5)};
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++) CHECK(!rf_rt_place_add(&m, &rs[i]));
    q.rows = 1e6;
    q.bytes = 1e8;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(ch.records == 4 && !strcmp(ch.cpu_basis, "this program's runs") && !strcmp(ch.gpu_basis, "this program's runs"));
    CHECK(near(ch.cpu_s, 0.1) && near(ch.gpu_s, 0.01 + 0.3 + 0.01) && !ch.gpu);
    /* ten times the rows: the GPU */
    q.rows = 1e7;
    q.bytes = 1e9;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.cpu_s, 1.0) && near(ch.gpu_s, 0.1 + 0.3 + 0.1) && ch.gpu);
    /* the driver already runs (tpch run's later queries): the warm start measured */
    q.rows = 1e6;
    q.bytes = 1e8;
    q.gpu_started = 1;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_s, 0.01 + 0.001 + 0.01) && ch.gpu);
    /* several runs in this process (run --repeat N): the start once; kept
    ** inputs copied once, else every run */
    q.gpu_started = 0;
    q.runs = 3;
    q.kept = 1;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(ch.runs == 3 && near(ch.cpu_total_s, 0.3) && near(ch.gpu_total_s, 0.3 + 0.01 + 3 * 0.01) && !ch.gpu);
    CHECK(near(ch.gpu_start_s, 0.3) && near(ch.gpu_copy_s, 0.01) && near(ch.gpu_s, 0.32)); /* one run's, as before */
    q.runs = 4;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.cpu_total_s, 0.4) && near(ch.gpu_total_s, 0.3 + 0.01 + 4 * 0.01) && ch.gpu);
    q.kept = 0;
    rf_rt_place_predict(&m, &q, &ch);
    /* 0.38 s against 0.4 s: a near tie (within 10 %), the CPU */
    CHECK(near(ch.gpu_total_s, 0.3 + 4 * 0.02) && !ch.gpu && ch.tie);
    q.runs = 5;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_total_s, 0.3 + 5 * 0.02) && ch.gpu && !ch.tie); /* 0.40 s against 0.5 s */
    q.runs = 4;
    q.runs = 3;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_total_s, 0.3 + 3 * 0.02) && !ch.gpu);
    /* later programs share the start: one run, their gain decides */
    q.runs = 1;
    q.later_gain_s = 0.3;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(ch.gpu && near(ch.later_gain_s, 0.3)); /* 0.32 s against 0.1 + 0.3 s */
    q.later_gain_s = 0.25;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(!ch.gpu && ch.tie); /* 0.32 s against 0.35 s: within 10 % */
    q.later_gain_s = 0.2;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(!ch.gpu && !ch.tie);
    /* a program slower on a started GPU stays on the CPU whatever the later gain */
    q.later_gain_s = 100;
    q.rows = 1e5; /* cpu 0.01 s; gpu run 0.001 s and copies of 1e8 bytes 0.01 s */
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(!ch.gpu && near(ch.cpu_total_s, 0.01));
    q.rows = 1e6;
    q.later_gain_s = 0;
    /* a program's gain on a started GPU: the warm start measured (0.001 s) */
    CHECK(near(rf_rt_place_gain(&m, &q), 0.1 - (0.01 + 0.01 + 0.001)));
    q.runs = 2;
    q.kept = 1;
    CHECK(near(rf_rt_place_gain(&m, &q), 0.2 - (0.02 + 0.01 + 0.001)));
    q.rows = 1e5;
    q.runs = 1;
    CHECK(rf_rt_place_gain(&m, &q) == 0); /* never negative: cpu 0.01 s, gpu 0.012 s */
    q.rows = 1e6;
    q.runs = 1;
    q.kept = 0;
    /* another program: kernel kinds where measured, defaults for the rest */
    q.prog = 99;
    q.gpu_started = 0;
    rf_rt_place_rec ks[] = {kern_rec(0, "map", 1e6, 1e7, 0.02), kern_rec(0, "map", 2e6, 2e7, 0.04),
                            kern_rec(1, "map", 1e6, 1e7, 0.001)};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) CHECK(!rf_rt_place_add(&m, &ks[i]));
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(!strcmp(ch.cpu_basis, "kernel kinds") && !strcmp(ch.gpu_basis, "kernel kinds"));
    double cpu_default = 1e6 * RF_RT_PLACE_CPU_NS_ROW * 1e-9 / 16;
    CHECK(near(ch.cpu_s, 0.02 + 2 * cpu_default));
    rf_rt_place_model_free(&m);
    /* one small kernel's record is not stretched to a program 20,000 times
    ** its rows (a sort of 4 rows in 4 ms predicted a 2 ms query at 77 s) */
    const char *sorts[1] = {"sort"};
    memset(&q, 0, sizeof q);
    q.prog = 5;
    q.nkernels = 1;
    q.kinds = sorts;
    q.threads = 16;
    q.rows = 76675;
    q.bytes = 8 * 76675;
    rf_rt_place_model one = {NULL, 0, 0};
    rf_rt_place_rec tiny = kern_rec(0, "sort", 4, 288, 0.004);
    CHECK(!rf_rt_place_add(&one, &tiny));
    rf_rt_place_predict(&one, &q, &ch);
    CHECK(!strcmp(ch.cpu_basis, "defaults") && near(ch.cpu_s, 76675 * RF_RT_PLACE_CPU_NS_ROW * 1e-9 / 16));
    /* records that reach a tenth of the program's rows are used */
    rf_rt_place_rec wide = kern_rec(0, "sort", 8000, 64000, 0.0008);
    CHECK(!rf_rt_place_add(&one, &wide));
    rf_rt_place_predict(&one, &q, &ch);
    CHECK(!strcmp(ch.cpu_basis, "kernel kinds") && ch.cpu_s < 1.0);
    rf_rt_place_model_free(&one);
}

/* Issue 27's mispredictions at SF 10 (the GPU chosen, the CPU faster): a
** program whose copies hold more than its columns' bytes (the strings'
** dictionary) and whose long reading hides most of the GPU's start. From a
** model file: the prediction of its next GPU run against what its runs
** measured (the actual), and the choice. */
static void test_own_costs(const char *tmp)
{
    char *path = rf_sprintf("%s/place/own.txt", tmp);
    /* A (0xa): CPU 0.5 s; GPU start not hidden 0.05 s, copies 0.6 s (the
    ** dictionary), run 0.02 s: 0.67 s in all. B (0xb), three runs: start
    ** 0.25 s, 4e8 bytes copied in 0.016 s (25 GB/s) */
    write_text(path, "redfox placement model 1\n"
                     "r 000000000000000a cpu 0 10000000 400000000 9 0 0 0.5\n"
                     "r 000000000000000a gpu 1 10000000 400000000 9 0.05 0.6 0.02\n"
                     "r 000000000000000b gpu 1 10000000 400000000 9 0.25 0.016 0.01\n"
                     "r 000000000000000b gpu 1 10000000 400000000 9 0.25 0.016 0.01\n"
                     "r 000000000000000b gpu 1 10000000 400000000 9 0.25 0.016 0.01\n");
    rf_rt_place_model m;
    rf_diags d;
    rf_diags_init(&d);
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 5 && d.count == 0);
    rf_rt_place_query q = map_query(0xa, 16, 1e7, 4e8);
    rf_rt_place_choice ch;
    rf_rt_place_predict(&m, &q, &ch);
    double actual = 0.05 + 0.6 + 0.02;
    printf("own costs: predicted gpu %.3f s (start %.3f s, copies %.3f s) against actual %.3f s; cpu %.3f s -> %s\n",
           ch.gpu_s, ch.gpu_start_s, ch.gpu_copy_s, actual, ch.cpu_s, ch.gpu ? "gpu" : "cpu");
    /* the averages of every program would say start 0.2 s, copies 0.16 s:
    ** 0.38 s, the GPU */
    CHECK(near(ch.gpu_start_s, 0.05) && near(ch.gpu_copy_s, 0.6) && near(ch.gpu_s, actual) && !ch.gpu);
    /* B's own rate and start */
    q.prog = 0xb;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_start_s, 0.25) && near(ch.gpu_copy_s, 0.016));
    /* a program with no run of its own: every program's */
    q.prog = 0xc;
    rf_rt_place_predict(&m, &q, &ch);
    CHECK(near(ch.gpu_start_s, (0.05 + 3 * 0.25) / 4) && near(ch.gpu_copy_s, 4e8 / (1.6e9 / (0.6 + 3 * 0.016))));
    rf_rt_place_model_free(&m);
    rf_diags_free(&d);
    free(path);
}

/* 1 when a and b hold the same records. */
static int same_model(const rf_rt_place_model *a, const rf_rt_place_model *b)
{
    if (a->n != b->n) return 0;
    for (int64_t i = 0; i < a->n; i++) {
        const rf_rt_place_rec *x = &a->recs[i], *y = &b->recs[i];
        if (x->type != y->type || x->gpu != y->gpu || x->prog != y->prog || x->fresh != y->fresh ||
            strcmp(x->kind, y->kind) || strcmp(x->host, y->host) || x->rows != y->rows || x->bytes != y->bytes ||
            x->kernels != y->kernels || x->read_s != y->read_s || x->start_s != y->start_s || x->copy_s != y->copy_s || x->seconds != y->seconds)
            return 0;
    }
    return 1;
}

/* rf_rt_place_load against rf_rt_place_read of the same file: the same
** model and the same warnings (their lines); *bin_made: model.bin was
** written by the load (its size or time changed). */
static int load_matches(const char *path, const char *bpath, int *bin_made)
{
    struct stat b0, b1;
    int had = stat(bpath, &b0) == 0;
    rf_rt_place_model r, l;
    rf_diags dr, dl;
    rf_diags_init(&dr);
    rf_diags_init(&dl);
    int ok = !rf_rt_place_read(path, &r, &dr) && !rf_rt_place_load(path, &l, &dl) && same_model(&r, &l) &&
             dr.count == dl.count && (dr.count == 0 || dr.items[0].loc.line == dl.items[0].loc.line);
    int has = stat(bpath, &b1) == 0;
    if (bin_made)
        *bin_made = has && (!had || b0.st_ino != b1.st_ino || b0.st_size != b1.st_size ||
                            b0.st_mtim.tv_nsec != b1.st_mtim.tv_nsec || b0.st_mtime != b1.st_mtime);
    rf_rt_place_model_free(&r);
    rf_rt_place_model_free(&l);
    rf_diags_free(&dr);
    rf_diags_free(&dl);
    return ok;
}

/* The parsed records' cache (model.bin, rt_place_bin.c): whatever happens to
** model.txt, a load gives what a read of the text gives. */
static void test_cache(const char *tmp)
{
    char *path = rf_sprintf("%s/place/model.txt", tmp), *bpath = rf_sprintf("%s/place/model.bin", tmp);
    remove(path);
    remove(bpath);
    rf_diags d;
    rf_diags_init(&d);
    rf_rt_place_rec recs[3] = {run_rec(0x1234, 1, 1, 1e6, 8e6, 0.31, 0.002, 0.0125), kern_rec(0, "map", 5, 40, 1e-6),
                               kern_rec(1, "join_index", 12345, 98765, 0.5)};
    CHECK(!rf_rt_place_append(path, recs, 3, &d));
    int made = 0;
    /* none yet: the text parsed, the cache made; then the cache alone */
    CHECK(load_matches(path, bpath, &made) && made);
    CHECK(load_matches(path, bpath, &made) && !made);
    /* lines appended: parsed after the cache's records, the cache kept */
    CHECK(!rf_rt_place_append(path, recs, 2, &d));
    CHECK(load_matches(path, bpath, &made) && !made);
    rf_rt_place_model m;
    CHECK(!rf_rt_place_load(path, &m, &d) && m.n == 5 && m.recs[4].type == 'k' && !strcmp(m.recs[4].kind, "map"));
    rf_rt_place_model_free(&m);
    /* many lines appended: the cache made again */
    rf_rt_place_rec many[300];
    for (int i = 0; i < 300; i++) many[i] = kern_rec(i & 1, "sort", i, 8.0 * i, 1e-6 * i);
    CHECK(!rf_rt_place_append(path, many, 300, &d));
    CHECK(load_matches(path, bpath, &made) && made);
    /* edited in place, early in the bytes the cache covers, the length
    ** kept: a damaged line is found (the read's warning, its line), an
    ** edited value served as edited, never the cache's old records */
    char *text = NULL;
    int64_t tlen = 0;
    const char *why;
    CHECK(!rf_read_file(path, &text, &tlen, &why));
    char *gpu = text ? strstr(text, " gpu 1 ") : NULL, *secs = text ? strstr(text, " 0.0125\n") : NULL;
    CHECK(gpu && secs && secs < strchr(gpu, '\n') + 1);
    if (gpu && secs) {
        int fd = open(path, O_WRONLY);
        CHECK(fd >= 0 && pwrite(fd, "x", 1, gpu + 1 - text) == 1);
        CHECK(load_matches(path, bpath, NULL));
        CHECK(!rf_rt_place_load(path, &m, &d) && m.n == 0 && d.count == 1 && d.items[0].loc.line == 2);
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(fd >= 0 && pwrite(fd, "g", 1, gpu + 1 - text) == 1 && pwrite(fd, " 0.0126", 7, secs - text) == 7);
        CHECK(load_matches(path, bpath, NULL));
        CHECK(!rf_rt_place_load(path, &m, &d) && m.n == 305 && m.recs[0].seconds == 0.0126 && d.count == 0);
        rf_rt_place_model_free(&m);
        if (fd >= 0) close(fd);
    }
    free(text);
    /* a damaged line after the cache's bytes: the warning names its line */
    FILE *f = fopen(path, "ab");
    if (f) {
        fputs("k cpu map 1 2\n", f);
        fclose(f);
    }
    CHECK(load_matches(path, bpath, NULL));
    CHECK(!rf_rt_place_load(path, &m, &d) && m.n == 0 && d.count == 1 && d.items[0].loc.line == 2 + 305);
    rf_diags_free(&d);
    rf_diags_init(&d);
    /* model.txt written anew, and edited in place to a longer text */
    CHECK(!rf_rt_place_reset(path) && !rf_rt_place_append(path, recs, 3, &d));
    CHECK(load_matches(path, bpath, NULL));
    struct stat sb0, sb1;
    CHECK(stat(path, &sb0) == 0);
    rf_buf b;
    rf_buf_init(&b);
    rf_buf_printf(&b, "redfox placement model 1\n");
    for (int i = 0; i < 12; i++) rf_buf_printf(&b, "k gpu map %d 8 0.5\n", 7 + i);
    CHECK(!b.oom && (int64_t)b.len > (int64_t)sb0.st_size); /* longer than what the cache covers */
    write_text(path, b.data);
    rf_buf_free(&b);
    CHECK(stat(path, &sb1) == 0 && sb1.st_ino == sb0.st_ino); /* in place */
    CHECK(load_matches(path, bpath, NULL));
    CHECK(!rf_rt_place_load(path, &m, &d) && m.n == 12 && m.recs[0].gpu && m.recs[0].rows == 7);
    rf_rt_place_model_free(&m);
    /* a damaged cache, and one of a shorter text: the text */
    write_text(bpath, "not a cache");
    CHECK(load_matches(path, bpath, &made) && made);
    write_text(path, "redfox placement model 1\nk gpu map 7 8 0.5\n");
    CHECK(load_matches(path, bpath, NULL));
    /* another version: the warning, as a read gives it */
    write_text(path, "redfox placement model 0\n");
    CHECK(load_matches(path, bpath, NULL));
    remove(path);
    CHECK(!rf_rt_place_load(path, &m, &d) && m.n == 0 && d.count == 0); /* none: an empty model */
    rf_diags_free(&d);
    free(path);
    free(bpath);
}

/* A pid that no process has now: a child's, waited for. */
static long dead_pid(void)
{
    pid_t p = fork();
    if (p == 0) _exit(0);
    if (p > 0) waitpid(p, NULL, 0);
    return (long)p;
}

/* A file at dir/name, its times age seconds ago: its path (owned). */
static char *put(const char *dir, const char *name, int age)
{
    char *path = rf_sprintf("%s/%s", dir, name);
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f) {
        fputs("half a model\n", f);
        fclose(f);
    }
    struct timeval tv[2];
    gettimeofday(&tv[0], NULL);
    tv[0].tv_sec -= age;
    tv[1] = tv[0];
    if (path) utimes(path, tv);
    return path;
}

static int exists(const char *path)
{
    struct stat sb;
    return path && !stat(path, &sb);
}

/* Temporaries of killed writers beside model.txt and model.bin: a write
** aside removes those of processes that are gone and older than
** RF_RT_PLACE_STALE_TMP_S, and nothing else. */
static void test_sweep(const char *tmp)
{
    char *dir = rf_sprintf("%s/place_sweep.%ld", tmp, (long)getpid());
    CHECK(dir && !mkdir(dir, 0777));
    if (!dir) return;
    char *path = rf_sprintf("%s/model.txt", dir);
    long dead = dead_pid(), dead2 = dead_pid();
    CHECK(dead > 0 && dead2 > 0);
    int old = RF_RT_PLACE_STALE_TMP_S + 60;
    char name[96];
    snprintf(name, sizeof name, "model.txt.%ld.tmp", dead);
    char *gone = put(dir, name, old); /* a killed writer's: removed */
    snprintf(name, sizeof name, "model.txt.%ld.tmp", dead2);
    char *young = put(dir, name, 0); /* its process gone, but new: kept */
    snprintf(name, sizeof name, "model.txt.%ld.tmp", (long)getppid());
    char *live = put(dir, name, old); /* a live process's: kept */
    char *odd = put(dir, "model.txt.12x.tmp", old); /* no pid: kept */
    snprintf(name, sizeof name, "other.txt.%ld.tmp", dead);
    char *other = put(dir, name, old); /* another file's: kept */
    snprintf(name, sizeof name, "model.bin.%ld.tmp", dead);
    char *bin = put(dir, name, old); /* model.bin's, swept when model.bin is written */
    /* named as a write aside names them (rf_gpu_cache_tmp_name: the pid,
    ** then a count within the process): these were never swept */
    snprintf(name, sizeof name, "model.txt.%ld.3.tmp", dead);
    char *counted = put(dir, name, old); /* removed */
    snprintf(name, sizeof name, "model.txt.%ld.3.tmp", dead2);
    char *counted_young = put(dir, name, 0); /* kept */
    snprintf(name, sizeof name, "model.txt.%ld.3.tmpx", dead);
    char *counted_odd = put(dir, name, old); /* not a temporary's name: kept */
    char *made = rf_gpu_cache_tmp_name(path, "tmp"); /* the name this build's writer takes */
    const char *made_tail = made ? strrchr(made, '/') : NULL;
    long made_pid = 0;
    CHECK(made_tail && sscanf(made_tail, "/model.txt.%ld.", &made_pid) == 1 && made_pid == (long)getpid());
    free(made);
    /* a model written anew (aside, then renamed): the sweep before it */
    CHECK(!rf_rt_place_reset(path));
    CHECK(exists(path));
    CHECK(!exists(gone));
    CHECK(exists(young));
    CHECK(exists(live));
    CHECK(exists(odd));
    CHECK(exists(other));
    CHECK(exists(bin));
    CHECK(!exists(counted));
    CHECK(exists(counted_young));
    CHECK(exists(counted_odd));
    char *bpath = rf_sprintf("%s/model.bin", dir);
    CHECK(rf_rt_place_sweep(bpath) == 1 && !exists(bin));
    /* this process's own (it may be writing it now): kept */
    snprintf(name, sizeof name, "model.txt.%ld.tmp", (long)getpid());
    char *own = put(dir, name, old);
    CHECK(rf_rt_place_sweep(path) == 0 && exists(own)); /* (and nothing more to remove) */
    rf_rt_place_model m;
    rf_diags d;
    rf_diags_init(&d);
    CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 0 && d.count == 0);
    rf_rt_place_model_free(&m);
    rf_diags_free(&d);
    char *all[] = {path, bpath, gone, young, live, own, odd, other, bin, counted, counted_young, counted_odd};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (all[i]) remove(all[i]);
        free(all[i]);
    }
    rmdir(dir);
    free(dir);
}

static char *slurp(const char *path, int64_t *len)
{
    char *data = NULL;
    const char *why;
    *len = -1;
    if (rf_read_file_bounded(path, 1 << 20, &data, len, &why)) return NULL;
    return data;
}

/* An append the disk cuts short (full, or the file's size limit: here
** RLIMIT_FSIZE a few bytes past the file's end) is cut back to where it
** began: the model keeps its records, with no warning. Before, half a line
** was left at its end, and the next read threw every record away. */
static void test_append_cut_short(const char *tmp)
{
    char *dir = rf_sprintf("%s/place_cut.%ld", tmp, (long)getpid());
    char *path = dir ? rf_sprintf("%s/model.txt", dir) : NULL;
    CHECK(path && !mkdir(dir, 0777));
    if (!path) return;
    rf_diags d;
    rf_diags_init(&d);
    rf_rt_place_rec recs[2] = {run_rec(0x1234ULL, 0, 0, 1e6, 8e6, 0, 0, 0.0125), kern_rec(0, "join_index", 12345, 98765, 0.5)};
    CHECK(!rf_rt_place_append(path, recs, 2, &d));
    CHECK(!rf_rt_place_append(path, recs, 1, &d)); /* (three records: more than the two appended below) */
    int64_t n0, n1;
    char *before = slurp(path, &n0);
    CHECK(before && n0 > 0);
    struct rlimit old, lim;
    CHECK(!getrlimit(RLIMIT_FSIZE, &old));
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN); /* (else the write past the limit ends the process) */
    lim = old;
    lim.rlim_cur = (rlim_t)n0 + 10;
    if (old.rlim_cur == RLIM_INFINITY || old.rlim_cur > lim.rlim_cur) {
        CHECK(!setrlimit(RLIMIT_FSIZE, &lim));
        rf_rt_place_append(path, recs, 2, &d); /* (its rewrite aside, past the limit too, fails) */
        CHECK(!setrlimit(RLIMIT_FSIZE, &old));
        char *after = slurp(path, &n1);
        CHECK(after && n1 == n0 && !memcmp(after, before, (size_t)n0));
        free(after);
        rf_rt_place_model m;
        CHECK(!rf_rt_place_read(path, &m, &d) && m.n == 3);
        rf_rt_place_model_free(&m);
        CHECK(d.count == 0);
    }
    signal(SIGXFSZ, was);
    free(before);
    rf_diags_free(&d);
    remove(path);
    rmdir(dir);
    free(path);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_rt_place TMPDIR\n");
        return 2;
    }
    test_fits();
    test_file(argv[1]);
    test_tie();
    test_held(argv[1]);
    test_reading(argv[1]);
    test_choice();
    test_own_costs(argv[1]);
    test_cache(argv[1]);
    test_sweep(argv[1]);
    test_append_cut_short(argv[1]);
    if (!fails) printf("placement model: fits, file, predictions and choices as expected\n");
    return fails ? 1 : 0;
}
