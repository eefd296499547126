/*
** skeletons/cuda/nvrtc.c: NVRTC, loaded with dlopen, and the on-disk cache
** of its output; the PTX0 section of .rfx files.
**
** Owns: the NVRTC library handle (opened once per process, never closed:
** NVRTC keeps global state that dlclose would tear down under its own
** threads), the compile options every program is built with, the cache
** (--cache-dir, $XDG_CACHE_HOME/redfox or ~/.cache/redfox, file
** nvrtc/<hash of source, architecture, options and NVRTC version>.ptx,
** written through a temporary file and a rename so that a concurrent reader
** never sees half a file (a gone writer's temporaries swept by the next
** write into the folder: sweep_stale_tmps), and read only when its head's length and CRC-32
** agree with it: rf_gpu_cache_read_checked, which the driver's JIT cache
** shares, its cubins also checked as ELF files by rf_gpu_cubin_read_checked,
** as the emulator's objects share the seal), the programs this
** process compiled (kept in memory: memo_find, memo_add), and the PTX0
** encoding.
**
** Options: --fmad=false because the CPU evaluator never contracts a * b + c
** into one rounding (float results must agree bit for bit); --device-int128
** for the exact decimal arithmetic. Never --use_fast_math, -ftz=true or
** --prec-div=false: rf_base.cuh's rf::fz (x + 0.0, which makes -0.0 0.0)
** and IEEE division would not survive them.
*/
#include "nvrtc_internal.h"
#include "rf_rfx.h"
#include "rf_sys.h"

#include <dirent.h>
#include <dlfcn.h>
#include <zlib.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The options every program is compiled with besides the architecture (as
** NVRTC takes them, and as the PTX0 section records them). */
#define NVRTC_FLAGS "-std=c++17", "--fmad=false", "--device-int128"
#define NVRTC_FLAGS_TEXT "-std=c++17 --fmad=false --device-int128"

/* PTX0's layout; version 1 lacked the options and the key (rf_gpu_ptx_key) */
#define PTX0_VERSION 2

typedef int (*nv_version_fn)(int *, int *);
typedef int (*nv_create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*nv_compile_fn)(void *, int, const char *const *);
typedef int (*nv_size_fn)(void *, size_t *);
typedef int (*nv_get_fn)(void *, char *);
typedef int (*nv_destroy_fn)(void **);
typedef const char *(*nv_errstr_fn)(int);

static struct {
    pthread_once_t once;
    void *h;
    char why[256];
    int major, minor;
    nv_create_fn create;
    nv_compile_fn compile;
    nv_size_fn log_size, ptx_size;
    nv_get_fn log, ptx;
    nv_destroy_fn destroy;
    nv_errstr_fn errstr;
} nv = {PTHREAD_ONCE_INIT};

static void nv_open(void)
{
    /* RF_NVRTC_LIB names the library (and only it: also a way to test
    ** machines without NVRTC); else the usual names, then CUDA's default
    ** folder, which is often not on the loader's path */
    const char *env = getenv("RF_NVRTC_LIB");
    const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so",
                           "/usr/local/cuda/lib64/libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.12",
                           "/usr/local/cuda/lib64/libnvrtc.so"};
    if (env && env[0])
        nv.h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    else
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !nv.h; i++)
            nv.h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!nv.h) {
        snprintf(nv.why, sizeof nv.why, "NVRTC (libnvrtc.so) cannot be loaded: %s", dlerror());
        return;
    }
    nv_version_fn version = (nv_version_fn)dlsym(nv.h, "nvrtcVersion");
    nv.create = (nv_create_fn)dlsym(nv.h, "nvrtcCreateProgram");
    nv.compile = (nv_compile_fn)dlsym(nv.h, "nvrtcCompileProgram");
    nv.log_size = (nv_size_fn)dlsym(nv.h, "nvrtcGetProgramLogSize");
    nv.log = (nv_get_fn)dlsym(nv.h, "nvrtcGetProgramLog");
    nv.ptx_size = (nv_size_fn)dlsym(nv.h, "nvrtcGetPTXSize");
    nv.ptx = (nv_get_fn)dlsym(nv.h, "nvrtcGetPTX");
    nv.destroy = (nv_destroy_fn)dlsym(nv.h, "nvrtcDestroyProgram");
    nv.errstr = (nv_errstr_fn)dlsym(nv.h, "nvrtcGetErrorString");
    if (!version || !nv.create || !nv.compile || !nv.log_size || !nv.log || !nv.ptx_size || !nv.ptx || !nv.destroy ||
        !nv.errstr || version(&nv.major, &nv.minor) != 0) {
        snprintf(nv.why, sizeof nv.why, "the NVRTC library found lacks the functions redfox needs");
        nv.h = NULL; /* left loaded: see the file comment */
    }
}

int rf_gpu_nvrtc_available(char *why, size_t n)
{
    pthread_once(&nv.once, nv_open);
    if (!nv.h && why && n) snprintf(why, n, "%s", nv.why);
    return nv.h != NULL;
}

void rf_gpu_hash128(const void *data, uint64_t n, uint64_t out[2])
{
    out[0] = rf_hash64(data, (size_t)n, UINT64_C(0xcbf29ce484222325)) ^ n;
    out[1] = rf_hash64(data, (size_t)n, UINT64_C(0x84222325cbf29ce4)) + n * UINT64_C(0x9e3779b97f4a7c15);
}

void rf_gpu_ptx_free(rf_gpu_ptx *x)
{
    if (!x) return;
    free(x->ptx);
    free(x->arch);
    free(x->abi);
    free(x->opts);
    memset(x, 0, sizeof *x);
}

char *rf_gpu_ptx_opts(int no_fuse) { return rf_sprintf("%s %s", no_fuse ? "unfused" : "fused", NVRTC_FLAGS_TEXT); }

void rf_gpu_ptx_key(const rf_gpu_ptx *x, uint64_t out[2])
{
    rf_buf b;
    rf_buf_init(&b);
    rf_rfx_put_u64(&b, x->src_hash[0]);
    rf_rfx_put_u64(&b, x->src_hash[1]);
    rf_rfx_put_cstr(&b, x->abi ? x->abi : "");
    rf_rfx_put_cstr(&b, x->opts ? x->opts : "");
    rf_rfx_put_cstr(&b, x->arch ? x->arch : "");
    rf_gpu_hash128(b.data ? b.data : "", (uint64_t)b.len, out);
    rf_buf_free(&b);
}

/* ---- the cache --------------------------------------------------------------- */

static char *cache_root(const char *dir)
{
    if (dir) return dir[0] ? rf_strdup(dir) : NULL;
    /* (a relative $XDG_CACHE_HOME is invalid, to be ignored, as the XDG
    ** Base Directory spec says: taken from the working folder, it made a
    ** cache in every folder redfox ran in) */
    const char *e = getenv("XDG_CACHE_HOME");
    if (e && e[0] == '/') return rf_sprintf("%s/redfox", e);
    e = getenv("HOME");
    if (e && e[0]) return rf_sprintf("%s/.cache/redfox", e);
    return NULL;
}

/* mkdir -p; failures show up when the file is written */
static void make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(path, 0777);
            *p = '/';
        }
    mkdir(path, 0777);
}

#define CACHE_MAGIC "redfox cache entry 1 "

/* An empty folder in an entry's place (no rename replaces one) is removed,
** so the entry is written anew; one holding anything is left alone (its
** files are not ours to delete), and the entry compiled again at every
** use: the user is told where, once a run (d keeps one of a warning said
** again). Shared by NVRTC's PTX, the driver's cubins and the emulator's
** objects. */
void rf_gpu_cache_clear_folder(const char *path, rf_diags *d)
{
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && rmdir(path) != 0 && d) {
        int e = errno;
        if (e == ENOTEMPTY || e == EEXIST)
            rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(path, 0, 0),
                        "a folder with files in it stands where this GPU-code cache entry goes: the code is compiled "
                        "again at every use until the folder is moved away (redfox removes only an empty one)");
        else
            rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(path, 0, 0),
                        "a folder stands where this GPU-code cache entry goes and cannot be removed (%s): the code is "
                        "compiled again at every use until it is moved away",
                        strerror(e));
    }
}

void rf_gpu_cache_write_checked(const char *dir, const char *path, const void *data, uint64_t len, rf_diags *d)
{
    if (len > (uint64_t)RF_GPU_CACHE_MAX_BYTES) return; /* never read back */
    char *b = rf_malloc((size_t)len + RF_GPU_CACHE_HEAD);
    if (!b) return;
    uLong crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)data, (uInt)len);
    int n = snprintf(b, RF_GPU_CACHE_HEAD, CACHE_MAGIC "%" PRIu64 " %08lx", len, (unsigned long)crc);
    memset(b + n, ' ', (size_t)(RF_GPU_CACHE_HEAD - 1 - n));
    b[RF_GPU_CACHE_HEAD - 1] = '\n';
    memcpy(b + RF_GPU_CACHE_HEAD, data, (size_t)len);
    rf_gpu_cache_clear_folder(path, d);
    rf_gpu_cache_write(dir, path, b, len + RF_GPU_CACHE_HEAD);
    free(b);
}

char *rf_gpu_cache_read_checked(const char *path, uint64_t *len)
{
    char *data = NULL;
    int64_t n = 0;
    const char *why;
    *len = 0;
    if (rf_read_file_bounded(path, RF_GPU_CACHE_MAX_BYTES + RF_GPU_CACHE_HEAD, &data, &n, &why)) return NULL;
    uint64_t want = 0;
    unsigned long crc = 0;
    char head[RF_GPU_CACHE_HEAD + 1];
    int ok = n >= RF_GPU_CACHE_HEAD && !memcmp(data, CACHE_MAGIC, sizeof CACHE_MAGIC - 1) &&
             data[RF_GPU_CACHE_HEAD - 1] == '\n';
    if (ok) {
        memcpy(head, data, RF_GPU_CACHE_HEAD);
        head[RF_GPU_CACHE_HEAD - 1] = 0;
        char *end = NULL;
        want = strtoull(head + sizeof CACHE_MAGIC - 1, &end, 10);
        ok = end && *end == ' ';
        if (ok) crc = strtoul(end + 1, &end, 16);
        ok = ok && end && (*end == ' ' || !*end) && want == (uint64_t)(n - RF_GPU_CACHE_HEAD);
    }
    ok = ok && crc == (unsigned long)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)data + RF_GPU_CACHE_HEAD, (uInt)want);
    if (!ok) {
        free(data);
        return NULL;
    }
    memmove(data, data + RF_GPU_CACHE_HEAD, (size_t)want);
    data[want] = 0;
    *len = want;
    return data;
}

char *rf_gpu_cubin_read_checked(const char *path, uint64_t *len)
{
    char *data = rf_gpu_cache_read_checked(path, len);
    /* an ELF64 file (its header's 64 bytes at least, class 2), as the
    ** driver's linker writes a cubin: a whole entry of other bytes (a
    ** failed write of an older build, a file put there) is a miss too */
    if (data && (*len < 64 || memcmp(data, "\177ELF", 4) || data[4] != 2)) {
        free(data);
        data = NULL;
        *len = 0;
    }
    return data;
}

#define SEAL_MAGIC "redfox cache seal 1 "

/* The seal of len bytes of crc, RF_GPU_CACHE_HEAD bytes: "\n" magic LEN CRC, blanks, "\n". */
static void seal_text(char out[RF_GPU_CACHE_HEAD], uint64_t len, unsigned long crc)
{
    char t[RF_GPU_CACHE_HEAD + 1];
    int n = snprintf(t, sizeof t, "\n" SEAL_MAGIC "%" PRIu64 " %08lx", len, crc);
    memset(t + n, ' ', (size_t)(RF_GPU_CACHE_HEAD - 1 - n));
    t[RF_GPU_CACHE_HEAD - 1] = '\n';
    memcpy(out, t, RF_GPU_CACHE_HEAD);
}

int rf_gpu_cache_seal(const char *path)
{
    char *data = NULL;
    int64_t n = 0;
    const char *why;
    if (rf_read_file_bounded(path, RF_GPU_CACHE_MAX_BYTES - RF_GPU_CACHE_HEAD, &data, &n, &why)) return 0;
    char seal[RF_GPU_CACHE_HEAD];
    seal_text(seal, (uint64_t)n, (unsigned long)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)data, (uInt)n));
    free(data);
    FILE *f = fopen(path, "ab");
    int ok = f && fwrite(seal, 1, sizeof seal, f) == sizeof seal;
    if (f && fclose(f) != 0) ok = 0;
    return ok;
}

int rf_gpu_cache_sealed(const char *path)
{
    char *data = NULL;
    int64_t n = 0;
    const char *why;
    if (rf_read_file_bounded(path, RF_GPU_CACHE_MAX_BYTES, &data, &n, &why)) return 0;
    int ok = 0;
    if (n >= RF_GPU_CACHE_HEAD) {
        int64_t len = n - RF_GPU_CACHE_HEAD;
        char want[RF_GPU_CACHE_HEAD];
        seal_text(want, (uint64_t)len, (unsigned long)crc32(crc32(0L, Z_NULL, 0), (const Bytef *)data, (uInt)len));
        ok = !memcmp(data + len, want, sizeof want);
    }
    free(data);
    return ok;
}

int rf_gpu_cache_dir_make(const char *dir)
{
    char *d = rf_strdup(dir);
    if (!d) return 0;
    make_dirs(d);
    free(d);
    struct stat sb;
    return stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) && access(dir, W_OK | X_OK) == 0;
}

char *rf_gpu_cache_dir(const char *root_dir, const char *sub)
{
    char *root = cache_root(root_dir);
    char *dir = root ? rf_sprintf("%s/%s", root, sub) : NULL;
    free(root);
    return dir;
}

char *rf_gpu_cache_tmp_name(const char *path, const char *ext)
{
    static _Atomic unsigned long written;
    return rf_sprintf("%s.%ld.%lu.%s", path, (long)getpid(), (unsigned long)++written, ext);
}

int rf_gpu_cache_create_new(const char *tmp)
{
    /* a new file, never one found under the name (this process's own, so
    ** none of redfox's): fopen "wb" wrote through a symbolic link there
    ** into the file it names, and waited for ever on a named pipe; such a
    ** thing is removed (not a folder) and the name taken once more */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    return fd;
}

/* The pid in a cache writer's temporary's name, NAME.<pid>.<n>.tmp
** (rf_gpu_cache_tmp_name), else 0. */
static long cache_tmp_pid(const char *name)
{
    size_t n = strlen(name);
    if (n < 8 || strcmp(name + n - 4, ".tmp")) return 0;
    const char *e = name + n - 4, *p = e;
    while (p > name && p[-1] >= '0' && p[-1] <= '9') p--;
    if (p == e || p == name || p[-1] != '.') return 0; /* <n> */
    e = --p;
    while (p > name && p[-1] >= '0' && p[-1] <= '9') p--;
    if (p == e || e - p > 10 || p == name || p[-1] != '.') return 0; /* <pid> */
    long pid = 0;
    for (; p < e; p++) pid = pid * 10 + (*p - '0');
    return pid;
}

/* Removes from the cache folder dir the temporaries of writers that are
** gone (SIGKILL, a crash, or a signal that ended the process between the
** temporary's creation and its rename): some 400 KB of PTX each, kept for
** ever before (the emulator's builds and the placement model sweep their
** own alike). Only a process's that no longer exists (kill 0: ESRCH), and
** only once the file is CACHE_STALE_TMP_S old (a writer of another pid
** namespace sharing the folder renames its file within a moment). */
#define CACHE_STALE_TMP_S 60
static void sweep_stale_tmps(const char *dir)
{
    DIR *dh = opendir(dir);
    time_t now = time(NULL);
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        long pid = cache_tmp_pid(e->d_name);
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        struct stat sb;
        if (!fstatat(dirfd(dh), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) && S_ISREG(sb.st_mode) &&
            now - sb.st_mtime > CACHE_STALE_TMP_S)
            (void)unlinkat(dirfd(dh), e->d_name, 0);
    }
    if (dh) closedir(dh);
}

int rf_gpu_cache_write(const char *dir, const char *path, const void *data, uint64_t len)
{
    char *d = rf_strdup(dir);
    if (!d) return 0;
    make_dirs(d);
    sweep_stale_tmps(d);
    free(d);
    char *tmp = rf_gpu_cache_tmp_name(path, "tmp");
    if (!tmp) return 0;
    int fd = rf_gpu_cache_create_new(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f && fd >= 0) close(fd);
    int ok = f && fwrite(data, 1, (size_t)len, f) == (size_t)len;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    int e = errno; /* (what went wrong, for the caller to say) */
    if (!ok) remove(tmp);
    free(tmp);
    errno = e;
    return ok;
}

/* ---- compiling ----------------------------------------------------------------- */

int rf_gpu_arch_valid(const char *arch)
{
    const char *p = !strncmp(arch, "compute_", 8) ? arch + 8 : !strncmp(arch, "sm_", 3) ? arch + 3 : NULL;
    if (!p) return 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9') p++, digits++;
    if (*p == 'a' || *p == 'f') p++;
    return (digits == 2 || digits == 3) && !*p;
}

void rf_gpu_nv_result_free(rf_gpu_nv_result *r)
{
    free(r->ptx);
    free(r->log);
    memset(r, 0, sizeof *r);
}

void rf_gpu_nvrtc_run(const char *src, int nopts, const char *const *opts, rf_gpu_nv_result *r)
{
    memset(r, 0, sizeof *r);
    void *prog = NULL;
    int rc = nv.create(&prog, src, "redfox_program.cu", 0, NULL, NULL);
    if (rc != 0) {
        r->stage = RF_GPU_NV_CREATE;
        r->rc = rc;
        return;
    }
    rc = nv.compile(prog, nopts, opts);
    if (rc != 0) {
        r->stage = RF_GPU_NV_COMPILE;
        r->rc = rc;
        size_t ln = 0;
        if (nv.log_size(prog, &ln) == 0 && ln > 0 && (r->log = malloc(ln + 1))) {
            if (nv.log(prog, r->log) == 0) r->log[ln] = 0;
            else r->log[0] = 0;
        }
    } else {
        size_t n = 0;
        if ((rc = nv.ptx_size(prog, &n)) != 0 || n == 0) {
            r->stage = RF_GPU_NV_PTX;
            r->rc = rc;
        } else if (!(r->ptx = malloc(n + 1))) {
            r->stage = RF_GPU_NV_NOMEM;
        } else if ((rc = nv.ptx(prog, r->ptx)) != 0) {
            r->stage = RF_GPU_NV_PTX;
            r->rc = rc;
            free(r->ptx);
            r->ptx = NULL;
        } else {
            r->ptx[n] = 0;
            r->len = strlen(r->ptx); /* NVRTC counts the NUL */
        }
    }
    nv.destroy(&prog);
}

/* ---- the programs this process compiled -------------------------------------- */

/* A run loads its program anew: hashing the source for the disk cache's
** key, reading and checking the cached PTX, then (rt_gpu_cuda.c) hashing
** the PTX for the JIT's cubin cost 1-4 ms a run on an H200 host (the byte
** hash runs at well under 1 GB/s), which `redfox exec --each` paid for two
** programs a transaction and `--repeat` once a run. So the last few
** sources compiled in this process are kept with their PTX and its hash:
** a source equal byte for byte (and compiled with the same options) takes
** a copy of that PTX without hashing or reading anything. */
#define MEMO_PROGRAMS 8
static struct {
    pthread_mutex_t mu;
    int n;
    struct memo_entry {
        char *src;
        uint64_t srclen;
        rf_gpu_ptx ptx;
    } m[MEMO_PROGRAMS]; /* oldest first */
} memo = {PTHREAD_MUTEX_INITIALIZER, 0, {{NULL, 0, {NULL, 0, NULL, NULL, NULL, {0, 0}, {0, 0}, {0, 0}, 0, 0, 0}}}};

/* A copy of from (its strings owned anew): RF_ENOMEM leaves to cleared. */
static rf_status ptx_copy(const rf_gpu_ptx *from, rf_gpu_ptx *to)
{
    *to = *from;
    to->ptx = rf_malloc(from->len + 1);
    to->arch = from->arch ? rf_strdup(from->arch) : NULL;
    to->abi = from->abi ? rf_strdup(from->abi) : NULL;
    to->opts = from->opts ? rf_strdup(from->opts) : NULL;
    if (!to->ptx || (from->arch && !to->arch) || (from->abi && !to->abi) || (from->opts && !to->opts)) {
        rf_gpu_ptx_free(to);
        return RF_ENOMEM;
    }
    memcpy(to->ptx, from->ptx, from->len + 1);
    return RF_OK;
}

/* The kept PTX of src compiled with opts (its options text) into out: 1
** when there was one. */
static int memo_find(const char *src, uint64_t len, const char *arch, const char *opts, rf_gpu_ptx *out)
{
    int found = 0;
    pthread_mutex_lock(&memo.mu);
    for (int i = memo.n - 1; i >= 0 && !found; i--) {
        struct memo_entry *e = &memo.m[i];
        if (e->srclen != len || strcmp(e->ptx.arch, arch) || strcmp(e->ptx.opts, opts) || memcmp(e->src, src, len))
            continue;
        found = ptx_copy(&e->ptx, out) == RF_OK;
        if (found) { /* the newest now */
            struct memo_entry t = *e;
            memmove(e, e + 1, (size_t)(memo.n - i - 1) * sizeof *e);
            memo.m[memo.n - 1] = t;
        }
    }
    pthread_mutex_unlock(&memo.mu);
    if (found) {
        out->from_cache = 1;
        out->seconds = 0;
    }
    return found;
}

/* ptx, compiled from src, kept (and hashed: ptx->ptx_hash set); the oldest
** kept one dropped to make room. Out of memory: nothing kept. */
static void memo_add(const char *src, uint64_t len, rf_gpu_ptx *ptx)
{
    if (!ptx->ptx_hashed) {
        rf_gpu_hash128(ptx->ptx, ptx->len, ptx->ptx_hash);
        ptx->ptx_hashed = 1;
    }
    struct memo_entry e, old;
    memset(&e, 0, sizeof e);
    memset(&old, 0, sizeof old);
    e.src = rf_malloc(len + 1);
    e.srclen = len;
    if (!e.src || !ptx->arch || !ptx->opts || ptx_copy(ptx, &e.ptx)) {
        free(e.src);
        return;
    }
    memcpy(e.src, src, len);
    e.src[len] = 0;
    pthread_mutex_lock(&memo.mu);
    if (memo.n == MEMO_PROGRAMS) {
        old = memo.m[0];
        memmove(&memo.m[0], &memo.m[1], (size_t)(MEMO_PROGRAMS - 1) * sizeof memo.m[0]);
        memo.n--;
    }
    memo.m[memo.n++] = e;
    pthread_mutex_unlock(&memo.mu);
    free(old.src);
    rf_gpu_ptx_free(&old.ptx);
}

rf_status rf_gpu_nvrtc_compile(const char *src, uint64_t len, const rf_gpu_nvrtc_opts *o, rf_gpu_ptx *out,
                               rf_diags *d)
{
    memset(out, 0, sizeof *out);
    const char *arch = o && o->arch ? o->arch : "compute_80";
    char why[256];
    if (!rf_gpu_nvrtc_available(why, sizeof why)) {
        rf_error(d, rf_mkloc(NULL, 0, 0), "%s", why);
        return RF_EUSER;
    }
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    const char *opts[] = {archopt, NVRTC_FLAGS};
    int nopts = (int)(sizeof opts / sizeof opts[0]);
    char *optstext = rf_gpu_ptx_opts(o && o->no_fuse);
    if (!optstext) return RF_ENOMEM;
    int kept = memo_find(src, len, arch, optstext, out);
    free(optstext);
    if (kept) return RF_OK;

    /* the cache key covers everything that shapes the PTX */
    rf_gpu_hash128(src, len, out->src_hash);
    rf_buf key;
    rf_buf_init(&key);
    rf_buf_printf(&key, "%016" PRIx64 "%016" PRIx64 " nvrtc %d.%d", out->src_hash[0], out->src_hash[1], nv.major,
                  nv.minor);
    for (int i = 0; i < nopts; i++) rf_buf_printf(&key, " %s", opts[i]);
    uint64_t kh[2];
    rf_gpu_hash128(key.data, (uint64_t)key.len, kh);
    rf_buf_free(&key);
    char *root = cache_root(o ? o->cache_dir : NULL);
    char *dir = root ? rf_sprintf("%s/nvrtc", root) : NULL;
    char *path = dir ? rf_sprintf("%s/%016" PRIx64 "%016" PRIx64 ".ptx", dir, kh[0], kh[1]) : NULL;
    free(root);
    out->arch = rf_strdup(arch);
    out->abi = rf_strdup(rf_gpu_abi_tag());
    out->opts = rf_gpu_ptx_opts(o && o->no_fuse);
    if (!out->arch || !out->abi || !out->opts) {
        free(dir);
        free(path);
        rf_gpu_ptx_free(out);
        return RF_ENOMEM;
    }
    if (path) {
        uint64_t n = 0;
        char *ptx = rf_gpu_cache_read_checked(path, &n);
        if (ptx && n > 0 && strlen(ptx) == n && strstr(ptx, ".version") && strstr(ptx, ".target")) {
            out->ptx = ptx;
            out->len = n;
            out->from_cache = 1;
            rf_gpu_ptx_key(out, out->key);
            memo_add(src, len, out);
            free(dir);
            free(path);
            return RF_OK;
        }
        free(ptx);
    }

    double t0 = rf_now();
    rf_gpu_nv_result r;
    rf_gpu_nvrtc_units(src, len, nopts, opts, o ? o->threads : 0, &r);
    rf_status st = RF_OK;
    switch (r.stage) {
    case RF_GPU_NV_OK:
        out->ptx = r.ptx;
        out->len = r.len;
        r.ptx = NULL;
        break;
    case RF_GPU_NV_NOMEM:
        st = RF_ENOMEM;
        break;
    case RF_GPU_NV_CREATE:
        rf_error(d, rf_mkloc(NULL, 0, 0), "NVRTC: cannot create a program: %s", nv.errstr(r.rc));
        st = r.rc == 1 ? RF_ENOMEM : RF_EINTERNAL;
        break;
    case RF_GPU_NV_COMPILE:
        if (r.rc == 5) { /* NVRTC_ERROR_INVALID_OPTION: the options are the caller's (the architecture) */
            rf_error(d, rf_mkloc(NULL, 0, 0),
                     "NVRTC does not compile for the GPU architecture `%s` (gpu_arch, `redfox compile --gpu-arch`):\n%.4000s",
                     arch, r.log ? r.log : "(no log)");
            st = RF_EUSAGE;
        } else {
            rf_internal_error(d, rf_mkloc(NULL, 0, 0), "NVRTC rejected the generated CUDA source (%s):\n%.4000s",
                              nv.errstr(r.rc), r.log ? r.log : "(no log)");
            st = RF_EINTERNAL;
        }
        break;
    case RF_GPU_NV_PTX:
        rf_error(d, rf_mkloc(NULL, 0, 0), "NVRTC: no PTX: %s", nv.errstr(r.rc));
        st = RF_EINTERNAL;
        break;
    case RF_GPU_NV_PROCESS:
        rf_internal_error(d, rf_mkloc(NULL, 0, 0), "NVRTC: the process compiling a unit of the program failed: %s",
                          r.log ? r.log : "(no reason)");
        st = RF_EINTERNAL;
        break;
    case RF_GPU_NV_MERGE:
        rf_internal_error(d, rf_mkloc(NULL, 0, 0), "NVRTC: the units' PTX cannot be put together: %s",
                          r.log ? r.log : "(no reason)");
        st = RF_EINTERNAL;
        break;
    }
    rf_gpu_nv_result_free(&r);
    out->seconds = rf_now() - t0;
    if (!st) rf_gpu_ptx_key(out, out->key);
    if (!st && path) rf_gpu_cache_write_checked(dir, path, out->ptx, out->len, d);
    if (!st) memo_add(src, len, out);
    free(dir);
    free(path);
    if (st) rf_gpu_ptx_free(out);
    return st;
}

rf_status rf_gpu_compile_program(const rf_hir_program *p, const rf_gpu_plan *pl, const rf_gpu_nvrtc_opts *o,
                                 rf_gpu_ptx *out, rf_diags *d)
{
    memset(out, 0, sizeof *out);
    rf_buf src;
    rf_buf_init(&src);
    rf_status st = rf_gpu_codegen(p, pl, !(o && o->no_fuse), &src, d);
    if (!st) st = rf_gpu_nvrtc_compile(rf_buf_cstr(&src), (uint64_t)src.len, o, out, d);
    rf_buf_free(&src);
    return st;
}

rf_status rf_gpu_make_ptx0(const rf_hir_program *p, const rf_gpu_plan *pl, const rf_gpu_nvrtc_opts *o, rf_buf *sec,
                           rf_diags *d)
{
    char why[256];
    if (!rf_gpu_nvrtc_available(why, sizeof why)) {
        rf_diag_add(d, RF_SEV_WARNING, rf_mkloc(p->source, 0, 0),
                    "no GPU code in this .rfx: %s (the program runs on the CPU, or is compiled for the GPU when run)",
                    why);
        return RF_OK;
    }
    rf_gpu_ptx x;
    rf_status st = rf_gpu_compile_program(p, pl, o, &x, d);
    if (st) return st;
    st = rf_gpu_ptx0_encode(&x, sec);
    rf_gpu_ptx_free(&x);
    return st;
}

/* ---- PTX0 ------------------------------------------------------------------------ */

/* PTX is verbose text: zlib shrinks it about eightfold, which keeps .rfx
** files (and build folders full of them) small. */
rf_status rf_gpu_ptx0_encode(const rf_gpu_ptx *x, rf_buf *out)
{
    uLongf zn = compressBound((uLong)x->len);
    unsigned char *z = rf_malloc((size_t)zn + 1);
    if (!z) return RF_ENOMEM;
    if (compress2(z, &zn, (const Bytef *)x->ptx, (uLong)x->len, 6) != Z_OK) {
        free(z);
        return RF_ENOMEM; /* zlib fails only for memory here */
    }
    rf_rfx_put_u32(out, PTX0_VERSION);
    rf_rfx_put_cstr(out, x->abi ? x->abi : "");
    rf_rfx_put_cstr(out, x->arch ? x->arch : "");
    rf_rfx_put_cstr(out, x->opts ? x->opts : "");
    rf_rfx_put_u64(out, x->src_hash[0]);
    rf_rfx_put_u64(out, x->src_hash[1]);
    rf_rfx_put_u64(out, x->key[0]);
    rf_rfx_put_u64(out, x->key[1]);
    rf_rfx_put_u64(out, x->len);
    rf_rfx_put_str(out, z, (uint64_t)zn);
    free(z);
    return out->oom ? RF_ENOMEM : RF_OK;
}

rf_status rf_gpu_ptx0_decode(const char *file, const void *data, uint64_t size, rf_gpu_ptx *out, rf_diags *d)
{
    memset(out, 0, sizeof *out);
    rf_rfx_rd rd;
    rf_rfx_rd_init(&rd, data, size);
    uint32_t version = 0;
    const char *abi = NULL, *arch = NULL, *opts = NULL, *z = NULL;
    uint64_t nabi = 0, narch = 0, nopts = 0, nz = 0, nptx = 0;
    rf_rfx_get_u32(&rd, &version);
    if (rf_rfx_rd_ok(&rd) && version != PTX0_VERSION) {
        rf_error(d, rf_mkloc(file, 0, 0),
                 "the PTX0 section is of format version %u, this redfox reads version %d: recompile the program with "
                 "this redfox (redfox compile)",
                 version, PTX0_VERSION);
        return RF_EUSER;
    }
    rf_rfx_get_str(&rd, &abi, &nabi);
    rf_rfx_get_str(&rd, &arch, &narch);
    rf_rfx_get_str(&rd, &opts, &nopts);
    rf_rfx_get_u64(&rd, &out->src_hash[0]);
    rf_rfx_get_u64(&rd, &out->src_hash[1]);
    rf_rfx_get_u64(&rd, &out->key[0]);
    rf_rfx_get_u64(&rd, &out->key[1]);
    rf_rfx_get_u64(&rd, &nptx);
    rf_rfx_get_str(&rd, &z, &nz);
    /* (no PTX is a gigabyte: the bound keeps a corrupt length from allocating much) */
    int ok = rf_rfx_rd_at_end(&rd) && nptx < (UINT64_C(1) << 30);
    out->ptx = ok ? rf_malloc((size_t)nptx + 1) : NULL;
    uLongf got = (uLongf)nptx;
    if (ok && !out->ptx) return RF_ENOMEM;
    if (ok && (uncompress((Bytef *)out->ptx, &got, (const Bytef *)z, (uLong)nz) != Z_OK || got != nptx ||
               memchr(out->ptx, 0, (size_t)nptx)))
        ok = 0;
    if (!ok) {
        rf_gpu_ptx_free(out);
        rf_error(d, rf_mkloc(file, 0, 0), "the PTX0 section is malformed: recompile the program (redfox compile)");
        return RF_EUSER;
    }
    out->ptx[nptx] = 0;
    out->len = nptx;
    out->abi = rf_strndup(abi ? abi : "", (size_t)nabi);
    out->arch = rf_strndup(arch ? arch : "", (size_t)narch);
    out->opts = rf_strndup(opts ? opts : "", (size_t)nopts);
    if (!out->abi || !out->arch || !out->opts) {
        rf_gpu_ptx_free(out);
        return RF_ENOMEM;
    }
    return RF_OK;
}
