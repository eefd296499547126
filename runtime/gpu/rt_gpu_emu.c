/*
** runtime/gpu/rt_gpu_emu.c: the GPU emulator: the device layer for tests on
** machines without a GPU (RF_GPU_EMULATE=1). The generated CUDA source is
** compiled as host C++ (with rf_emu_prelude.cuh in front) into a shared
** object, and kernels run on the CPU: the threads of a block one after the
** other, as coroutines (rt_gpu_emu_fiber.c) where a kernel synchronizes its
** block, so that __syncthreads has its meaning. Device memory is host memory; the CUB
** primitives are plain host loops with CUB's results (the radix sort is a
** stable LSD sort over the same bits).
**
** Owns the compiled object (cached as <cache>/emu/<hash>.so, sealed with its
** length and checksum: a damaged one is built again, an empty folder in its
** place removed, one with files named in a warning; a cache folder that
** cannot be written, or where the build fails, is passed over for a
** temporary one; killed builds' leftovers there are swept), the coroutine
** stacks and the function table. It finds bugs of the executor and of the
** kernels' logic; races, memory-model and driver problems need the real GPU.
** The C++ compiler is $RF_GPU_EMU_CXX or c++, with $RF_GPU_EMU_CXXFLAGS
** added (-fsanitize=address, with --set gpu_pool_exact=on and a sanitized
** redfox, checks every kernel's memory accesses).
*/
#include "rt_gpu_emu_fiber.h"
#include "rt_gpu_internal.h"
#include "rf_rt_stored.h"
#include "rf_sys.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EMU_STACK (64 * 1024)

typedef struct emu_dim3 {
    unsigned x, y, z;
} emu_dim3;

typedef void (*kfn)(rf_gpu_args);

typedef struct emu_state {
    void *so;
    emu_dim3 *threadIdx, *blockIdx, *blockDim, *gridDim;
    void (**sync_fn)(void);
    double mark_t[2];
} emu_state;

int rf_gpu_emulated(void)
{
    const char *e = getenv("RF_GPU_EMULATE");
    return e && e[0] && strcmp(e, "0") != 0;
}

/* ---- coroutines for kernels that synchronize ---------------------------------- */

static struct {
    rf_gpu_emu_fiber sched;
    rf_gpu_emu_fiber th[RF_GPU_TILE];
    char *stacks;
    int state[RF_GPU_TILE]; /* 0 runnable, 1 at a barrier, 2 done */
    int cur;
    kfn fn;
    const rf_gpu_args *args;
    emu_state *es;
} co;

static void co_sync(void)
{
    co.state[co.cur] = 1;
    rf_gpu_emu_fiber_switch(&co.th[co.cur], &co.sched);
}

static void co_entry(void)
{
    co.fn(*co.args);
    co.state[co.cur] = 2;
    /* back to the scheduler for good: it makes the fiber anew for the next block */
    rf_gpu_emu_fiber_switch(&co.th[co.cur], &co.sched);
}

static int run_block_coroutines(emu_state *es, kfn fn, const rf_gpu_args *a)
{
    if (!co.stacks && !(co.stacks = malloc((size_t)RF_GPU_TILE * EMU_STACK))) return -1;
    co.fn = fn;
    co.args = a;
    co.es = es;
    for (int t = 0; t < RF_GPU_TILE; t++) {
        rf_gpu_emu_fiber_make(&co.th[t], co.stacks + (size_t)t * EMU_STACK, EMU_STACK, co_entry);
        co.state[t] = 0;
    }
    for (;;) {
        int live = 0;
        for (int t = 0; t < RF_GPU_TILE; t++) {
            if (co.state[t] == 2) continue;
            co.cur = t;
            es->threadIdx->x = (unsigned)t;
            co.state[t] = 0;
            rf_gpu_emu_fiber_switch(&co.sched, &co.th[t]);
            live += co.state[t] != 2;
        }
        if (!live) return 0;
    }
}

static void plain_sync(void)
{
    /* a kernel not named *_smem synchronized: the emulator would run it wrongly */
    abort();
}

/* ---- the module ----------------------------------------------------------------- */

/* The compiled object at so opened into es, its built-ins found: RF_OK, or
** RF_EINTERNAL with the reason added to g->d when report (else nothing
** said: a cached object that fails is built again). */
static rf_status open_object(gdev *g, emu_state *es, const char *so, int report)
{
    const char *why = NULL;
    if (!(es->so = dlopen(so, RTLD_NOW | RTLD_LOCAL))) {
        why = dlerror();
    } else {
        es->threadIdx = dlsym(es->so, "threadIdx");
        es->blockIdx = dlsym(es->so, "blockIdx");
        es->blockDim = dlsym(es->so, "blockDim");
        es->gridDim = dlsym(es->so, "gridDim");
        es->sync_fn = dlsym(es->so, "rf_emu_sync_fn");
        if (!es->threadIdx || !es->blockIdx || !es->blockDim || !es->gridDim || !es->sync_fn) {
            why = "the compiled kernels lack the emulated built-ins";
            dlclose(es->so);
            es->so = NULL;
        }
    }
    if (!why) return RF_OK;
    if (report) rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU emulator: cannot load %s: %s", so, why ? why : "?");
    return RF_EINTERNAL;
}

/* The pid of an emulator build's temporary in the cache folder,
** HASH.so.<pid>.<n>.cpp or .tmp (rf_gpu_cache_tmp_name), else 0. */
static long build_tmp_pid(const char *name)
{
    const char *p = strstr(name, ".so.");
    if (!p || p == name) return 0;
    p += 4;
    long pid = 0;
    int digits = 0, n = 0;
    for (; *p >= '0' && *p <= '9' && digits < 10; p++, digits++) pid = pid * 10 + (*p - '0');
    if (!digits || *p != '.') return 0;
    for (p++; *p >= '0' && *p <= '9' && n < 20; p++) n++;
    return n && (!strcmp(p, ".cpp") || !strcmp(p, ".tmp")) ? pid : 0;
}

/* Removes from the cache folder dir the sources and objects of builds whose
** process is gone (killed while the compiler ran; the compiler, its child,
** even finishes the object after it): some 300 KB each, for ever, before.
** Only a process's that no longer exists (kill 0: ESRCH), and only once
** the file is EMU_STALE_TMP_S old (a process of another pid namespace
** sharing the folder renames its object once the compiler ends). */
#define EMU_STALE_TMP_S 60
static void sweep_stale_builds(const char *dir)
{
    DIR *dh = opendir(dir);
    time_t now = time(NULL);
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        long pid = build_tmp_pid(e->d_name);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char *full = rf_sprintf("%s/%s", dir, e->d_name);
        struct stat sb;
        if (full && !lstat(full, &sb) && S_ISREG(sb.st_mode) && now - sb.st_mtime > EMU_STALE_TMP_S) unlink(full);
        free(full);
    }
    if (dh) closedir(dh);
}

/* s quoted for the shell: in single quotes, each of its own written '\''
** (a cache folder's path may hold any byte but NUL: a quote in it broke the
** command, and its words ran as commands). Owned; NULL when short of memory. */
static char *shell_quoted(const char *s)
{
    rf_buf b;
    rf_buf_init(&b);
    rf_buf_puts(&b, "'");
    for (const char *c = s; *c; c++) {
        if (*c == '\'') rf_buf_puts(&b, "'\\''");
        else rf_buf_append(&b, c, 1);
    }
    rf_buf_puts(&b, "'");
    char *q = b.oom ? NULL : rf_strdup(rf_buf_cstr(&b));
    rf_buf_free(&b);
    return q;
}

/* The source all compiled by the C++ compiler into the object so (in dir),
** sealed (rf_gpu_cache_seal) and renamed into place. A failure is said in
** g->d only when report (a build in the cache folder that fails is tried
** again in a temporary one, which says what went wrong). */
static rf_status build_object(gdev *g, const char *dir, const char *so, const rf_buf *all, int report)
{
    /* (the source and the object written aside under names of this
    ** thread's own: runs of one program on two threads compile it at once) */
    char *cpp = rf_gpu_cache_tmp_name(so, "cpp");
    char *tmpso = rf_gpu_cache_tmp_name(so, "tmp");
    char *qcpp = cpp ? shell_quoted(cpp) : NULL;
    char *qtmpso = tmpso ? shell_quoted(tmpso) : NULL;
    rf_status st = qcpp && qtmpso ? RF_OK : RF_ENOMEM;
    /* the object's temporary made new here before the compiler writes it:
    ** a named pipe already under its name made the linker fail or wait on
    ** it, a symbolic link there had the object written, sealed and renamed
    ** through it, as the linker treats what it finds (the cache's writes
    ** make theirs new alike: rf_gpu_cache_create_new). The source's own
    ** temporary is rf_gpu_cache_write's, renamed over what is at cpp */
    int fd = st ? -1 : rf_gpu_cache_create_new(tmpso);
    if (fd >= 0) close(fd);
    else if (!st) {
        if (report)
            rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU emulator: cannot create %s: %s", tmpso, strerror(errno));
        st = RF_EINTERNAL;
    }
    if (!st) {
        rf_gpu_cache_write(dir, cpp, all->data, (uint64_t)all->len);
        const char *cxx = getenv("RF_GPU_EMU_CXX"), *flags = getenv("RF_GPU_EMU_CXXFLAGS");
        char *cmd = rf_sprintf("%s -std=c++17 -O1 -g -shared -fPIC -w %s -o %s %s 2>&1", cxx && cxx[0] ? cxx : "c++",
                               flags ? flags : "", qtmpso, qcpp);
        FILE *pp = cmd ? popen(cmd, "r") : NULL;
        rf_buf out;
        rf_buf_init(&out);
        if (pp) {
            char line[512];
            while (fgets(line, sizeof line, pp)) rf_buf_puts(&out, line);
        }
        int rc = pp ? pclose(pp) : -1;
        if (rc != 0 || !rf_gpu_cache_seal(tmpso) || rename(tmpso, so) != 0) {
            if (report)
                rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU emulator: compiling the kernels as C++ failed:\n%.4000s",
                         out.len ? rf_buf_cstr(&out) : "(no output)");
            st = RF_EINTERNAL;
            remove(tmpso);
        }
        rf_buf_free(&out);
        remove(cpp);
        free(cmd);
    }
    free(qcpp);
    free(qtmpso);
    free(cpp);
    free(tmpso);
    return st;
}

static rf_status emu_load(gdev *g, const rf_gpu_ptx *ptx, const char *src, uint64_t srclen)
{
    (void)ptx;
    emu_state *es = g->impl;
    rf_buf all;
    rf_buf_init(&all);
    rf_buf_puts(&all, rf_gpu_emu_prelude());
    rf_buf_append(&all, src, (int64_t)srclen);
    if (all.oom) {
        rf_buf_free(&all);
        return RF_ENOMEM;
    }
    const char *xf = getenv("RF_GPU_EMU_CXXFLAGS");
    if (xf) rf_buf_printf(&all, "\n// RF_GPU_EMU_CXXFLAGS: %s\n", xf);
    uint64_t h[2];
    rf_gpu_hash128(all.data, (uint64_t)all.len, h);
    char *dir = rf_gpu_cache_dir(g->cache_dir, "emu");
    char *so = dir ? rf_sprintf("%s/%016" PRIx64 "%016" PRIx64 ".so", dir, h[0], h[1]) : NULL;
    rf_status st = !dir || so ? RF_OK : RF_ENOMEM;
    /* a cached object only when its seal agrees with its bytes (one cut
    ** short would end the process with SIGBUS when mapped), and only when
    ** it loads; else it is built again, once */
    int loaded = !st && so && rf_gpu_cache_sealed(so) && open_object(g, es, so, 0) == RF_OK;
    /* built in the cache folder where it can be written in; a build there
    ** that fails for the folder's sake (the disk full, the folder deleted
    ** while the compiler ran) is made again in a temporary folder, as one
    ** that cannot be written in is (a file in its way, no right to write):
    ** none, as with --no-cache; a folder in the object's place is removed
    ** when empty, else named in a warning (as NVRTC's cache does) and the
    ** build made in a temporary folder */
    if (!st && !loaded && dir && rf_gpu_cache_dir_make(dir)) {
        sweep_stale_builds(dir);
        rf_gpu_cache_clear_folder(so, g->d);
        st = build_object(g, dir, so, &all, 0);
        loaded = !st && open_object(g, es, so, 0) == RF_OK;
        if (st != RF_ENOMEM) st = RF_OK;
    }
    char *tmpdir = NULL;
    if (!st && !loaded) {
        free(dir);
        free(so);
        dir = so = NULL;
        /* in $TMPDIR where it is set (an absolute path), else (or where no
        ** folder can be made there) /tmp: /tmp alone failed where it was
        ** full or read-only and $TMPDIR named a usable folder */
        const char *td = getenv("TMPDIR");
        char *tmpl = td && td[0] == '/' ? rf_sprintf("%s/rf_emu_XXXXXX", td) : NULL;
        if (!tmpl || !mkdtemp(tmpl)) {
            free(tmpl);
            tmpl = rf_strdup("/tmp/rf_emu_XXXXXX");
            if (tmpl && !mkdtemp(tmpl)) {
                free(tmpl);
                rf_buf_free(&all);
                rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU emulator: no folder for the compiled kernels (%s%s/tmp)",
                         td && td[0] == '/' ? td : "", td && td[0] == '/' ? ", " : "");
                return RF_EIO;
            }
        }
        dir = tmpl;
        tmpdir = tmpl ? rf_strdup(tmpl) : NULL;
        so = dir ? rf_sprintf("%s/%016" PRIx64 "%016" PRIx64 ".so", dir, h[0], h[1]) : NULL;
        st = dir && tmpdir && so ? RF_OK : RF_ENOMEM;
        if (!st) st = build_object(g, dir, so, &all, 1);
        if (!st) st = open_object(g, es, so, 1);
    }
    if (tmpdir) {
        if (so) remove(so);
        rmdir(tmpdir);
    }
    free(tmpdir);
    free(dir);
    free(so);
    rf_buf_free(&all);
    return st;
}

static rf_status emu_func(gdev *g, const char *name, void **fn)
{
    emu_state *es = g->impl;
    void *f = dlsym(es->so, name);
    if (!f) {
        rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU emulator: the program has no kernel %s", name);
        return RF_EINTERNAL;
    }
    *fn = f;
    return RF_OK;
}

/* One emulated kernel at a time in the process: the blocks' coordinates are
** the compiled object's globals (one object per program, shared by every
** run of it in the process) and the coroutines' state is this file's, so
** runs on two threads take turns kernel by kernel, as two contexts on one
** GPU do. */
static pthread_mutex_t launch_mu = PTHREAD_MUTEX_INITIALIZER;

static rf_status launch_blocks(emu_state *es, kfn f, int barriers, uint64_t grid, const rf_gpu_args *a);

static rf_status emu_launch(gdev *g, void *fn, const char *name, uint64_t grid, const rf_gpu_args *a)
{
    emu_state *es = g->impl;
    pthread_mutex_lock(&launch_mu);
    rf_status st = launch_blocks(es, (kfn)(uintptr_t)fn, strstr(name, "_smem") != NULL, grid, a);
    pthread_mutex_unlock(&launch_mu);
    return st;
}

static rf_status launch_blocks(emu_state *es, kfn f, int barriers, uint64_t grid, const rf_gpu_args *a)
{
    es->gridDim->x = (unsigned)grid;
    es->blockDim->x = RF_GPU_TILE;
    *es->sync_fn = barriers ? co_sync : plain_sync;
    for (uint64_t b = 0; b < grid; b++) {
        es->blockIdx->x = (unsigned)b;
        if (barriers) {
            if (run_block_coroutines(es, f, a)) return RF_ENOMEM;
        } else {
            for (unsigned t = 0; t < RF_GPU_TILE; t++) {
                es->threadIdx->x = t;
                f(*a);
            }
        }
    }
    return RF_OK;
}

/* ---- memory ------------------------------------------------------------------------ */

static rf_status emu_mem_alloc(gdev *g, uint64_t bytes, gptr *out)
{
    (void)g;
    void *p = NULL;
    if (posix_memalign(&p, 256, (size_t)bytes)) return RF_ENOMEM;
    *out = (gptr)(uintptr_t)p;
    return RF_OK;
}

static void emu_mem_free(gdev *g, gptr p)
{
    (void)g;
    free((void *)(uintptr_t)p);
}

#define P(x) ((void *)(uintptr_t)(x))

static rf_status emu_h2d(gdev *g, gptr dst, const void *src, uint64_t n)
{
    (void)g;
    if (n) memcpy(P(dst), src, (size_t)n);
    return RF_OK;
}

/* h2d_fill's pieces: small, so that tests on small inputs meet pieces that
** cut strings, as the real device's staging chunks do on big ones. */
#define EMU_FILL_PIECE ((int64_t)1 << 16)

typedef struct emu_fill {
    char *dst;
    rf_gpu_fill_fn fill;
    void *ctx;
} emu_fill;

static void emu_fill_part(void *ctx, int64_t begin, int64_t end, int worker)
{
    const emu_fill *f = ctx;
    (void)worker;
    f->fill(f->ctx, (uint64_t)begin, (uint64_t)end, f->dst + begin);
}

static rf_status emu_h2d_fill(gdev *g, gptr dst, uint64_t n, rf_gpu_fill_fn fill, void *ctx)
{
    emu_fill f = {P(dst), fill, ctx};
    if (g->cpu && rf_cpu_pool_threads(g->cpu) > 1)
        rf_cpu_parallel_for(g->cpu, (int64_t)n, EMU_FILL_PIECE, emu_fill_part, &f);
    else
        for (int64_t at = 0; at < (int64_t)n; at += EMU_FILL_PIECE)
            emu_fill_part(&f, at, at + EMU_FILL_PIECE < (int64_t)n ? at + EMU_FILL_PIECE : (int64_t)n, 0);
    return RF_OK;
}

/* Copies as stored in the emulator: pieces of 512 rows and rounds of 64
** KiB, so that the tests' small databases meet several pieces a block and
** several rounds a column (the real device: a block's 64 Ki rows, a 16 MiB
** staging buffer); each round packed as the device's are (rt_gpu_wire.c),
** into scratch, then widened on the host by the device kernel's own
** decoding (skeletons/cuda/rf_wire.h). */
#define EMU_WIRE_PIECE 512
#define EMU_WIRE_ROUND ((uint64_t)64 << 10)

static rf_status emu_h2d_stored(gdev *g, gptr dst, const rf_rt_stored *s, gptr scratch)
{
    int64_t b = 0, r = 0;
    int elem = rf_db_type_width(s->type);
    while (b < s->nblocks) {
        uint64_t len = 0;
        int32_t np = 0;
        rf_status st = rf_gpu_wire_pack(g->cpu, s, g->wire_piece, g->wire_round, &b, &r, P(scratch), &len, &np);
        if (st) return st;
        g->wire_bytes += len;
        rf_gpu_wire_widen_host(P(scratch), np, elem, P(dst));
    }
    return RF_OK;
}

static rf_status emu_d2h(gdev *g, void *dst, gptr src, uint64_t n)
{
    (void)g;
    if (n) memcpy(dst, P(src), (size_t)n);
    return RF_OK;
}

static rf_status emu_d2d(gdev *g, gptr dst, gptr src, uint64_t n)
{
    (void)g;
    if (n) memmove(P(dst), P(src), (size_t)n);
    return RF_OK;
}

static rf_status emu_memset8(gdev *g, gptr dst, uint8_t v, uint64_t n)
{
    (void)g;
    if (n) memset(P(dst), v, (size_t)n);
    return RF_OK;
}

static rf_status emu_sync(gdev *g)
{
    (void)g;
    return RF_OK;
}

/* ---- the CUB primitives, on the host ---------------------------------------------- */

static rf_status emu_sort_pairs(gdev *g, gptr temp, uint64_t *tbytes, gptr kin, gptr kout, gptr vin, gptr vout,
                                int64_t n, int b0, int b1)
{
    (void)g;
    if (!temp) {
        *tbytes = (uint64_t)(n + 1) * 16;
        return RF_OK;
    }
    /* stable LSD radix sort, 8 bits a pass, over bits [b0, b1) */
    uint64_t *k = P(kout), *kt = P(temp);
    int64_t *v = P(vout), *vt = (int64_t *)(kt + n);
    memmove(k, P(kin), (size_t)n * 8);
    memmove(v, P(vin), (size_t)n * 8);
    for (int s = b0; s < b1; s += 8) {
        int w = b1 - s < 8 ? b1 - s : 8;
        uint64_t m = (UINT64_C(1) << w) - 1;
        int64_t cnt[257] = {0};
        for (int64_t i = 0; i < n; i++) cnt[((k[i] >> s) & m) + 1]++;
        for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
        for (int64_t i = 0; i < n; i++) {
            int64_t at = cnt[(k[i] >> s) & m]++;
            kt[at] = k[i];
            vt[at] = v[i];
        }
        memcpy(k, kt, (size_t)n * 8);
        memcpy(v, vt, (size_t)n * 8);
    }
    return RF_OK;
}

static rf_status emu_scan_i64(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n)
{
    (void)g;
    if (!temp) {
        *tbytes = 8;
        return RF_OK;
    }
    const int64_t *a = P(in);
    int64_t *o = P(out), s = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t x = a[i];
        o[i] = s;
        s += x;
    }
    return RF_OK;
}

static rf_status emu_scan_u8(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n)
{
    (void)g;
    if (!temp) {
        *tbytes = 8;
        return RF_OK;
    }
    const uint8_t *a = P(in);
    int64_t *o = P(out), s = 0;
    for (int64_t i = 0; i < n; i++) {
        o[i] = s;
        s += a[i];
    }
    return RF_OK;
}

static rf_status emu_select(gdev *g, gptr temp, uint64_t *tbytes, gptr flags, gptr out, gptr nsel, int64_t n)
{
    (void)g;
    if (!temp) {
        *tbytes = 8;
        return RF_OK;
    }
    const uint8_t *f = P(flags);
    int64_t *o = P(out), m = 0;
    for (int64_t i = 0; i < n; i++)
        if (f[i]) o[m++] = i;
    *(int64_t *)P(nsel) = m;
    return RF_OK;
}

static rf_status emu_mark(gdev *g, int which)
{
    emu_state *es = g->impl;
    es->mark_t[which & 1] = rf_now();
    return RF_OK;
}

static rf_status emu_elapsed(gdev *g, double *seconds)
{
    emu_state *es = g->impl;
    *seconds = es->mark_t[1] - es->mark_t[0];
    return RF_OK;
}

static void emu_close(gdev *g)
{
    emu_state *es = g->impl;
    if (!es) return;
    if (es->so) dlclose(es->so);
    free(es);
    g->impl = NULL;
}

static const gdev_ops emu_ops = {emu_load,  emu_func,     emu_launch,    emu_mem_alloc, emu_mem_free, emu_h2d,
                                 emu_h2d_fill,
                                 emu_d2h,   emu_d2d,      emu_memset8,   emu_sync,      emu_sort_pairs, emu_scan_i64,
                                 emu_scan_u8, emu_select, emu_mark,      emu_elapsed,   emu_close,
                                 emu_h2d_stored};

rf_status rf_gpu_emu_open(gdev *g, rf_diags *d)
{
    memset(g, 0, sizeof *g);
    g->d = d;
    g->ops = &emu_ops;
    emu_state *es = rf_calloc(1, sizeof *es);
    if (!es) return RF_ENOMEM;
    g->impl = es;
    snprintf(g->desc, sizeof g->desc, "emulated GPU (RF_GPU_EMULATE: kernels run on the CPU)");
    g->sms = 1;
    /* two blocks: enough to exercise the grid-stride loops and cross-block
    ** atomics (RF_GPU_EMU_GRID asks for more) */
    const char *eg = getenv("RF_GPU_EMU_GRID");
    g->max_grid = eg && atoi(eg) > 0 ? (uint64_t)atoi(eg) : 2;
    /* RF_GPU_EMU_MEM_MB: a smaller emulated device, to test running out of it */
    const char *mm = getenv("RF_GPU_EMU_MEM_MB");
    g->mem_free = mm && atoll(mm) > 0 ? (uint64_t)atoll(mm) << 20 : UINT64_C(64) << 30;
    g->wire_piece = EMU_WIRE_PIECE;
    g->wire_round = EMU_WIRE_ROUND;
    return RF_OK;
}
