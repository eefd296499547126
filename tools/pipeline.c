/*
** tools/pipeline.c: what the commands share around the compiler: reading
** program files ("-", pipes), the stages for the commands not yet on the
** library (import, exec, tpch: LogiQL source -> checked program -> query
** plan -> Harmony, .rfx -> Harmony), and the run options' flags
** (--threads: its bound and its note, alike for every command).
*/
#include "pipeline.h"
#include "rf_rt_dist.h"
#include "tools.h"
#include "rf_rfx.h"
#include "rf_sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

int rf_tool_is_rfx(const char *path) { return has_suffix(path, ".rfx"); }

int rf_tool_is_stream(const char *path)
{
    struct stat sb;
    return !strcmp(path, "-") || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode));
}

/* Reads all of f; 0, or an errno value. */
static int read_all(FILE *f, rf_buf *b)
{
    char tmp[65536];
    size_t n;
    errno = 0;
    while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) rf_buf_append(b, tmp, (int64_t)n);
    if (ferror(f)) return errno ? errno : EIO;
    return b->oom ? ENOMEM : 0;
}

rf_status rf_tool_read_sources(const char *const *paths, int32_t n, rf_arena *arena, rf_tool_sources *s, rf_diags *d)
{
    memset(s, 0, sizeof *s);
    s->names = rf_arena_alloc(arena, (size_t)(n + 1) * sizeof *s->names);
    s->texts = rf_calloc((size_t)n + 1, sizeof *s->texts);
    s->lens = rf_calloc((size_t)n + 1, sizeof *s->lens);
    if (!s->names || !s->texts || !s->lens) return RF_ENOMEM;
    s->n = n;
    int stdin_used = 0;
    rf_status worst = RF_OK;
    /* the regular files read so far, by device and inode: one given twice
    ** (a.logic a.logic, or ./a.logic) would declare everything twice */
    struct stat *seen = rf_calloc((size_t)n + 1, sizeof *seen);
    if (!seen) return RF_ENOMEM;
    for (int32_t i = 0; i < n; i++) {
        /* "-" is standard input; any other path is opened, so that /dev/stdin,
        ** pipes and FIFOs work too. Each is read once, whole: nothing reads
        ** a stream twice (once to tell a .rfx file by its first bytes, once
        ** for the text). */
        int std = !strcmp(paths[i], "-");
        const char *name = rf_arena_strdup(arena, std ? "<stdin>" : paths[i]);
        if (!name) {
            free(seen);
            return RF_ENOMEM;
        }
        s->names[i] = name;
        if (std && stdin_used++) {
            rf_error(d, rf_mkloc(name, 0, 0), "standard input ('-') can be read only once");
            worst = RF_EUSAGE;
            continue;
        }
        FILE *f = std ? stdin : fopen(paths[i], "rb");
        if (!f) {
            rf_error(d, rf_mkloc(name, 0, 0), "cannot read the program: %s", strerror(errno));
            if (!worst) worst = RF_EUSER;
            continue;
        }
        if (!std && !fstat(fileno(f), &seen[i]) && S_ISREG(seen[i].st_mode)) {
            int32_t j = 0;
            while (j < i && !(S_ISREG(seen[j].st_mode) && seen[j].st_dev == seen[i].st_dev &&
                              seen[j].st_ino == seen[i].st_ino))
                j++;
            if (j < i) {
                fclose(f);
                rf_error(d, rf_mkloc(name, 0, 0), "the program file is given twice (also as %s)", paths[j]);
                worst = RF_EUSAGE;
                continue;
            }
        }
        rf_buf b;
        rf_buf_init(&b);
        int err = read_all(f, &b);
        if (!std) fclose(f);
        if (err) {
            rf_buf_free(&b);
            if (err == ENOMEM) {
                free(seen);
                return RF_ENOMEM;
            }
            rf_error(d, rf_mkloc(name, 0, 0), "cannot read the program: %s", strerror(err));
            if (!worst) worst = RF_EUSER;
            continue;
        }
        s->lens[i] = b.len;
        s->texts[i] = b.len ? rf_buf_take(&b) : rf_strdup("");
        if (!s->texts[i]) {
            free(seen);
            return RF_ENOMEM;
        }
    }
    free(seen);
    return worst;
}

void rf_tool_sources_free(rf_tool_sources *s)
{
    for (int32_t i = 0; s->texts && i < s->n; i++) free((char *)s->texts[i]);
    free(s->texts);
    free(s->lens);
    memset(s, 0, sizeof *s);
}

int rf_tool_source_is_rfx(const rf_tool_sources *s, int32_t i)
{
    if (has_suffix(s->names[i], ".rfx")) return 1;
    return s->lens[i] >= RF_RFX_MAGIC_SIZE && memcmp(s->texts[i], RF_RFX_MAGIC, RF_RFX_MAGIC_SIZE) == 0;
}

/* The back half of compiling: checked program -> plan -> Harmony. */
static rf_status compile_checked(rf_fe_program *f, const rf_tool_opts *o, rf_qp_program **qp, rf_hir_program **hir,
                                 rf_diags *d)
{
    rf_qp_program *q = NULL;
    rf_qp_options qo = {.no_lftj = o->no_lftj, .no_exists = o->no_opt || o->no_exists, .no_partagg = o->no_partagg,
                        .no_hoist = o->no_hoist, .no_keyjoin = o->no_keyjoin};
    rf_status st = rf_qp_build_opts(f, &qo, &q, d);
    if (!st && !o->no_opt) st = rf_qp_optimize(q, d);
    if (!st && hir) st = rf_hir_lower(q, hir, d);
    if (st) {
        rf_qp_free(q);
        return st;
    }
    *qp = q;
    return RF_OK;
}

rf_status rf_tool_compile_logic(const char *const *paths, int32_t npaths, const rf_tool_opts *o, rf_arena *arena,
                                rf_fe_program **fe, rf_qp_program **qp, rf_hir_program **hir, rf_diags *d)
{
    rf_tool_sources s;
    *qp = NULL;
    if (hir) *hir = NULL;
    if (fe) *fe = NULL;
    rf_status st = rf_tool_read_sources(paths, npaths, arena, &s, d);
    for (int32_t i = 0; i < s.n && !st; i++)
        if (rf_tool_source_is_rfx(&s, i)) {
            rf_error(d, rf_mkloc(s.names[i], 0, 0), "this is a compiled program (.rfx), not LogiQL source");
            st = RF_EUSAGE;
        }
    if (!st) st = rf_tool_compile_sources(s.names, s.texts, s.lens, s.n, o, arena, fe, qp, hir, d);
    rf_tool_sources_free(&s);
    return st;
}

rf_status rf_tool_compile_sources(const char *const *names, const char *const *texts, const int64_t *lens, int32_t n,
                                  const rf_tool_opts *o, rf_arena *arena, rf_fe_program **fe, rf_qp_program **qp,
                                  rf_hir_program **hir, rf_diags *d)
{
    rf_ast_program *ast = NULL;
    rf_fe_program *f = NULL;
    *qp = NULL;
    if (hir) *hir = NULL;
    rf_status st;
    if (o && o->inputs_only) {
        rf_diags ld;
        rf_diags_init(&ld);
        st = rf_fe_load_sources(names, texts, lens, n, arena, &ast, &f, &ld);
        for (int64_t i = 0; i < ld.count; i++)
            if (!rf_fe_diag_is_no_output(&ld.items[i])) rf_diag_add(d, ld.items[i].sev, ld.items[i].loc, "%s", ld.items[i].msg);
        rf_diags_free(&ld);
    } else {
        st = rf_fe_load_sources(names, texts, lens, n, arena, &ast, &f, d);
    }
    if (fe) *fe = f;
    if (st) return st;
    return compile_checked(f, o, qp, hir, d);
}

/* The program (and the PTX0 section, when ptx0 is not NULL) of an open .rfx file; closes f. */
static rf_status hir_of_rfx(rf_rfx_file *f, const char *name, rf_hir_program **hir, rf_buf *ptx0, rf_buf *gpln,
                            rf_diags *d)
{
    const void *data;
    uint64_t size;
    if (!rf_rfx_section(f, RF_RFX_TAG_HARMONY, &data, &size)) {
        rf_error(d, rf_mkloc(name, 0, 0), "this .rfx file holds no program (no HIRS section)");
        rf_rfx_close(f);
        return RF_EUSER;
    }
    rf_status st = rf_hir_deserialize(name, data, size, hir, d);
    if (!st && ptx0 && rf_rfx_section(f, RF_RFX_TAG_PTX, &data, &size)) {
        rf_buf_append(ptx0, data, (int64_t)size);
        if (ptx0->oom) st = RF_ENOMEM;
    }
    if (!st && gpln && rf_rfx_section(f, RF_RFX_TAG_GPU_PLAN, &data, &size)) {
        rf_buf_append(gpln, data, (int64_t)size);
        if (gpln->oom) st = RF_ENOMEM;
    }
    rf_rfx_close(f);
    return st;
}

rf_status rf_tool_read_rfx(const char *path, rf_hir_program **hir, rf_buf *ptx0, rf_buf *gpln, rf_diags *d)
{
    rf_rfx_file *f = NULL;
    *hir = NULL;
    rf_status st = rf_rfx_open_file(path, &f, d);
    return st ? st : hir_of_rfx(f, path, hir, ptx0, gpln, d);
}

int rf_tool_threads(const char *cmd, const char *s, int *threads)
{
    int64_t v;
    if (!rf_tool_parse_int(s, 1, RF_TOOL_MAX_THREADS, &v))
        return rf_tool_usage_error(cmd, "--threads '%s': a number from 1 to %d (default: one a CPU, %d online here)", s,
                                   RF_TOOL_MAX_THREADS, rf_online_cpus()),
               0;
    *threads = (int)v;
    /* many more threads than CPUs take turns on them, which costs more
    ** than it gains (the quickstart: 0.01 s on 2 threads, 0.99 s on 1024 on
    ** 2 CPUs); allowed (the same bound on every machine, and a few more
    ** than the CPUs exercise the parallel paths), but said once, by rank 0 */
    int cpus = rf_online_cpus();
    if (v > RF_TOOL_THREADS_NOTE_MIN && v > 4 * (int64_t)cpus && rf_rt_dist_launch_rank() == 0)
        fprintf(stderr,
                "redfox %s: note: --threads %lld is over four times the %d CPUs online here: the threads take turns on "
                "them, slower than one a CPU (the default)\n",
                cmd, (long long)v, cpus);
    return 1;
}

int rf_tool_run_options(const char *cmd, const char *device, const char *threads, const char *format, rf_rt_options *o,
                        rf_rt_format *fmt)
{
    if (!strcmp(device, "auto")) o->device = RF_RT_DEVICE_AUTO;
    else if (!strcmp(device, "cpu")) o->device = RF_RT_DEVICE_CPU;
    else if (!strcmp(device, "gpu")) o->device = RF_RT_DEVICE_GPU;
    else return rf_tool_usage_error(cmd, "unknown device '%s' (auto, cpu or gpu)", device), 0;
    if (fmt && !strcmp(format, "table")) *fmt = RF_RT_FORMAT_TABLE;
    else if (fmt && !strcmp(format, "csv")) *fmt = RF_RT_FORMAT_CSV;
    else if (fmt && !strcmp(format, "tbl")) *fmt = RF_RT_FORMAT_TBL;
    else if (fmt) return rf_tool_usage_error(cmd, "unknown format '%s' (table, csv or tbl)", format), 0;
    if (threads && !rf_tool_threads(cmd, threads, &o->threads)) return 0;
    return 1;
}

int rf_tool_opt_set(const char *cmd, int argc, char **argv, int *i, rf_rt_tuning *t, const char **sets, int *nsets)
{
    const char *v = NULL;
    /* the cache's named options: --cache-dir DIR is cache_dir=DIR, --no-cache
    ** cache_dir=; they are alternatives, and both given is a slip to say, not
    ** one to settle by their order (a process parses one command line) */
    static int cache_opts; /* 1: --cache-dir seen, 2: --no-cache seen */
    int m = !strcmp(argv[*i], "--no-cache") ? 1 : rf_tool_opt_value(cmd, argc, argv, i, "--cache-dir", &v);
    if (m > 0) {
        cache_opts |= v ? 1 : 2;
        if (cache_opts == 3)
            return rf_tool_usage_error(cmd, "--cache-dir and --no-cache are alternatives: give one of them"), -1;
        t->cache_dir = v ? v : "";
    }
    if (m) return m;
    char why[200];
    /* --gpu-memory N is gpu_memory=N */
    m = rf_tool_opt_value(cmd, argc, argv, i, "--gpu-memory", &v);
    if (m > 0) {
        char assign[96];
        snprintf(assign, sizeof assign, "gpu_memory=%.80s", v);
        if (rf_rt_tuning_set(t, assign, why, sizeof why)) return rf_tool_usage_error(cmd, "--gpu-memory: %s", why), -1;
    }
    if (m) return m;
    m = rf_tool_opt_list_value(cmd, argc, argv, i, "--set", &v);
    if (m <= 0) return m;
    if (rf_rt_tuning_set(t, v, why, sizeof why)) {
        /* a name none of the settings has, close to one: said which */
        const char *names[64];
        int64_t n = 0;
        while (n < 64 && (names[n] = rf_rt_tuning_name(n))) n++;
        const char *eq = strchr(v, '=');
        const char *near = eq ? rf_tool_suggest(v, (size_t)(eq - v), names, n) : NULL;
        if (near) return rf_tool_usage_error(cmd, "--set: %s; did you mean '%s'?", why, near), -1;
        return rf_tool_usage_error(cmd, "--set: %s", why), -1;
    }
    if (sets) {
        if (*nsets == RF_TOOL_MAX_SETS)
            return rf_tool_usage_error(cmd, "too many --set (at most %d)", RF_TOOL_MAX_SETS), -1;
        sets[(*nsets)++] = v;
    }
    return 1;
}

char *rf_tool_settings_text(const char *const *sets, int n)
{
    rf_buf b;
    rf_buf_init(&b);
    for (int k = 0; k < n; k++) {
        if (!strncmp(sets[k], "cache_dir=", 10)) continue;
        if (b.len) rf_buf_putc(&b, ',');
        rf_buf_append(&b, sets[k], (int64_t)strlen(sets[k]));
    }
    rf_buf_putc(&b, '\0');
    return b.oom ? NULL : rf_buf_take(&b);
}

void rf_tool_print_settings(FILE *f)
{
    rf_buf b;
    rf_buf_init(&b);
    rf_rt_tuning_help(&b, "  ");
    fprintf(f, "\nsettings (--set NAME=VALUE; they change how a run computes, never what, but for\n"
               "rank_timeout_s, a limit):\n%s",
            rf_buf_cstr(&b));
    rf_buf_free(&b);
}

void rf_tool_apply_tuning(const rf_rt_tuning *t) { rf_rt_hugepages(t->hugepages); }

void rf_tool_print_profile(const rf_rt_result *res, FILE *f) { rf_rt_profile_write(res, f); }
