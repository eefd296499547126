/*
** runtime/gpu/rt_gpu_exec.c: the GPU executor's entry: rf_rt_gpu_device,
** the device executor interface (runtime/rt_device.h) on the GPU.
**
** Owns: the device's life in a run: opened (real or emulated), the
** program's GPU plans read (the .rfx's GPLN: kernel plans and fused kernels,
** made once by `redfox compile`), the program's kernels loaded (the .rfx's
** PTX0 when its key binds it to those plans, else NVRTC), the inputs the driver read on the host
** copied once, outputs copied back, the device's figures in the result; and
** the dispatch of one kernel by kind to the file that runs it (the driver,
** runtime/rt_run.c, walks the blocks; rt_gpu_stage.c runs one of them).
**
** Row order. Every kernel produces the rows in exactly the order the CPU
** backend does: filters keep input order (flags, scan, scatter); joins emit
** pairs by left row, then right row (the build side is radix-sorted by hash,
** which keeps rows of one hash ascending); distinct rows and groups are
** numbered by first occurrence (hash tables keep the lowest equal row with
** atomicMin; rows ordered by their first column are deduplicated by a walk
** over each run of equal first columns, which keeps the same rows); sorts
** are stable LSD radix sorts. So outputs, error messages
** and fixpoints are byte for byte the CPU's.
**
** Errors. Kernels record the lowest failing row in an error word; the host
** then re-evaluates that one row with the CPU evaluator, which words the
** message exactly as a CPU run does. Counts are read back after kernels
** whose output size depends on the data (one synchronization each); nothing
** else waits for the GPU until the outputs are copied back.
*/
#include "rt_gpu_internal.h"

#include "rf_rt_input.h"

#include "rf_sys.h"
#include <stdlib.h>
#include <string.h>

/* One empty launch at the end of the load. After the host's part of a load
** (reading and copying the inputs, no kernel for a second or more) the
** first launch and the first clear of a run took 25-35 us each on an H100,
** against 4-5 us when a kernel ran just before (docs/BENCHMARKS.md, fifth
** session): the GPU's start belongs to the load, like loading the kernels. */
static rf_status wake(gx *x)
{
    rf_gpu_args a; /* no rows: one block that does nothing */
    memset(&a, 0, sizeof a);
    return rf_gx_launch(x, "rf_gather", 1, &a);
}

rf_status rf_gx_run_kernel(gx *x, const rf_hir_kernel *k)
{
    switch (k->kind) {
    case RF_HIR_MAP:
    case RF_HIR_JOIN_MAP:
    case RF_HIR_GATHER_MAP: return rf_gx_k_map(x, k);
    case RF_HIR_JOIN_INDEX:
    case RF_HIR_ANTI_INDEX: return rf_gx_k_join_index(x, k);
    case RF_HIR_GROUP: return rf_gx_k_group(x, k);
    case RF_HIR_REDUCE: return rf_gx_k_reduce(x, k);
    case RF_HIR_CONCAT: return rf_gx_k_concat(x, k);
    case RF_HIR_UNIQUE:
    case RF_HIR_DIFFERENCE: return rf_gx_k_unique(x, k);
    case RF_HIR_SORT: return rf_gx_k_sort(x, k);
    case RF_HIR_GATHER: return rf_gx_k_gather(x, k);
    case RF_HIR_COPY: return rf_gx_k_copy(x, k);
    case RF_HIR_FACTS: return rf_gx_k_facts(x, k);
    case RF_HIR_CLEAR: rf_gx_var_clear(x, k->out); return RF_OK;
    case RF_HIR_INSERT: return rf_gx_k_insert(x, k);
    case RF_HIR_LFTJ: return rf_gx_k_lftj(x, k);
    }
    return RF_EINTERNAL;
}

/* ---- inputs: loaded on the host (the dictionary lives there), then copied once ---- */

/* Uploads input variable var's host rows (read by the driver) and frees
** them: only the columns some kernel reads (the analysis that reads only
** those columns of a database, rt_db_input.c); the others get no device
** memory and no copy. */
static rf_status gpu_load(void *dev, int32_t var, rf_rt_rel *r, int borrowed, const uint64_t *stamps,
                          struct rf_rt_stored *const *stored)
{
    gx *x = dev;
    const rf_hir_var *v = x->p->vars[var];
    gval g;
    memset(&g, 0, sizeof g);
    uint8_t *read = rf_malloc((size_t)v->ncols + 1);
    rf_status st = read ? RF_OK : RF_ENOMEM;
    if (read) rf_rt_input_cols_read(x->p, var, read);
    int64_t ndiag = x->d->count, nerr = x->d->nerrors;
    /* with an input cache: columns it holds are not copied again */
    if (!st && stamps && x->gc) st = rf_gx_cache_upload_rel(x, r, v->types, v->ncols, read, stamps, stored, &g);
    else if (!st) st = rf_gx_upload_rel(x, r, v->types, v->ncols, read, stored, &g);
    if (st == RF_EDEVMEM) {
        /* no room on the device even for this input alone: it waits in host
        ** memory until a kernel reads it (at once, or in ranges), columns
        ** held as stored widened there (their memory the input reader's,
        ** as a borrowed column's) */
        rf_gx_val_clear(x, &g, v->ncols);
        rf_gx_held_drop_diags(x, ndiag, nerr);
        st = RF_OK;
        for (int32_t c = 0; c < v->ncols && stored && !st; c++)
            if (stored[c] && r->nrows > 0 && !(r->cols[c] = (void *)rf_rt_stored_widen(stored[c], x->threads)))
                st = RF_ENOMEM;
        if (!st) st = rf_gx_held_rel(x, r, v->types, v->ncols, read, borrowed, &g);
    }
    free(read);
    if (borrowed) {
        free(r->cols);
    } else {
        r->types = v->types;
        rf_rt_rel_free(r);
    }
    if (!st) rf_gx_var_set(x, var, &g);
    return st;
}

/* Does a kernel read string bytes on the device (device islands, string
** sort keys, min/max of strings)? Then the dictionary is copied up front.
** Not for string sort keys and min/max alone: their ranks are made on the
** host for few rows (rt_gpu_str.c), and for many the dictionary is copied
** when they first need it (the run's time, not the load's). */
static int needs_dict(const gx *x)
{
    const rf_hir_program *p = x->p;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            if (k->id >= 0 && k->id < x->nkernels) {
                if (x->plans[k->id].nrowstr > 0) return 1;
                for (int32_t i = 0; i < x->plans[k->id].nisland; i++)
                    if (x->plans[k->id].islands[i].dev) return 1;
            }
        }
    return 0;
}

int rf_rt_gpu_available(char *why, size_t n)
{
    if (rf_gpu_emulated()) {
        if (why && n) snprintf(why, n, "an emulated GPU (RF_GPU_EMULATE is set: kernels run on the CPU)");
        return 1;
    }
    return rf_gpu_cuda_probe(why, n);
}

int rf_rt_gpu_count(char *why, size_t n)
{
    if (rf_gpu_emulated()) {
        if (why && n) snprintf(why, n, "an emulated GPU (RF_GPU_EMULATE is set: kernels run on the CPU)");
        return 1;
    }
    return rf_gpu_cuda_count(why, n);
}

int64_t rf_rt_gpu_pci(void) { return rf_gpu_emulated() ? 0 : rf_gpu_cuda_pci(); }
int rf_rt_gpu_emulated(void) { return rf_gpu_emulated(); }

/* the emulator opened once in this process (its start paid, as a driver's
** is once the real GPU's has run) */
static int emulator_opened;

int rf_rt_gpu_started(void)
{
    if (rf_gpu_emulated()) return __atomic_load_n(&emulator_opened, __ATOMIC_ACQUIRE);
    return rf_gpu_cuda_started();
}

int rf_rt_gpu_absent(char *why, size_t n)
{
    if (rf_gpu_emulated()) return 0;
    return rf_gpu_cuda_absent(why, n);
}

int rf_rt_gpu_maybe(char *why, size_t n)
{
    if (rf_gpu_emulated()) return rf_rt_gpu_available(why, n);
    return rf_gpu_cuda_maybe(why, n);
}

/* The file named in messages about the program's sections. */
static const char *program_file(const gx *x) { return x->o.rfx_file ? x->o.rfx_file : x->p->source; }

/* Does the PTX0 section serve this run (*have)? Its key, recomputed from the
** plans' hash of the source, this redfox's ABI tag and the section's options
** and target, must match: else the section belongs to another program or
** plan, an error. PTX of the source with the fused kernels serves every run;
** of the source without them (compiled with --no-fuse), runs with --no-fuse.
** PTX made with other options or another ABI is compiled anew, not refused. */
static rf_status ptx0_check(gx *x, const rf_gpu_plan *plan, const rf_gpu_ptx *ptx, int *have, rf_diags *d)
{
    *have = 0;
    char *opts[2] = {rf_gpu_ptx_opts(1), rf_gpu_ptx_opts(0)}; /* [0] unfused, [1] fused */
    rf_status st = opts[0] && opts[1] ? RF_OK : RF_ENOMEM;
    int variant = st ? -1 : !strcmp(ptx->opts, opts[1]) ? 1 : !strcmp(ptx->opts, opts[0]) ? 0 : -1;
    if (variant >= 0 && plan->hashed && !strcmp(ptx->abi, rf_gpu_abi_tag())) {
        rf_gpu_ptx want = *ptx;
        memcpy(want.src_hash, plan->src_hash[variant], sizeof want.src_hash);
        uint64_t key[2];
        rf_gpu_ptx_key(&want, key);
        if (key[0] != ptx->key[0] || key[1] != ptx->key[1]) {
            rf_error(d, rf_mkloc(program_file(x), 0, 0),
                     "the PTX0 section was not compiled from this program's GPU plans (section GPLN): recompile "
                     "the program (redfox compile)");
            st = RF_EUSER;
        } else {
            *have = variant == 1 || x->o.no_fuse;
        }
    }
    free(opts[0]);
    free(opts[1]);
    return st;
}

/* The program's kernels: the PTX0 section when it serves this run, else the
** source generated from the plans, compiled now (NVRTC, cached). The source
** generated holds the fused kernels and every unfused one: it is the one
** compiled, also for runs with --no-fuse (which launch no fused kernel), so
** both share the caches. No source is generated where PTX0 serves, except
** for the emulator, which compiles the source itself. On the module's
** thread (module_main): its messages into d, the module loaded through g
** (the device's own operations, with d). */
static rf_status load_program(gx *x, const rf_gpu_plan *plan, const void *ptx0, uint64_t ptx0_size, rf_diags *d,
                              gdev *g)
{
    rf_gpu_ptx ptx;
    memset(&ptx, 0, sizeof ptx);
    int have = 0;
    rf_status st = RF_OK;
    if (ptx0 && ptx0_size) {
        st = rf_gpu_ptx0_decode(program_file(x), ptx0, ptx0_size, &ptx, d);
        if (!st) st = ptx0_check(x, plan, &ptx, &have, d);
        if (!have) rf_gpu_ptx_free(&ptx);
    }
    rf_buf src;
    rf_buf_init(&src);
    if (!st && (!have || rf_gpu_emulated())) {
        st = rf_gpu_codegen(x->p, plan, 1, &src, d);
        uint64_t h[2];
        rf_gpu_hash128(src.data ? src.data : "", (uint64_t)src.len, h);
        /* the plans generate the source they were made with, or they are
        ** another generator's (which the GPLN's tag should have said) */
        if (!st && plan->hashed && (h[0] != plan->src_hash[1][0] || h[1] != plan->src_hash[1][1])) {
            rf_error(d, rf_mkloc(program_file(x), 0, 0),
                     "the GPU plans (section GPLN) are stale: they do not generate the source they were made with; "
                     "recompile the program with this redfox (redfox compile)");
            st = RF_EUSER;
        }
        if (!st && !have && !rf_gpu_emulated())
        {
            rf_gpu_nvrtc_opts no = {NULL, x->tune.cache_dir, 0, 0};
            st = rf_gpu_nvrtc_compile(rf_buf_cstr(&src), (uint64_t)src.len, &no, &ptx, d);
        }
    }
    if (!st) st = g->ops->load(g, &ptx, rf_buf_cstr(&src), (uint64_t)src.len);
    rf_gpu_ptx_free(&ptx);
    rf_buf_free(&src);
    return st;
}

/* ---- the program's module on a thread of its own ------------------------------ */

/* The module's thread: the program's kernels made ready (PTX0 or NVRTC's
** cache, the JIT's cubin, the module and its kernels put on the GPU) while
** the run's thread copies the inputs, which need the context, the stream
** and the pinned buffers, not the kernels. It works on a copy of the
** device taken before it began (mod_g: the device's own operations, not
** the accounting layer the copies count in; its own diagnostics); the
** state they share, the module and its kernel table, no copy touches. */
static void *module_main(void *arg)
{
    gx *x = arg;
    double t0 = rf_now();
    if (!rf_gpu_emulated()) rf_gpu_cuda_bind_thread();
    x->mod_st = load_program(x, x->plan, x->o.ptx0, x->o.ptx0_size, &x->mod_d, &x->mod_g);
    x->mod_secs = rf_now() - t0;
    return NULL;
}

rf_status rf_gx_module_wait(gx *x)
{
    if (!x->mod_running) return RF_OK;
    double t0 = rf_now();
    pthread_join(x->mod_th, NULL);
    x->mod_running = 0;
    x->mod_wait = rf_now() - t0;
    for (int64_t i = 0; i < x->mod_d.count; i++)
        rf_diag_add(x->d, x->mod_d.items[i].sev, x->mod_d.items[i].loc, "%s", x->mod_d.items[i].msg);
    rf_diags_free(&x->mod_d);
    return x->mod_st;
}

/* The plans the run follows: the .rfx file's GPLN section, or for a program
** compiled in this process, made now (that compile's planning). */
static rf_status get_plan(gx *x, rf_gpu_plan **plan)
{
    const rf_rt_options *o = &x->o;
    if (o->gpu_plan)
        return rf_gpu_plan_decode(program_file(x), x->p, o->gpu_plan, o->gpu_plan_size, plan, x->d);
    if (!o->rfx_file) return rf_gpu_plan_build(x->p, 0, plan, x->d); /* (no PTX0 to bind: no hashes) */
    rf_status st = rf_gpu_plan_check(x->p, x->d);
    if (st) return st;
    rf_error(x->d, rf_mkloc(o->rfx_file, 0, 0),
             "this .rfx file holds no GPU plans (section GPLN): it was compiled by an older redfox; recompile it "
             "(redfox compile), or run it with --device cpu");
    return RF_EUSER;
}

/* ---- the device (rt_device.h) ---------------------------------------------- */

/* The device opened (real or emulated), the program's GPU plans read (or,
** for a program compiled in this process, made). */
static rf_status gpu_open(const rf_rt_env *env, void **dev)
{
    const rf_hir_program *p = env->p;
    const rf_rt_options *o = env->o;
    gx *x = rf_calloc(1, sizeof *x);
    if (!x) return RF_ENOMEM;
    *dev = x;
    x->p = p;
    x->o = *o;
    x->tune = o->tuning ? *o->tuning : *rf_rt_tuning_default();
    x->d = env->d;
    x->dict = env->dict;
    x->cpool = env->pool;
    x->threads = env->threads;
    x->res = env->res;
    x->fd_clash = env->fd_clash;
    x->g.cpu = env->pool; /* set again after the device opens (it zeroes g) */
    char why[256];
    rf_status st;
    if (rf_gpu_emulated()) {
        st = rf_gpu_emu_open(&x->g, env->d);
        if (!st) __atomic_store_n(&emulator_opened, 1, __ATOMIC_RELEASE);
    } else
        st = rf_gpu_cuda_open(&x->g, env->d, why, sizeof why);
    if (st == RF_EUSER) {
        rf_error(env->d, rf_mkloc(NULL, 0, 0), "no usable GPU: %s", why);
        return st;
    }
    if (st) return st;
    x->g_open = 1;
    if (x->tune.gpu_pool_mb > 0) x->g.pool_first = (uint64_t)x->tune.gpu_pool_mb << 20;
    x->g.pool_exact = x->tune.gpu_pool_exact;
    x->g.mem_cap = (uint64_t)x->tune.gpu_memory;
    x->g.cache_dir = x->tune.cache_dir;
    x->g.cpu = env->pool; /* big copies are staged by the run's threads */
    rf_gpu_acct_install(&x->g);
    /* --trace: every device operation, the load's copies too (not from a
    ** thread beside the reading: attach turns it on) */
    x->g.acct.fn = env->aside ? NULL : o->trace;
    x->g.acct.fn_ctx = o->trace_ctx;
    x->vals = rf_calloc((size_t)p->nvars + 1, sizeof *x->vals);
    int32_t nk = 0;
    for (int32_t b = 0; b < p->nblocks; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels; j++)
            if (p->blocks[b]->kernels[j]->id >= nk) nk = p->blocks[b]->kernels[j]->id + 1;
    x->nkernels = nk;
    st = x->vals ? RF_OK : RF_ENOMEM;
    if (!st) st = get_plan(x, &x->plan);
    if (!st) x->plans = x->plan->k;
    /* with an input cache, its pool (and the columns and dictionary it
    ** keeps on the device) serves this run too */
    if (!st) st = env->devcache ? rf_gx_cache_open(x, env->devcache) : rf_gpool_new(&x->g, &x->pool);
    x->g.pool = x->pool;
    if (!st) rf_gx_spill_init(x);
    x->str.g = &x->g;
    x->str.pool = x->pool;
    x->str.dict = x->dict;
    x->str.threads = x->threads;
    if (!st && p->nblocks == 1) {
        x->last_reader = rf_calloc((size_t)p->nvars + 1, sizeof *x->last_reader);
        if (!x->last_reader) st = RF_ENOMEM;
        for (int32_t j = 0; !st && j < p->blocks[0]->nkernels; j++)
            for (int32_t i = 0; i < p->blocks[0]->kernels[j]->nin; i++)
                if (p->blocks[0]->kernels[j]->in[i] >= 0) x->last_reader[p->blocks[0]->kernels[j]->in[i]] = p->blocks[0]->kernels[j];
    }
    /* (with --no-fuse: a plan of no fused kernels) */
    if (!st && o->no_fuse) st = rf_gpu_fplan_build(p, 0, &x->nofuse, env->d);
    if (!st) x->fplan = o->no_fuse ? x->nofuse : x->plan->f;
    if (!st && !(x->fdone = rf_calloc((size_t)x->fplan->nunits + 1, 1))) st = RF_ENOMEM;
    if (!st && !(x->fsplit = rf_calloc((size_t)x->fplan->nunits + 1, 1))) st = RF_ENOMEM;
    if (!st) st = rf_gx_live_init(x);
    if (!st) st = rf_gx_jkeep_init(x);
    return st;
}

static const char *gpu_where(void *dev, const rf_hir_kernel *k)
{
    const gx *x = dev;
    return k->id >= 0 && k->id < x->nkernels && x->plans[k->id].gpu ? "gpu" : "cpu";
}

/* The program's kernels loaded: part of the load, on a thread of its own
** (module_main) beside the inputs' copies, waited for at the load's end
** (or the first launch); here where no thread can be made. */
static rf_status gpu_load_begin(void *dev)
{
    gx *x = dev;
    x->mod_g = x->g;
    if (x->g.inner) x->mod_g.ops = x->g.inner;
    rf_diags_init(&x->mod_d);
    x->mod_g.d = &x->mod_d;
    x->mod_aside = pthread_create(&x->mod_th, NULL, module_main, x) == 0;
    x->mod_running = x->mod_aside;
    if (x->mod_aside) return RF_OK;
    rf_diags_free(&x->mod_d);
    return load_program(x, x->plan, x->o.ptx0, x->o.ptx0_size, x->d, &x->g);
}

static rf_status gpu_load_end(void *dev)
{
    gx *x = dev;
    /* the kernels first: the empty launch below needs them */
    rf_status st = rf_gx_module_wait(x);
    /* the dictionary is data like the columns: copied with them */
    int64_t ndiag = x->d->count;
    if (!st && needs_dict(x) && (st = rf_gpu_dict_sync(&x->str, 0)) == RF_EDEVMEM)
        /* one piece (kernels read any code's bytes): the warning says so */
        rf_gx_oom_prefix(x, ndiag, "the strings' copy, which does not split (the program reads string bytes): ");
    if (!st) st = wake(x);
    if (!st) st = x->g.ops->sync(&x->g);
    if (x->res) {
        x->res->load_h2d_bytes = x->g.h2d_bytes; /* the copy phase's bytes, for its rate */
        x->res->load_wire_bytes = x->g.wire_bytes;
        x->res->gpu_copy_fill_s = x->g.copy_fill_s;
        x->res->gpu_copy_wait_s = x->g.copy_wait_s;
        x->res->gpu_copy_arena_wait_s = x->g.start_arena_wait;
        x->res->load_found_bytes = x->gc_hit_bytes;
    }
    rf_gpu_acct_reset(&x->g, x->tune.gpu_trace); /* the run's device operations are counted from here */
    x->g.acct.fn = x->o.trace;
    x->g.acct.fn_ctx = x->o.trace_ctx;
    return st;
}

static rf_status gpu_run(void *dev, const rf_hir_kernel *k, rf_rt_kprof *prof) { return rf_gx_run(dev, k, prof); }

static int64_t gpu_rows(const void *dev, int32_t var) { return var_rows(dev, var); }

static int32_t gpu_fused_until(void *dev, const rf_hir_kernel *k) { return rf_gx_fused_until(dev, k); }

static void gpu_unfuse(void *dev, const rf_hir_kernel *k) { rf_gx_unfuse(dev, k); }

/* The deferred error words read, the device's work waited for, its figures
** into the result. */
static rf_status gpu_finish(void *dev)
{
    gx *x = dev;
    rf_status st = rf_gx_wcheck_flush(x);
    gfree(x, &x->wcheck);
    if (!st) st = x->g.ops->sync(&x->g);
    rf_rt_result *res = x->res;
    res->gpu_launches = (int64_t)x->g.acct.calls[RF_GPU_ACCT_LAUNCH];
    res->gpu_waits = (int64_t)x->g.acct.calls[RF_GPU_ACCT_WAIT];
    res->gpu_cub_calls = (int64_t)x->g.acct.calls[RF_GPU_ACCT_CUB];
    res->gpu_launch_seconds = x->g.acct.seconds[RF_GPU_ACCT_LAUNCH];
    res->gpu_wait_seconds = x->g.acct.seconds[RF_GPU_ACCT_WAIT];
    res->gpu_cub_seconds = x->g.acct.seconds[RF_GPU_ACCT_CUB];
    res->gpu_other_calls = (int64_t)x->g.acct.calls[RF_GPU_ACCT_OTHER];
    res->gpu_other_seconds = x->g.acct.seconds[RF_GPU_ACCT_OTHER];
    if (x->g.acct.trace && x->g.acct.trace_text.len) res->gpu_trace = rf_strdup(rf_buf_cstr(&x->g.acct.trace_text));
    return st;
}

/* Outputs come back once, at the end. */
static rf_status gpu_to_host(void *dev, int32_t var, rf_rt_rel *out)
{
    gx *x = dev;
    /* (under a cap it may be in host memory: copied from there) */
    if (x->vals[var].rp || x->vals[var].held) return rf_gx_held_host_rel(x, var, out);
    rf_status st = rf_gx_hold_var(dev, var); /* (under a cap it may be in host memory) */
    if (!st) st = rf_gx_widen(dev, var, 1);   /* (a narrow set: its host copy is 64-bit) */
    return st ? st : rf_gx_host_rel(dev, var, out);
}

/* A relation's host copy, for several ranks that move rows through host
** memory (runtime/dist): made anew at each call, kept until the value is
** freed. NULL when the copy fails (its error is in the diagnostics). */
static const rf_rt_rel *gpu_view(void *dev, int32_t var)
{
    gx *x = dev;
    if (!x->views && !(x->views = rf_calloc((size_t)x->p->nvars + 1, sizeof *x->views))) return NULL;
    rf_rt_rel *r = &x->views[var];
    rf_rt_rel_free(r);
    /* as an output's copy: under a cap the value may be in host memory, and
    ** is read there, never brought back first (there may be no room for it) */
    return gpu_to_host(x, var, r) ? NULL : r;
}

static void drop_view(gx *x, int32_t var)
{
    if (x->views) rf_rt_rel_free(&x->views[var]);
}

static void gpu_free(void *dev, int32_t var)
{
    drop_view(dev, var);
    rf_gx_var_clear(dev, var);
}

/* A loop's kernel the driver does not run (its driving input is empty): no
** launch; the values that died before it are freed as a run would free
** them (rt_gpu_live.c), and its output is empty. */
static void gpu_skip(void *dev, const rf_hir_kernel *k)
{
    gx *x = dev;
    rf_gx_live_before(x, k);
    rf_gx_jidx_before(x, k);
    if (k->kind == RF_HIR_INSERT) return; /* (its set stays as it is) */
    drop_view(x, k->out);
    rf_gx_var_clear(x, k->out);
}

/* After a start beside the reading: the run's thread takes the device over. */
static void gpu_attach(void *dev, rf_diags *d)
{
    gx *x = dev;
    x->d = d;
    x->g.d = d;
    x->g.acct.fn = x->o.trace;
    x->g.acct.fn_ctx = x->o.trace_ctx;
    if (!rf_gpu_emulated()) rf_gpu_cuda_bind_thread();
}

/* The start's parts into the result (--profile): the driver's where this
** run is the first to show them (cudart's thread is done by the load's
** end), the stream and the pinned buffers of this run's open. */
static void report_start(gx *x, rf_rt_result *res)
{
    if (rf_gpu_emulated())
        res->gpu_start_driver = 3;
    else
        res->gpu_start_driver = rf_gpu_cuda_start_parts(&res->gpu_start_init_s, &res->gpu_start_context_s,
                                                        &res->gpu_start_cudart_s, &res->gpu_start_cudart_wait_s)
                                    ? 1
                                    : 2;
    res->gpu_start_stream_s = x->g.start_stream;
    res->gpu_start_pinned_s = x->g.start_pinned;
    res->gpu_start_pinned_wait_s = x->g.start_pinned_wait;
    res->gpu_start_arena_s = x->g.start_arena;
}

static void gpu_report(void *dev)
{
    gx *x = dev;
    /* the copies' share of what the machine's pinned copies reach: measured
    ** once per process, after the run (the pinned buffers are allocated
    ** beside the program's load: measuring at the open waited for them),
    ** outside the accounting layer: it is not the run's copying */
    if (x->o.profile && x->g_open && !x->g.pinned_gbs && !rf_gpu_emulated())
        x->g.pinned_gbs = rf_gpu_cuda_pinned_gbs(&x->g);
    if (x->pool && x->res) x->res->gpu_peak_bytes = rf_gpool_peak(x->pool);
    if (x->res && x->g_open) report_start(x, x->res);
    if (x->res) x->res->gpu_module_kept = x->mod_aside ? x->mod_g.module_kept : x->g.module_kept;
    if (x->res && x->mod_aside) {
        /* the program readied on its own thread: its time there, and how long the load's end waited */
        x->res->program_seconds = x->mod_secs;
        x->res->gpu_module_aside = 1;
        x->res->gpu_module_wait_s = x->mod_wait;
    }
    if (x->res) {
        x->res->h2d_bytes = x->g.h2d_bytes;
        x->res->wire_bytes = x->g.wire_bytes;
        x->res->gpu_pinned_gbs = x->g.pinned_gbs;
        x->res->d2h_bytes = x->g.d2h_bytes;
        x->res->gpu_alloc_seconds = x->g.alloc_seconds;
        x->res->gpu_memory_cap = x->g.mem_cap;
        x->res->gpu_spills = x->spills;
        x->res->gpu_spill_out_bytes = x->spill_out;
        x->res->gpu_spill_in_bytes = x->spill_in;
        x->res->gpu_parted = x->parted;
        x->res->gpu_parts = x->parts;
        x->res->gpu_fused_ranged = x->fparted;
        x->res->gpu_fused_ranges = x->fparts;
        x->res->gpu_join_builds = x->jbuilds;
        x->res->gpu_join_reuses = x->jreuses;
        x->res->gpu_radixed = x->radixed;
        x->res->gpu_radix_parts = x->radix_parts;
        rf_gx_cache_report(x, x->res);
        x->res->gpu_recparted = x->recparted;
        x->res->gpu_recpart_parts = x->recpart_max;
        x->res->gpu_recpart_rounds = x->recpart_rounds;
        x->res->gpu_recpart_kept = x->recpart_hits;
        x->res->gpu_recpart_in_bytes = x->recpart_in;
        x->res->gpu_recpart_out_bytes = x->recpart_out;
    }
}

static void gpu_close(void *dev)
{
    gx *x = dev;
    rf_gx_module_wait(x); /* (a load that failed before its end: the thread ends before the device) */
    gpu_report(x);
    rf_gpu_fplan_free(x->nofuse);
    rf_gpu_plan_free(x->plan);
    free(x->fdone);
    free(x->fsplit);
    free(x->last_reader);
    rf_gx_live_free(x);
    free(x->jkeep);
    free(x->kblock);
    for (int32_t v = 0; x->vals && v < x->p->nvars; v++) {
        drop_view(x, v);
        rf_gx_var_clear(x, v);
    }
    free(x->views);
    if (x->pool) {
        gfree(x, &x->wcheck);
        rf_gx_cache_close(x); /* (the pool and the dictionary's copy stay the cache's) */
        if (x->pool) rf_gpu_dict_free(&x->str);
    }
    free(x->vals);
    rf_gpool_free(x->pool);
    rf_buf_free(&x->g.acct.trace_text);
    if (x->g_open) x->g.ops->close(&x->g);
    free(x);
}

const rf_rt_device_ops rf_rt_gpu_device = {
    "gpu",       gpu_open, gpu_where, gpu_load_begin, gpu_load, gpu_load_end, gpu_run, gpu_rows, gpu_finish,
    gpu_to_host, gpu_free, gpu_close, gpu_view,
    gpu_attach,  rf_gx_exchange, gpu_report, gpu_fused_until, gpu_unfuse,
    1, /* narrow columns as stored: widened on the device (rt_gpu_wire.c) */
    rf_gx_codes_below, gpu_skip,
};
