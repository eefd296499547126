/*
** tools/cmd_tpch_bench.c: `redfox tpch bench`: times the 22 embedded TPC-H
** queries (as `redfox tpch run` compiles them) so that runs can be compared
** over time and with DuckDB: the median time with the data resident, the
** cold time (inputs copied in), the bytes the kernels moved and the
** bandwidth floor they imply, and the TPC-H power metric; as a table and,
** with --json, as one JSON object.
**
** Owns: the command line, the timing protocol and the reports. Each query
** is compiled and run through the library (include/redfox.h), as `tpch
** run` does: rf_compile_buffers_v2, rf_run on one database that keeps its
** inputs (the tables are read once per process), rf_database_forget_device
** before the cold run, rf_result_stats for the figures the reports print
** and rf_device_info for the device's name; only compiling the queries' GPU
** code together before the first runs (rf_tpch_prepare_gpu) is the
** stages' own. The query list syntax and the embedded sources are those of
** cmd_tpch_run.c (the few small helpers are repeated here).
*/
#include "pipeline.h"
#include "redfox.h"
#include "rf_db.h"
#include "rf_file.h"
#include "rf_runtime.h"
#include "rf_tpch_queries.h"
#include "tools.h"
#include "tpch_tool.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NQUERIES RF_TPCH_NQUERIES
#define MAX_REPEAT 1000

static const char *usage =
    "usage: redfox tpch bench --data DIR [--sf X] [--device auto|cpu|gpu] [--repeat N]\n"
    "                         [--queries LIST] [--bandwidth GBPS] [--json FILE]\n"
    "                         [--duckdb FILE] [--threads N] [--no-fuse]\n"
    "                         [--set NAME=VALUE] [--gpu-memory N]\n"
    "                         [--cache-dir DIR | --no-cache]\n"
    "\n"
    "Times the TPC-H queries built into redfox on the dbgen .tbl files in DIR\n"
    "(generated at scale factor X). The tables are parsed into host memory once,\n"
    "before any timing. Then, per query: one cold run, which is also the warm-up;\n"
    "N timed runs; one more run with per-kernel statistics for the byte counts.\n"
    "\n"
    "columns:\n"
    "  median ms   median of the N runs' times, inputs already in place (on the\n"
    "              GPU: resident in device memory, kept there from run to run);\n"
    "              what the summary uses\n"
    "  cold ms     the cold run: inputs copied from host memory (to the GPU) and\n"
    "              the program loaded, plus the run\n"
    "  MB moved    bytes read plus bytes written by the query's kernels: the\n"
    "              columns each kernel uses, at their stored widths, once per row\n"
    "              it touches, and 8 bytes per row-index entry (not hash tables,\n"
    "              scratch or the string dictionary): what the plan must move\n"
    "  floor ms    MB moved / bandwidth: the time at full memory bandwidth\n"
    "  ratio       median / floor (1 would be bandwidth-bound at full speed)\n"
    "  DuckDB ms   from --duckdb; speedup = DuckDB ms / median ms\n"
    "\n"
    "summary: the total and geometric mean of the medians and, when all 22 ran,\n"
    "Power@SF = 3600 * SF / (geometric mean of the 22 query times in seconds).\n"
    "The refresh functions RF1 and RF2 are not run: this is not an official\n"
    "TPC-H power or QphH result.\n"
    "\n"
    "options:\n"
    "  --data DIR          where customer.tbl .. supplier.tbl are (required), or a\n"
    "                      redfox database of them (`tpch gen --format db`)\n"
    "  --sf X              the data's scale factor, e.g. 1 or 0.01 (default: the\n"
    "                      data's own, supplier's rows / 10,000, as dbgen makes\n"
    "                      it); one the data does not have is refused (exit 2)\n"
    "  --device D          auto (default), cpu or gpu\n"
    "  --repeat N          timed runs per query after the warm-up (default 5)\n"
    "  --queries LIST      which queries, e.g. 1,3,5-7 (default: all 22)\n"
    "  --bandwidth GBPS    memory bandwidth for the floor, in GB/s (10^9 bytes).\n"
    "                      Default: 4300 on a GPU named H200, 3000 on an H100\n"
    "                      (the measured device-to-device copy rates, bytes read\n"
    "                      plus written, docs/BENCHMARKS.md), 20 on the CPU; none on\n"
    "                      other GPUs\n"
    "  --json FILE         also write the results as one JSON object: device,\n"
    "                      device_name, sf, date, repeat, bandwidth_gbps, queries:\n"
    "                      [{q, median_ms, cold_ms, bytes, floor_ms, ratio,\n"
    "                      duckdb_ms, gpu_peak_bytes, fused_kernels, h2d_bytes,\n"
    "                      d2h_bytes, cold_phases_ms: {device, program, read,\n"
    "                      copy, run, output}; with --gpu-memory also\n"
    "                      gpu_memory_cap, gpu_values_moved,\n"
    "                      gpu_kernels_in_ranges}], total_ms,\n"
    "                      geomean_ms, power (null where not known), fused.\n"
    "                      FILE cannot be the --duckdb file (exit 2)\n"
    "  --duckdb FILE       DuckDB's times to compare with: what\n"
    "                      bench/duckdb/tpch.mjs prints, i.e. lines 'q01 197.5 ms'\n"
    "                      (other lines are ignored), or a JSON object such as\n"
    "                      {\"q01\": 197.5, \"q06\": 31}; milliseconds, any subset\n"
    "  --threads N         CPU threads, 1 to 1024 (default: all cores; over four\n"
    "                      times the cores and 64: a note, they take turns)\n"
    "  --no-fuse           every kernel separately (GPU: no Kernel Weaver fusion,\n"
    "                      CPU: no grouped totals, a recursion's pairs whole);\n"
    "                      compare with a run without it (the JSON says \"fused\")\n"
    "  --set NAME=VALUE    a tuning setting (below; repeatable)\n"
    "  --gpu-memory N      cap the GPU memory the run uses (bytes, K/M/G/T;\n"
    "                      the same as --set gpu_memory=N)\n"
    "  --cache-dir DIR     where the GPU's compiled code is cached and --device\n"
    "                      auto's placement model kept (default $XDG_CACHE_HOME/\n"
    "                      redfox, else ~/.cache/redfox); --no-cache: neither\n"
    "  -h, --help          this text\n";

typedef struct bstat {
    int ran;
    double median_s, cold_s;
    int64_t bytes;        /* -1: not known */
    double duckdb_ms;     /* < 0: not given */
    int64_t gpu_peak;     /* GPU: peak device memory of the profiled run */
    int32_t fused;        /* GPU: fused kernel runs in the profiled run */
    /* GPU, the profiled run: the memory cap (--gpu-memory; 0: none), values
    ** moved to host memory for room, kernels run in row ranges or key partitions */
    int64_t cap, moved, ranged;
    /* the cold run (the first): its phases in seconds (rf_rt_result's) and
    ** the bytes it copied each way */
    double ph_device, ph_program, ph_read, ph_copy, ph_run, ph_output;
    int64_t h2d, d2h;
} bstat;


/* A positive decimal number (1, 0.01, 1e3; not hex, not blank-padded). */
static int parse_pos_double(const char *s, double *out)
{
    double v;
    if (!rf_parse_decimal(s, &v) || !(v > 0)) return 0;
    *out = v;
    return 1;
}

/* dbgen's supplier table has 10,000 rows per unit of scale factor: the
** data's scale, whatever --sf says */
#define SUPPLIERS_PER_SF 10000

/* The rows of the supplier table in data: a database's from its manifest,
** a folder of .tbl files' by counting supplier.tbl's lines. 1, or 0 with
** why (no such table, unreadable), or -1 after a damaged database's error
** on stderr (it was "no supplier table", asking for --sf). */
static int supplier_rows(const char *data, int64_t *rows, char *why, size_t nwhy)
{
    *rows = 0;
    if (rf_db_is_database(data)) {
        rf_diags d;
        rf_diags_init(&d);
        rf_db *db = NULL;
        const rf_db_table *t = NULL;
        rf_status st = rf_db_open(data, &db, &d);
        if (st) {
            rf_tool_finish(st, &d);
            rf_diags_free(&d);
            return -1;
        }
        if ((t = rf_db_find_table(db, "supplier.tbl"))) *rows = t->nrows;
        else snprintf(why, nwhy, "the database has no supplier table");
        rf_db_close(db);
        rf_diags_free(&d);
        return t != NULL;
    }
    char *path = rf_sprintf("%s/supplier.tbl", data);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK) : -1;
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(why, nwhy, "%s/supplier.tbl cannot be read: %s", data, fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0) close(fd);
        free(path);
        return 0;
    }
    free(path);
    static char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (const char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p))); p++) ++*rows;
    close(fd);
    if (n < 0) snprintf(why, nwhy, "%s/supplier.tbl cannot be read: %s", data, strerror(errno));
    return n == 0;
}

/* DuckDB's times: every "q<digits>" token (not inside a word) followed by
** optional quote, blanks or ':' and a number, e.g. "q01 197.5 ms" or
** "\"q1\": 197.5". Returns 0 with *why when the file cannot be read: only a
** regular file of at most 64 MiB is (a named pipe there blocked the bench
** for ever, /dev/zero never ended). */
static int read_duckdb(const char *path, double ms[NQUERIES + 1], int *found, const char **why)
{
    char *text = NULL;
    int64_t n = 0;
    if (rf_read_file_bounded(path, 64LL << 20, &text, &n, why) != RF_OK) return 0;
    size_t len = (size_t)n;
    *found = 0;
    for (size_t i = 0; i < len; i++) {
        if ((text[i] != 'q' && text[i] != 'Q') || (i > 0 && (isalnum((unsigned char)text[i - 1]) || text[i - 1] == '_')))
            continue;
        const char *p = text + i + 1;
        if (!isdigit((unsigned char)*p)) continue;
        char *end;
        long q = strtol(p, &end, 10);
        p = end;
        if (isalnum((unsigned char)*p) || q < 1 || q > NQUERIES) continue;
        if (*p == '"') p++;
        while (*p == ' ' || *p == '\t' || *p == ':') p++;
        double v = strtod(p, &end);
        if (end == p || !(v >= 0) || !isfinite(v)) continue;
        if (ms[q] < 0) ++*found;
        ms[q] = v;
    }
    free(text);
    return 1;
}

static const rf_diagnostic *program_diag(const void *p, int64_t i) { return rf_program_diag(p, i); }
static const rf_diagnostic *database_diag(const void *db, int64_t i) { return rf_database_diag(db, i); }

/* Compiles query q and times it through the library, on db (which keeps
** the inputs runs read); *code_out receives the first failure (REDFOX_*),
** reported here. */
static int bench_query(int q, rf_database *db, const rf_run_options *o0, int repeat, bstat *bs, char *device,
                       size_t device_n, int *code_out)
{
    rf_diags d;
    rf_diags_init(&d);
    rf_program *p = NULL;
    rf_result *res = NULL;
    rf_run_options o = *o0;
    double *runs = malloc((size_t)repeat * sizeof *runs);
    int code = runs ? rf_tpch_compile_program(q, &p, NULL, &d) : REDFOX_NOMEM;
    int failed_run = 0;
    /* 0: read the inputs not yet kept in host memory (not timed); 1: cold
    ** run and warm-up; 2 .. repeat+1: timed; repeat+2: profiled, for the bytes */
    for (int r = 0; !code && r < repeat + 3; r++) {
        rf_result_free(res);
        res = NULL;
        o.profile = r == repeat + 2;
        o.runs = repeat + 3 - r; /* auto: the GPU's start weighed against this query's runs left */
        /* the cold run copies its inputs to the GPU: nothing kept there from
        ** the first run or an earlier query (later runs find them there) */
        if (r == 1) rf_database_forget_device(db);
        code = rf_run(db, p, &o, &res);
        if (code) {
            failed_run = 1;
            break;
        }
        rf_run_stats s;
        s.size = sizeof s;
        if ((code = rf_result_stats(res, &s))) break;
        if (r == 0) {
            snprintf(device, device_n, "%s", s.device);
            static int noted; /* the first query's notes only; each one's warnings */
            rf_tpch_print_notes(p, db, &noted);
        }
        if (r == 1) {
            bs->cold_s = s.load_seconds + s.run_seconds;
            bs->ph_device = s.device_seconds;
            bs->ph_program = s.program_seconds;
            bs->ph_read = s.read_seconds;
            bs->ph_copy = s.copy_seconds;
            bs->ph_run = s.run_seconds;
            bs->ph_output = s.output_seconds;
            bs->h2d = s.h2d_bytes;
            bs->d2h = s.d2h_bytes;
        }
        if (r >= 2 && r < repeat + 2) runs[r - 2] = s.run_seconds;
        if (r == repeat + 2) {
            bs->bytes = s.kernel_bytes_in >= 0 ? s.kernel_bytes_in + s.kernel_bytes_out : -1;
            bs->gpu_peak = s.gpu_peak_bytes;
            bs->fused = (int32_t)s.gpu_fused;
            bs->cap = s.gpu_memory_cap;
            bs->moved = s.gpu_values_moved;
            bs->ranged = s.gpu_kernels_in_ranges + s.gpu_kernels_in_partitions;
        }
    }
    if (code) {
        if (code != REDFOX_MISUSE) fprintf(stderr, "redfox tpch bench: q%02d failed:\n", q);
        if (d.count) rf_tool_finish_api(code, &d, d.count, rf_tpch_local_diag, 1);
        else if (failed_run) rf_tool_finish_api(code, db, rf_database_diag_count(db), database_diag, 1);
        else rf_tool_finish_api(code, p, rf_program_diag_count(p), program_diag, 1);
        *code_out = code;
    } else {
        bs->ran = 1;
        bs->median_s = rf_tpch_median(runs, repeat);
    }
    free(runs);
    rf_result_free(res);
    rf_program_free(p);
    rf_diags_free(&d);
    return !code;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void json_num(FILE *f, double v, int ok)
{
    if (ok && isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

typedef struct report {
    const char *device;
    char device_name[256];
    double sf, bw_gbps; /* bw_gbps <= 0: no floor */
    int repeat;
    char date[32];
    double total_ms, geomean_ms, power;
    int nran, all22;
    int no_fuse;
} report;

static double floor_ms(const report *r, const bstat *s)
{
    return s->bytes >= 0 && r->bw_gbps > 0 ? (double)s->bytes / (r->bw_gbps * 1e9) * 1e3 : -1;
}

static void print_table(const report *r, const bstat *bs, const int want[NQUERIES + 1])
{
    printf("redfox tpch bench: SF %g, %s (%s), %s, median of %d run%s%s\n\n", r->sf, r->device, r->device_name, r->date,
           r->repeat, r->repeat > 1 ? "s" : "",
           strcmp(r->device, "gpu") ? "" : r->no_fuse ? ", no kernel fusion" : ", kernel fusion on");
    printf("%-5s %11s %11s %11s %10s %8s %11s %8s\n", "query", "median ms", "cold ms", "MB moved", "floor ms", "ratio",
           "DuckDB ms", "speedup");
    for (int q = 1; q <= NQUERIES; q++) {
        if (!want[q]) continue;
        const bstat *s = &bs[q];
        char med[32] = "-", cold[32] = "-", mb[32] = "-", fl[32] = "-", ra[32] = "-", dk[32] = "-", sp[32] = "-";
        if (s->ran) {
            double f = floor_ms(r, s);
            snprintf(med, sizeof med, "%.2f", s->median_s * 1e3);
            snprintf(cold, sizeof cold, "%.2f", s->cold_s * 1e3);
            if (s->bytes >= 0) snprintf(mb, sizeof mb, "%.1f", (double)s->bytes / 1e6);
            if (f > 0) {
                snprintf(fl, sizeof fl, "%.3f", f);
                snprintf(ra, sizeof ra, "%.1f", s->median_s * 1e3 / f);
            }
            if (s->duckdb_ms > 0 && s->median_s > 0) snprintf(sp, sizeof sp, "%.2fx", s->duckdb_ms / (s->median_s * 1e3));
        }
        if (s->duckdb_ms >= 0) snprintf(dk, sizeof dk, "%.1f", s->duckdb_ms);
        printf("q%02d   %11s %11s %11s %10s %8s %11s %8s\n", q, med, cold, mb, fl, ra, dk, sp);
    }
    printf("\n%d quer%s: total %.2f ms, geometric mean %.3f ms\n", r->nran, r->nran == 1 ? "y" : "ies", r->total_ms,
           r->geomean_ms);
    if (r->all22)
        printf("Power@%g = 3600 * SF / geometric mean (s) = %.1f (refresh functions RF1/RF2 not run: not an "
               "official TPC-H power or QphH result)\n",
               r->sf, r->power);
    else
        printf("Power@SF: only over all 22 queries\n");
    if (!strcmp(r->device, "gpu")) {
        /* where a cold run's time goes, and what it copies (issue 21) */
        printf("\ncold runs: %-5s %9s %9s %9s %9s %9s %9s %11s %11s %11s %7s %7s\n", "query", "device", "program", "read",
               "copy", "run", "back", "MB to GPU", "MB to host", "peak MB", "moved", "ranged");
        for (int q = 1; q <= NQUERIES; q++) {
            const bstat *s = &bs[q];
            if (!want[q] || !s->ran) continue;
            printf("cold runs: q%02d   %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %11.1f %11.1f %11.1f %7lld %7lld\n", q,
                   s->ph_device * 1e3, s->ph_program * 1e3, s->ph_read * 1e3, s->ph_copy * 1e3, s->ph_run * 1e3,
                   s->ph_output * 1e3, (double)s->h2d / 1e6, (double)s->d2h / 1e6, (double)s->gpu_peak / 1e6,
                   (long long)s->moved, (long long)s->ranged);
        }
    }
    if (r->bw_gbps > 0) printf("floor: bytes moved / %g GB/s\n", r->bw_gbps);
    else printf("floor: no bandwidth known for this device (give --bandwidth GBPS)\n");
}

/* The JSON object built in memory, then written aside and renamed into
** place (common/rf_file.h); prints why it could not be. */
static int write_json(const char *path, const report *r, const bstat *bs, const int want[NQUERIES + 1])
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        fprintf(stderr, "redfox tpch bench: cannot write %s: out of memory\n", path);
        return 0;
    }
    fputs("{\n  \"device\": ", f);
    json_string(f, r->device);
    fputs(",\n  \"device_name\": ", f);
    json_string(f, r->device_name);
    fprintf(f, ",\n  \"sf\": %.6g,\n  \"date\": ", r->sf);
    json_string(f, r->date);
    fprintf(f, ",\n  \"repeat\": %d,\n  \"bandwidth_gbps\": ", r->repeat);
    json_num(f, r->bw_gbps, r->bw_gbps > 0);
    fputs(",\n  \"queries\": [", f);
    int first = 1;
    for (int q = 1; q <= NQUERIES; q++) {
        if (!want[q]) continue;
        const bstat *s = &bs[q];
        double fl = s->ran ? floor_ms(r, s) : -1;
        fprintf(f, "%s\n    {\"q\": %d, \"median_ms\": ", first ? "" : ",", q);
        json_num(f, s->median_s * 1e3, s->ran);
        fputs(", \"cold_ms\": ", f);
        json_num(f, s->cold_s * 1e3, s->ran);
        fputs(", \"bytes\": ", f);
        if (s->ran && s->bytes >= 0) fprintf(f, "%lld", (long long)s->bytes);
        else fputs("null", f);
        fputs(", \"floor_ms\": ", f);
        json_num(f, fl, fl > 0);
        fputs(", \"ratio\": ", f);
        json_num(f, fl > 0 ? s->median_s * 1e3 / fl : 0, fl > 0);
        fputs(", \"duckdb_ms\": ", f);
        json_num(f, s->duckdb_ms, s->duckdb_ms >= 0);
        fputs(", \"gpu_peak_bytes\": ", f);
        if (s->ran && s->gpu_peak > 0) fprintf(f, "%lld", (long long)s->gpu_peak);
        else fputs("null", f);
        fprintf(f, ", \"fused_kernels\": %d", (int)s->fused);
        if (s->ran && s->cap > 0)
            fprintf(f, ", \"gpu_memory_cap\": %lld, \"gpu_values_moved\": %lld, \"gpu_kernels_in_ranges\": %lld",
                    (long long)s->cap, (long long)s->moved, (long long)s->ranged);
        if (s->ran)
            fprintf(f,
                    ", \"h2d_bytes\": %lld, \"d2h_bytes\": %lld, \"cold_phases_ms\": {\"device\": %.3f, "
                    "\"program\": %.3f, \"read\": %.3f, \"copy\": %.3f, \"run\": %.3f, \"output\": %.3f}",
                    (long long)s->h2d, (long long)s->d2h, s->ph_device * 1e3, s->ph_program * 1e3, s->ph_read * 1e3,
                    s->ph_copy * 1e3, s->ph_run * 1e3, s->ph_output * 1e3);
        fputc('}', f);
        first = 0;
    }
    fputs("\n  ],\n  \"total_ms\": ", f);
    json_num(f, r->total_ms, r->nran > 0);
    fputs(",\n  \"geomean_ms\": ", f);
    json_num(f, r->geomean_ms, r->nran > 0);
    fputs(",\n  \"power\": ", f);
    json_num(f, r->power, r->all22);
    fprintf(f, ",\n  \"fused\": %s", r->no_fuse ? "false" : "true");
    fputs("\n}\n", f);
    int ok = !ferror(f);
    if (fclose(f) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "redfox tpch bench: cannot write %s: out of memory\n", path);
        free(text);
        return 0;
    }
    rf_diags d;
    rf_diags_init(&d);
    rf_file_out out;
    rf_file_remove_stale_unlocked(path); /* (a killed bench's temporary) */
    rf_status st = rf_file_out_open(&out, path, &d);
    if (!st) {
        rf_file_out_write(&out, text, (int64_t)len);
        st = rf_file_out_commit(&out, &d);
    }
    rf_file_out_abort(&out);
    rf_diags_print(&d, stderr);
    rf_diags_free(&d);
    free(text);
    return st == RF_OK;
}

int rf_tool_tpch_bench(int argc, char **argv)
{
    const char *C = "tpch bench";
    const char *data = NULL, *sfs = NULL, *queries = NULL, *device = "auto", *repeat = NULL, *bws = NULL,
               *json = NULL, *duckdb = NULL, *threads = NULL;
    int no_fuse = 0;
    rf_rt_tuning tune; /* the settings checked here as --set gives them, applied by rf_run */
    rf_rt_tuning_init(&tune);
    const char *sets[RF_TOOL_MAX_SETS];
    int nsets = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            rf_tool_print_settings(stdout);
            return RF_EXIT_OK;
        }
        if (!strcmp(a, "--no-fuse")) {
            no_fuse = 1;
            continue;
        }
        if ((m = rf_tool_opt_set(C, argc, argv, &i, &tune, sets, &nsets)) ||
            (m = rf_tool_opt_value(C, argc, argv, &i, "--data", &data)) ||
            (m = rf_tool_opt_value(C, argc, argv, &i, "--sf", &sfs)) ||
            (m = rf_tool_opt_value(C, argc, argv, &i, "--queries", &queries)) ||
            (m = rf_tool_opt_value(C, argc, argv, &i, "--device", &device)) ||
            (m = rf_tool_opt_value(C, argc, argv, &i, "--repeat", &repeat)) ||
            (m = rf_tool_opt_value(C, argc, argv, &i, "--bandwidth", &bws)) ||
            (m = rf_tool_opt_out(C, argc, argv, &i, "--json", &json)) ||
            (m = rf_tool_opt_value(C, argc, argv, &i, "--duckdb", &duckdb)) ||
            (m = rf_tool_opt_value(C, argc, argv, &i, "--threads", &threads))) {
            if (m < 0) return RF_EXIT_USAGE;
        } else {
            if (a[0] == '-' && a[1]) return rf_tool_unknown_option(C, a, usage);
            return rf_tool_usage_error(C, "unknown argument '%s'", a);
        }
    }
    if (!data) return rf_tool_usage_error(C, "--data DIR is required");
    if (json && duckdb && rf_tool_same_file(json, duckdb))
        return rf_tool_usage_error(C, "--json %s is the --duckdb file: the results would replace DuckDB's times "
                                   "(give another --json)", json);
    report r;
    memset(&r, 0, sizeof r);
    if (sfs && !parse_pos_double(sfs, &r.sf)) return rf_tool_usage_error(C, "--sf takes a positive number, e.g. 1 or 0.01");
    int want[NQUERIES + 1];
    if (queries) {
        const char *why = NULL;
        if (!rf_tpch_parse_queries(queries, want, &why)) return rf_tool_usage_error(C, "--queries %s: %s", queries, why);
    } else {
        for (int q = 0; q <= NQUERIES; q++) want[q] = q > 0;
    }
    /* rt: the flags as the runtime takes them, for compiling the GPU code
    ** ahead (rf_tpch_prepare_gpu); the runs take o */
    rf_rt_options rt;
    memset(&rt, 0, sizeof rt);
    rt.data_dir = data;
    rt.no_fuse = no_fuse;
    rt.tuning = &tune;
    rf_tool_apply_tuning(&tune); /* huge pages: process-wide, the command's to set */
    r.no_fuse = no_fuse;
    if (!rf_tool_run_options(C, device, threads, NULL, &rt, NULL)) return RF_EXIT_USAGE;
    rf_run_options o;
    rf_run_options_init_v2(&o, sizeof o);
    o.device = rt.device == RF_RT_DEVICE_CPU   ? REDFOX_DEVICE_CPU
               : rt.device == RF_RT_DEVICE_GPU ? REDFOX_DEVICE_GPU
                                               : REDFOX_DEVICE_AUTO;
    o.threads = rt.threads;
    o.no_fuse = no_fuse;
    o.cache_dir = tune.cache_dir;
    o.gpu_memory = tune.gpu_memory > 0 ? (uint64_t)tune.gpu_memory : 0;
    if (isatty(STDERR_FILENO)) o.progress = rf_tool_draw_progress; /* the inputs' loads, on a terminal */
    int64_t v;
    r.repeat = 5;
    if (repeat) {
        if (!rf_tool_parse_int(repeat, 1, MAX_REPEAT, &v))
            return rf_tool_usage_error(C, "--repeat takes a number from 1 to %d", MAX_REPEAT);
        r.repeat = (int)v;
    }
    r.bw_gbps = -1;
    if (bws && !parse_pos_double(bws, &r.bw_gbps))
        return rf_tool_usage_error(C, "--bandwidth takes a positive number of GB/s, e.g. 3000");
    bstat bs[NQUERIES + 1];
    memset(bs, 0, sizeof bs);
    for (int q = 0; q <= NQUERIES; q++) bs[q].duckdb_ms = -1, bs[q].bytes = -1;
    if (duckdb) {
        double ms[NQUERIES + 1];
        int found = 0;
        for (int q = 0; q <= NQUERIES; q++) ms[q] = -1;
        struct stat ds; /* (a folder opens, and its read fails as an I/O error: say what it is) */
        if (stat(duckdb, &ds) == 0 && S_ISDIR(ds.st_mode)) {
            fprintf(stderr, "redfox tpch bench: cannot read %s: it is a folder, not a file of DuckDB's times\n", duckdb);
            return RF_EXIT_USER;
        }
        const char *why = "";
        if (!read_duckdb(duckdb, ms, &found, &why)) {
            fprintf(stderr, "redfox tpch bench: cannot read %s: %s\n", duckdb, why);
            return RF_EXIT_USER;
        }
        if (!found) {
            fprintf(stderr, "redfox tpch bench: %s holds no query times ('q01 197.5 ms' lines or {\"q01\": 197.5})\n",
                    duckdb);
            return RF_EXIT_USER;
        }
        for (int q = 1; q <= NQUERIES; q++) bs[q].duckdb_ms = ms[q];
    }
    int mrc = rf_tpch_restore_missing(data);
    if (mrc) return mrc;
    struct stat sb;
    if (stat(data, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "redfox tpch bench: the data folder '%s' %s\n", data,
                stat(data, &sb) != 0 ? "does not exist" : "is not a folder");
        return RF_EXIT_USER;
    }
    /* a database read under its shared lock, from its supplier rows to the last query */
    int dblock = -1, lrc = rf_tpch_lock_data(data, &dblock);
    if (lrc) return lrc;
    /* the scale factor the data has: Power@SF and the JSON's sf are for it */
    int64_t nsupp = 0;
    char nowhy[512];
    int have = supplier_rows(data, &nsupp, nowhy, sizeof nowhy);
    if (have < 0) return RF_EXIT_USER;
    if (have) {
        double data_sf = (double)nsupp / SUPPLIERS_PER_SF;
        if (!sfs) r.sf = data_sf;
        else if (llround(r.sf * SUPPLIERS_PER_SF) != nsupp)
            return rf_tool_usage_error(C, "--sf %s, but the data in %s is of scale factor %g (supplier has %lld rows, "
                                       "%d per unit of scale factor)", sfs, data, data_sf, (long long)nsupp,
                                       SUPPLIERS_PER_SF);
    } else if (!sfs) {
        return rf_tool_usage_error(C, "give --sf X: the data's scale factor cannot be told from its supplier table (%s)",
                                   nowhy);
    }
    if (o.device == REDFOX_DEVICE_GPU) { /* once, not for each of the queries */
        char why[256];
        if (!rf_device_info(REDFOX_DEVICE_GPU, why, sizeof why)) {
            fprintf(stderr, "redfox tpch bench: --device gpu: no usable GPU: %s\n", why);
            return RF_EXIT_USER;
        }
    }
    /* the date, and the JSON file opened early so that a bad path fails fast */
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(r.date, sizeof r.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (json) { /* a temporary created and removed: the file itself is written at the end */
        rf_diags d;
        rf_diags_init(&d);
        rf_file_out probe;
        rf_status st = rf_file_out_open(&probe, json, &d);
        rf_file_out_abort(&probe);
        if (st) return rf_tool_finish(st, &d);
        rf_diags_free(&d);
    }

    /* the eight tables are read once and shared by the queries */
    char *settings = rf_tool_settings_text(sets, nsets);
    rf_database *db = NULL;
    int ocode = settings ? rf_open(data, &db) : REDFOX_NOMEM;
    if (!ocode) ocode = rf_database_keep_inputs(db, 1);
    if (ocode) {
        rf_tool_finish_database(ocode, db, 1);
        rf_close(db);
        free(settings);
        return RF_EXIT_USER;
    }
    o.settings = settings;
    int failed = 0;
    double t0 = rf_now();
    rf_tpch_prepare_gpu(want, &rt, r.repeat + 3, 1, NULL); /* the queries' GPU code compiled together */
    /* auto: the queries after each one, which a GPU started for it serves
    ** too (compiled ahead; one that does not compile is left out here and
    ** reported in its turn) */
    rf_program *progs[NQUERIES + 1];
    memset(progs, 0, sizeof progs);
    for (int q = 1; q <= NQUERIES && o.device == REDFOX_DEVICE_AUTO; q++) {
        if (!want[q]) continue;
        rf_diags cd;
        rf_diags_init(&cd);
        if (rf_tpch_compile_program(q, &progs[q], NULL, &cd) != REDFOX_OK) {
            rf_program_free(progs[q]);
            progs[q] = NULL;
        }
        rf_diags_free(&cd);
    }
    o.later_runs = r.repeat + 3;
    char first_device[16] = "";
    for (int q = 1; q <= NQUERIES; q++) {
        if (!want[q]) continue;
        char dev[16] = "";
        int code = REDFOX_OK;
        const rf_program *later[NQUERIES];
        o.nlater = 0;
        for (int k = q + 1; k <= NQUERIES; k++)
            if (progs[k]) later[o.nlater++] = progs[k];
        o.later = later;
        int ok = bench_query(q, db, &o, r.repeat, &bs[q], dev, sizeof dev, &code);
        o.later = NULL;
        o.nlater = 0;
        if (!ok) {
            if (code == REDFOX_MISUSE) { /* the same for every query: say it once */
                for (int k = 0; k <= NQUERIES; k++) rf_program_free(progs[k]);
                rf_close(db);
                free(settings);
                return RF_EXIT_USAGE;
            }
            failed++;
            continue;
        }
        if (!first_device[0]) snprintf(first_device, sizeof first_device, "%s", dev);
        fprintf(stderr, "q%02d: %.2f ms\n", q, bs[q].median_s * 1e3);
    }
    for (int k = 0; k <= NQUERIES; k++) rf_program_free(progs[k]);
    rf_close(db);
    rf_file_unlock(dblock); /* read: a writer may replace the database now */
    free(settings);
    fprintf(stderr, "benchmark took %.1f s\n", rf_now() - t0);
    r.device = first_device[0] ? first_device : o.device == REDFOX_DEVICE_GPU ? "gpu" : "cpu";

    if (!strcmp(r.device, "cpu")) {
        rf_device_info(REDFOX_DEVICE_CPU, r.device_name, sizeof r.device_name);
        if (r.bw_gbps <= 0) r.bw_gbps = 20;
    } else {
        if (!rf_device_info(REDFOX_DEVICE_GPU, r.device_name, sizeof r.device_name))
            snprintf(r.device_name, sizeof r.device_name, "GPU");
        if (r.bw_gbps <= 0) {
            if (strstr(r.device_name, "H200")) r.bw_gbps = 4300;
            else if (strstr(r.device_name, "H100")) r.bw_gbps = 3000;
        }
    }
    double logsum = 0;
    for (int q = 1; q <= NQUERIES; q++) {
        if (!want[q] || !bs[q].ran) continue;
        r.nran++;
        r.total_ms += bs[q].median_s * 1e3;
        logsum += log(bs[q].median_s > 0 ? bs[q].median_s : 1e-9);
    }
    if (r.nran) {
        r.geomean_ms = exp(logsum / r.nran) * 1e3;
        r.all22 = r.nran == NQUERIES;
        r.power = 3600 * r.sf / (r.geomean_ms / 1e3);
    }
    if (!r.nran) {
        fprintf(stderr, "redfox tpch bench: no query ran\n");
        return RF_EXIT_USER;
    }
    print_table(&r, bs, want);
    int printed = rf_tool_stdout_ok("tpch bench"); /* the JSON is written all the same */
    if (json && !write_json(json, &r, bs, want)) return RF_EXIT_USER;
    return failed || !printed ? RF_EXIT_USER : RF_EXIT_OK;
}
