/*
** tools/pipeline.c: the compiler pipeline as the commands use it:
** LogiQL source -> checked program -> query plan -> Harmony -> .rfx, and
** .rfx -> Harmony for `run` and `dump`.
*/
#include "pipeline.h"
#include "rf_rt_dist.h"
#include "tools.h"
#include "rf_gpu_codegen.h"
#include "rf_rfx.h"
#include "rf_rt_gpu.h"

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
    for (int32_t i = 0; i < n; i++) {
        /* "-" is standard input; any other path is opened, so that /dev/stdin,
        ** pipes and FIFOs work too. Each is read once, whole: nothing reads
        ** a stream twice (once to tell a .rfx file by its first bytes, once
        ** for the text). */
        int std = !strcmp(paths[i], "-");
        const char *name = rf_arena_strdup(arena, std ? "<stdin>" : paths[i]);
        if (!name) return RF_ENOMEM;
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
        rf_buf b;
        rf_buf_init(&b);
        int err = read_all(f, &b);
        if (!std) fclose(f);
        if (err) {
            rf_buf_free(&b);
            if (err == ENOMEM) return RF_ENOMEM;
            rf_error(d, rf_mkloc(name, 0, 0), "cannot read the program: %s", strerror(err));
            if (!worst) worst = RF_EUSER;
            continue;
        }
        s->lens[i] = b.len;
        s->texts[i] = b.len ? rf_buf_take(&b) : rf_strdup("");
        if (!s->texts[i]) return RF_ENOMEM;
    }
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

rf_status rf_tool_load_ast(const char *const *paths, int32_t npaths, rf_arena *arena, rf_ast_program **ast,
                           rf_fe_program **fe, rf_diags *d)
{
    rf_tool_sources s;
    *ast = NULL;
    if (fe) *fe = NULL;
    rf_status st = rf_tool_read_sources(paths, npaths, arena, &s, d);
    for (int32_t i = 0; i < s.n && !st; i++)
        if (rf_tool_source_is_rfx(&s, i)) {
            rf_error(d, rf_mkloc(s.names[i], 0, 0),
                     "a compiled program (.rfx) holds Harmony and PTX only: use --harmony, --fused, --cuda or --ptx");
            st = RF_EUSAGE;
        }
    if (!st) st = rf_fe_load_sources(s.names, s.texts, s.lens, s.n, arena, ast, fe, d);
    rf_tool_sources_free(&s);
    return st;
}

/* The back half of compiling: checked program -> plan -> Harmony. */
static rf_status compile_checked(rf_fe_program *f, const rf_tool_opts *o, rf_qp_program **qp, rf_hir_program **hir,
                                 rf_diags *d)
{
    rf_qp_program *q = NULL;
    rf_qp_options qo = {.no_lftj = o->no_lftj, .no_exists = o->no_opt || o->no_exists};
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
    rf_status st = rf_fe_load_sources(names, texts, lens, n, arena, &ast, &f, d);
    if (fe) *fe = f;
    if (st) return st;
    return compile_checked(f, o, qp, hir, d);
}

rf_status rf_tool_write_rfx(const rf_hir_program *p, const char *path, const rf_tool_opts *o, rf_diags *d)
{
    rf_buf hirs, schm, ptx0;
    rf_buf_init(&hirs);
    rf_buf_init(&schm);
    rf_buf_init(&ptx0);
    rf_status st = rf_hir_serialize(p, &hirs);
    /* SCHM: the inputs and outputs, readable without decoding the program */
    int32_t n = 0;
    for (int32_t i = 0; i < p->nvars; i++)
        n += p->vars[i]->role == RF_HIR_ROLE_INPUT || p->vars[i]->role == RF_HIR_ROLE_OUTPUT;
    rf_rfx_put_u32(&schm, 1);
    rf_rfx_put_u32(&schm, (uint32_t)n);
    for (int32_t i = 0; i < p->nvars; i++) {
        const rf_hir_var *v = p->vars[i];
        if (v->role != RF_HIR_ROLE_INPUT && v->role != RF_HIR_ROLE_OUTPUT) continue;
        rf_rfx_put_u8(&schm, v->role == RF_HIR_ROLE_INPUT ? 0 : 1);
        rf_rfx_put_cstr(&schm, v->name);
        rf_rfx_put_cstr(&schm, v->role == RF_HIR_ROLE_INPUT ? v->input_file : v->output_name);
        rf_rfx_put_u32(&schm, (uint32_t)v->ncols);
        for (int32_t c = 0; c < v->ncols; c++) {
            rf_rfx_put_u8(&schm, (uint8_t)v->types[c]);
            rf_rfx_put_cstr(&schm, v->colnames[c] ? v->colnames[c] : "");
        }
    }
    if (!st && (hirs.oom || schm.oom)) st = RF_ENOMEM;
    /* GPLN: the GPU plans, made once here so that runs only read them; a
    ** program the GPU backend cannot take gets none (it runs on the CPU) */
    rf_gpu_plan *plan = NULL;
    rf_buf gpln;
    rf_buf_init(&gpln);
    rf_diags quiet;
    rf_diags_init(&quiet);
    int gpu_ok = rf_gpu_plan_check(p, &quiet) == RF_OK;
    rf_diags_free(&quiet);
    char why[8];
    if (!st && !gpu_ok && rf_gpu_nvrtc_available(why, sizeof why)) {
        st = rf_gpu_plan_check(p, d); /* an error where NVRTC would compile it, as always */
    } else if (!st && gpu_ok) {
        st = rf_gpu_plan_build(p, 1, &plan, d);
        if (!st) st = rf_gpu_plan_encode(p, plan, &gpln);
    }
    rf_gpu_nvrtc_opts go = {o ? o->gpu_arch : NULL, o ? o->cache_dir : NULL, o ? o->no_fuse : 0};
    if (!st && plan) st = rf_gpu_make_ptx0(p, plan, &go, &ptx0, d);
    rf_gpu_plan_free(plan);
    rf_rfx_writer *w = st ? NULL : rf_rfx_writer_new();
    if (!st && !w) st = RF_ENOMEM;
    if (!st) st = rf_rfx_writer_add(w, RF_RFX_TAG_SCHEMA, schm.data, (uint64_t)schm.len);
    if (!st) st = rf_rfx_writer_add(w, RF_RFX_TAG_HARMONY, hirs.data, (uint64_t)hirs.len);
    if (!st && gpln.len) st = rf_rfx_writer_add(w, RF_RFX_TAG_GPU_PLAN, gpln.data, (uint64_t)gpln.len);
    if (!st && ptx0.len) st = rf_rfx_writer_add(w, RF_RFX_TAG_PTX, ptx0.data, (uint64_t)ptx0.len);
    rf_buf_free(&gpln);
    if (!st) st = rf_rfx_writer_write_file(w, path, d);
    /* on a machine with a GPU, its cubin too, into the JIT cache: the
    ** file's first run then skips the driver's JIT (a run would make it) */
    if (!st && ptx0.len) (void)rf_rt_gpu_link_ptx0(ptx0.data, (uint64_t)ptx0.len, o ? o->cache_dir : NULL);
    rf_rfx_writer_free(w);
    rf_buf_free(&hirs);
    rf_buf_free(&schm);
    rf_buf_free(&ptx0);
    return st;
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

rf_status rf_tool_load_program(const char *const *paths, int32_t npaths, const rf_tool_opts *o, rf_arena *arena,
                               rf_hir_program **hir, rf_buf *ptx0, rf_buf *gpln, int *is_rfx, rf_diags *d)
{
    rf_tool_sources s;
    *hir = NULL;
    if (is_rfx) *is_rfx = 0;
    rf_status st = rf_tool_read_sources(paths, npaths, arena, &s, d);
    int32_t rfx = -1;
    for (int32_t i = 0; i < s.n && !st && rfx < 0; i++)
        if (rf_tool_source_is_rfx(&s, i)) rfx = i;
    if (!st && rfx >= 0 && npaths > 1) {
        rf_error(d, rf_mkloc(s.names[rfx], 0, 0), "a compiled program (.rfx) cannot be combined with other files");
        st = RF_EUSAGE;
    } else if (!st && rfx >= 0) {
        if (is_rfx) *is_rfx = 1;
        rf_rfx_file *f = NULL;
        st = rf_rfx_open_bytes(s.names[0], s.texts[0], (uint64_t)s.lens[0], &f, d);
        if (!st) st = hir_of_rfx(f, s.names[0], hir, ptx0, gpln, d);
    } else if (!st) {
        rf_qp_program *qp = NULL;
        st = rf_tool_compile_sources(s.names, s.texts, s.lens, s.n, o, arena, NULL, &qp, hir, d);
        rf_qp_free(qp);
    }
    rf_tool_sources_free(&s);
    return st;
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
    int64_t v;
    if (threads) {
        if (!rf_tool_parse_int(threads, 1, 1024, &v))
            return rf_tool_usage_error(cmd, "--threads takes a number from 1 to 1024"), 0;
        o->threads = (int)v;
    }
    return 1;
}

int rf_tool_opt_set(const char *cmd, int argc, char **argv, int *i, rf_rt_tuning *t)
{
    const char *v = NULL;
    /* the cache's named options: --cache-dir DIR is cache_dir=DIR, --no-cache cache_dir= */
    if (!strcmp(argv[*i], "--no-cache")) {
        t->cache_dir = "";
        return 1;
    }
    int m = rf_tool_opt_value(cmd, argc, argv, i, "--cache-dir", &v);
    if (m > 0 && !v[0]) return rf_tool_usage_error(cmd, "--cache-dir takes a folder (--no-cache: none)"), -1;
    if (m > 0) t->cache_dir = v;
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
    m = rf_tool_opt_value(cmd, argc, argv, i, "--set", &v);
    if (m <= 0) return m;
    if (rf_rt_tuning_set(t, v, why, sizeof why)) return rf_tool_usage_error(cmd, "--set: %s", why), -1;
    return 1;
}

void rf_tool_print_settings(FILE *f)
{
    rf_buf b;
    rf_buf_init(&b);
    rf_rt_tuning_help(&b, "  ");
    fprintf(f, "\nsettings (--set NAME=VALUE; they change how a run computes, never what):\n%s", rf_buf_cstr(&b));
    rf_buf_free(&b);
}

void rf_tool_apply_tuning(const rf_rt_tuning *t) { rf_rt_hugepages(t->hugepages); }

void rf_tool_print_profile(const rf_rt_result *res, FILE *f)
{
    fprintf(f, "profile (device %s): load %.6f s, run %.6f s\n", res->device, res->load_seconds, res->run_seconds);
    fprintf(f, "%-6s %-12s %-6s %6s %10s %12s %12s %14s\n", "kernel", "kind", "device", "calls", "ms", "rows in",
            "rows out", "bytes moved");
    for (int32_t i = 0; i < res->nstats; i++) {
        const rf_rt_kstat *s = &res->stats[i];
        if (!s->calls) continue;
        char rin[24], rout[24];
        snprintf(rin, sizeof rin, "%lld", (long long)s->rows_in);
        snprintf(rout, sizeof rout, "%lld", (long long)s->rows_out);
        fprintf(f, "k%-5d %-12s %-6s %6lld %10.3f %12s %12s %14lld\n", s->kernel, s->what, s->device,
                (long long)s->calls, s->seconds * 1e3, s->rows_in < 0 ? "-" : rin, s->rows_out < 0 ? "-" : rout,
                (long long)(s->bytes_in + s->bytes_out));
    }
    if (!strcmp(res->device, "gpu")) {
        double gbs = res->copy_seconds > 0 ? (double)res->h2d_bytes / res->copy_seconds * 1e-9 : 0;
        fprintf(f,
                "phases: device %.3f ms, program %.3f ms, read %.3f ms, copy %.3f ms (%llu bytes to the device, "
                "%.2f GB/s), run %.3f ms, outputs back %.3f ms (%llu bytes to the host); device memory "
                "allocations %.3f ms (in the copy or the run)\n",
                res->device_seconds * 1e3, res->program_seconds * 1e3, res->read_seconds * 1e3,
                res->copy_seconds * 1e3, (unsigned long long)res->h2d_bytes, gbs, res->run_seconds * 1e3,
                res->output_seconds * 1e3, (unsigned long long)res->d2h_bytes, res->gpu_alloc_seconds * 1e3);
        if (res->start_aside)
            fprintf(f,
                    "start: device and program (%.3f ms) on a thread beside the reading (%.3f ms); the reading then "
                    "waited %.3f ms for it\n",
                    (res->device_seconds + res->program_seconds) * 1e3, res->read_seconds * 1e3,
                    res->start_wait_seconds * 1e3);
    } else {
        fprintf(f, "phases: read %.3f ms, run %.3f ms\n", res->read_seconds * 1e3, res->run_seconds * 1e3);
    }
    if (res->place_auto) {
        int gpu = !strcmp(res->device, "gpu");
        char g[48];
        if (res->place_gpu_s < 0) snprintf(g, sizeof g, "- (no usable GPU)");
        else snprintf(g, sizeof g, "%.6f s", res->place_gpu_s);
        fprintf(f, "auto: predicted cpu %.6f s, gpu %s -> chose %s (model: %lld records)\n", res->place_cpu_s, g,
                res->device, (long long)res->place_records);
        double start = !gpu ? 0 : res->start_aside ? res->start_wait_seconds : res->device_seconds + res->program_seconds;
        double copy = gpu ? res->copy_seconds : 0;
        fprintf(f, "auto: actual %s %.6f s (start not hidden %.6f s, copies %.6f s, run and outputs %.6f s; reading "
                   "%.6f s, the same on both devices, not counted)\n",
                res->device, start + copy + res->run_seconds + res->output_seconds, start, copy,
                res->run_seconds + res->output_seconds, res->read_seconds);
    }
    if (res->db_blocks)
        fprintf(f, "database: %lld of %lld blocks skipped (min/max outside every constant range filter)\n",
                (long long)res->db_blocks_skipped, (long long)res->db_blocks);
    if (!strcmp(res->device, "gpu")) {
        int64_t moved = 0;
        for (int32_t i = 0; i < res->nstats; i++) moved += res->stats[i].bytes_in + res->stats[i].bytes_out;
        fprintf(f, "gpu: %d fused kernel runs, peak device memory %llu bytes, %lld bytes moved\n", (int)res->gpu_fused,
                (unsigned long long)res->gpu_peak_bytes, (long long)moved);
        if (res->gpu_memory_cap || res->gpu_spills || res->gpu_parted || res->gpu_radixed) {
            char cap[48];
            snprintf(cap, sizeof cap, "%llu bytes", (unsigned long long)res->gpu_memory_cap);
            fprintf(f,
                    "gpu memory cap: %s; %lld values moved to host memory for room, %llu bytes out, %llu "
                    "bytes back; %lld kernels run in %lld row ranges; %lld kernels run in %lld key partitions\n",
                    res->gpu_memory_cap ? cap : "none", (long long)res->gpu_spills,
                    (unsigned long long)res->gpu_spill_out_bytes, (unsigned long long)res->gpu_spill_in_bytes,
                    (long long)res->gpu_parted, (long long)res->gpu_parts, (long long)res->gpu_radixed,
                    (long long)res->gpu_radix_parts);
        }
        fprintf(f,
                "gpu host time: %lld launches %.3f ms, %lld waits for the GPU %.3f ms, %lld CUB calls %.3f ms, "
                "%lld other calls %.3f ms (besides the profile's own wait after each kernel)\n",
                (long long)res->gpu_launches, res->gpu_launch_seconds * 1e3, (long long)res->gpu_waits,
                res->gpu_wait_seconds * 1e3, (long long)res->gpu_cub_calls, res->gpu_cub_seconds * 1e3,
                (long long)res->gpu_other_calls, res->gpu_other_seconds * 1e3);
    }
    if (res->ranks && res->nranks > 1) {
        /* kernels above are rank 0's; each rank's run time includes its waits for the others */
        int32_t slow = 0;
        for (int32_t r = 0; r < res->nranks; r++) {
            const rf_rt_rankstat *s = &res->ranks[r];
            fprintf(f, "rank %d of %d: run %.3f ms (%.3f ms waiting for other ranks), %lld bytes sent, %lld received",
                    (int)r, (int)res->nranks, s->run_seconds * 1e3, s->wait_seconds * 1e3, (long long)s->bytes_sent,
                    (long long)s->bytes_received);
            if (res->rank_exchange[0])
                fprintf(f, " through host memory; %lld sent, %lld received device to device", (long long)s->dev_bytes_sent,
                        (long long)s->dev_bytes_received);
            fputc('\n', f);
            if (s->run_seconds - s->wait_seconds > res->ranks[slow].run_seconds - res->ranks[slow].wait_seconds) slow = r;
        }
        if (res->rank_exchange[0]) fprintf(f, "ranks exchange rows %s\n", res->rank_exchange);
        fprintf(f, "slowest rank: %d (%.3f ms of work besides waiting)\n", (int)slow,
                (res->ranks[slow].run_seconds - res->ranks[slow].wait_seconds) * 1e3);
    }
}
