/*
** runtime/gpu/rt_gpu_cuda.c: the real GPU: the CUDA driver API opened with
** dlopen("libcuda.so.1"), so that one redfox binary runs with or without a
** driver, and CUB through skeletons/cub (cudart, linked statically, shares
** the device's primary context with the driver calls here).
**
** Owns: the driver's function table (loaded once per process), the device
** and its primary context (retained once, kept until exit), and per run one
** stream, two pinned staging buffers for transfers (filled by the run's
** host threads together, one while the GPU copies the other), a small pinned buffer for
** scalars, two events for timing, and the loaded module with its function
** cache; the modules of closed devices kept loaded for later runs of the
** same PTX in this process (kept_take, kept_put). Module loading JIT-compiles the PTX with the driver's linker and
** keeps the resulting cubin on disk (<cache>/jit/<hash of PTX, GPU
** architecture and driver version>.cubin, with its length and CRC-32:
** rf_gpu_cache_read_checked; a damaged one is linked again, never loaded),
** so a program's second run skips the JIT. Every driver and cudart result is checked; failures become errors
** naming the operation and the CUDA error.
*/
#include "rf_cub.h"
#include "rf_rt_stored.h"
#include "rf_wire.h"
#include "rt_gpu_internal.h"

#include "rf_sys.h"
#include <cuda.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

typedef struct cu_api {
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemAllocHost)(void **, size_t);
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemHostRegister)(void *, size_t, unsigned);   /* optional: else cuMemAllocHost */
    CUresult (*MemHostUnregister)(void *);                    /* optional (with MemHostRegister) */
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*EventDestroy)(CUevent);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunctionCount)(unsigned *, CUmodule);              /* optional (12.4) */
    CUresult (*ModuleEnumerateFunctions)(CUfunction *, unsigned, CUmodule); /* optional (12.4) */
    CUresult (*FuncGetName)(const char **, CUfunction);                    /* optional (12.3) */
    CUresult (*FuncLoad)(CUfunction);                                      /* optional (12.4) */
    CUresult (*OccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t); /* optional */
    CUresult (*LinkCreate)(unsigned, CUjit_option *, void **, CUlinkState *);
    CUresult (*LinkAddData)(CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned, CUjit_option *,
                            void **);
    CUresult (*LinkComplete)(CUlinkState, void **, size_t *);
    CUresult (*LinkDestroy)(CUlinkState);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             CUstream, void **, void **);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*GetErrorName)(CUresult, const char **);
} cu_api;

/* The process-wide driver state: opened at most once. */
static struct {
    pthread_once_t once;
    _Atomic int probed; /* drv_open has run (ok and why are final) */
    int ok;
    char why[256];
    cu_api f;
    CUdevice dev;
    CUcontext ctx;
    int cc_major, cc_minor, sms, driver;
    char name[128];
    size_t total;
    int choice;   /* rf_rt_gpu_choose: the wanted index among the visible GPUs */
    int ordinal, count; /* the GPU opened, of count visible */
    int64_t pci;        /* its PCI address (domain, bus, device): which physical GPU */
    /* the start's parts, seconds (--profile): loading the driver and
    ** cuInit, the device's primary context */
    double t_init, t_context;
    int parts_claimed; /* a run's profile has shown them (rf_gpu_cuda_start_parts) */
} drv = {PTHREAD_ONCE_INIT};

/* cudart's start (cudaSetDevice: CUB's module and the runtime's own state,
** tens of ms) on a thread of its own, begun by drv_open_once once the
** context exists, beside the rest of the start (the device's open, the
** program module's load, the first copies); joined once, by whatever first
** needs it (cudart_ready: a CUB call, the load's end; cudart_settle: the
** probe outside a run, the close). */
static struct {
    pthread_mutex_t mu;
    pthread_t th;
    int running;
    int err;        /* cudaSetDevice's error (0: started) */
    double secs;    /* its time on its thread */
    double waited;  /* how long the first that needed it waited (--profile) */
} crt = {.mu = PTHREAD_MUTEX_INITIALIZER};

void rf_rt_gpu_choose(int index) { drv.choice = index > 0 ? index : 0; }

#define STAGE_BYTES ((size_t)16 << 20)
#define SMALL_BYTES ((size_t)4096)
#define STAGE_PAR_MIN ((size_t)2 << 20) /* a staging chunk from which threads fill it together */
#define STAGE_GRAIN ((int64_t)1 << 20)   /* each thread's piece of it */

/* A kernel of the module; what cu_func hands out (stable: allocated one by one). */
typedef struct fnent {
    char *name;
    CUfunction fn;
    unsigned max_grid; /* blocks that are resident at once on the whole GPU (0: unknown) */
} fnent;

typedef struct cu_state {
    CUstream stream;
    void *stage[2];
    CUevent stage_ev[2];
    int stage_used[2];
    int stage_next; /* the staging buffer the next copy fills first */
    void *small;
    void *registered; /* the block stage[0..1] and small lie in, registered (hostmem); NULL: each cuMemAllocHost'd */
    CUevent mark[2];
    CUmodule mod;
    fnent **fns;
    int nfns, capfns;
    uint64_t mod_key[2]; /* rf_gpu_hash128 of the module's PTX: its place among the kept modules */
    /* the pinned buffers, registered on a thread of their own (pin_main)
    ** beside the program module's load, waited for at their first use */
    pthread_t pin_th;
    int pin_running;
    CUresult pin_r;
    double pin_secs;
    /* the touched memory pin_main registers as stage[0..1] and small
    ** (hostmem), until the first copy has settled it (pin_settle): that
    ** copy fills its first chunk there while the registration runs */
    char *hm;
    /* the pool's first arena (rf_gpool_first_bytes), allocated on a
    ** thread of its own (arena_main) beside the registration, taken by the
    ** pool's first cu_mem_alloc of that size; early_bytes 0: none (taken,
    ** or dropped) */
    pthread_t arena_th;
    int arena_running;
    uint64_t early_bytes;
    CUdeviceptr early;
    double early_secs;
} cu_state;

static const char *cu_errname(CUresult r)
{
    const char *s = NULL;
    if (drv.f.GetErrorName && drv.f.GetErrorName(r, &s) != CUDA_SUCCESS) s = NULL;
    return s ? s : "CUDA_ERROR_UNKNOWN";
}

static const char *cu_errstr(CUresult r)
{
    const char *s = NULL;
    if (drv.f.GetErrorString && drv.f.GetErrorString(r, &s) != CUDA_SUCCESS) s = NULL;
    return s ? s : "unknown error";
}

static rf_status cu_fail(gdev *g, CUresult r, const char *what)
{
    rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU: %s failed: %s (%s)", what, cu_errstr(r), cu_errname(r));
    return r == CUDA_ERROR_OUT_OF_MEMORY ? RF_ENOMEM : RF_EINTERNAL;
}
#define CU(g, call, what)                                                                                              \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        if (r_ != CUDA_SUCCESS) return cu_fail((g), r_, (what));                                                     \
    } while (0)

static rf_status cub_fail(gdev *g, int err, const char *what)
{
    rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU: %s failed: %s", what, rf_cub_error_string(err));
    /* the device's memory, not the host's: the driver then runs the program
    ** on the CPU and says so (seen with many redfox processes on one GPU,
    ** when CUB's own module could not be loaded) */
    return err == 2 /* cudaErrorMemoryAllocation */ ? RF_EDEVMEM : RF_EINTERNAL;
}

/* cudart's start joined if it runs (the caller holds crt.mu). */
static void cudart_join_locked(void)
{
    if (!crt.running) return;
    double t0 = rf_now();
    pthread_join(crt.th, NULL);
    crt.running = 0;
    crt.waited = rf_now() - t0;
}

/* Waits for cudart's start (once in the process): an error where it failed. */
static rf_status cudart_ready(gdev *g)
{
    pthread_mutex_lock(&crt.mu);
    cudart_join_locked();
    int e = crt.err;
    pthread_mutex_unlock(&crt.mu);
    return e ? cub_fail(g, e, "starting the CUDA runtime (CUB)") : RF_OK;
}

/* ---- opening the driver --------------------------------------------------- */

static void *sym(void *h, const char *a, const char *b)
{
    void *p = dlsym(h, a);
    if (!p && b) p = dlsym(h, b);
    return p;
}

/* cudart's thread: the driver's context made current first, so that
** cudart binds to it (the same device's primary context) */
static void *cudart_main(void *arg)
{
    (void)arg;
    double t0 = rf_now();
    drv.f.CtxSetCurrent(drv.ctx);
    crt.err = rf_cub_init(drv.ordinal);
    /* (a fresh process's first copy as stored launches it at once) */
    if (!crt.err) crt.err = rf_cub_wire_load();
    crt.secs = rf_now() - t0;
    return NULL;
}

/* The staging buffers' host memory (STAGING_BYTES: the two staging buffers
** and the small one), taken and touched on a thread of its own while the
** driver starts (cuInit and the context: about 230 ms on an H100 host),
** then page-locked by registering it (pin_main): cuMemAllocHost of the same
** 32 MiB took 12-19 ms after the context, and a fresh process's first copy
** waited for it (q06 at SF 10: 11.7 ms of a 24.5 ms copy). Taken by the
** process's first device; later ones reuse the spare set or allocate. */
#define STAGING_BYTES (2 * STAGE_BYTES + SMALL_BYTES)
static struct {
    pthread_mutex_t mu;
    pthread_t th;
    int running; /* the thread runs or has not been joined */
    void *p;     /* the touched memory (NULL: none, or taken) */
} hostmem = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void *hostmem_main(void *arg)
{
    (void)arg;
    size_t align = (size_t)2 << 20, size = (STAGING_BYTES + align - 1) / align * align;
    void *p = aligned_alloc(align, size);
    if (p) {
#ifdef MADV_HUGEPAGE
        madvise(p, size, MADV_HUGEPAGE); /* (advice: fewer pages to lock) */
#endif
        memset(p, 0, STAGING_BYTES);
    }
    hostmem.p = p;
    return NULL;
}

static void hostmem_begin(void)
{
    if (!drv.f.MemHostRegister) return;
    pthread_mutex_lock(&hostmem.mu);
    if (!hostmem.running && !hostmem.p && pthread_create(&hostmem.th, NULL, hostmem_main, NULL) == 0)
        hostmem.running = 1;
    pthread_mutex_unlock(&hostmem.mu);
}

/* The touched memory, once (NULL: none: allocate as ever). */
static void *hostmem_take(void)
{
    pthread_mutex_lock(&hostmem.mu);
    if (hostmem.running) {
        pthread_join(hostmem.th, NULL);
        hostmem.running = 0;
    }
    void *p = hostmem.p;
    hostmem.p = NULL;
    pthread_mutex_unlock(&hostmem.mu);
    return p;
}

static void drv_open_once(void);
static void drv_open(void)
{
    drv_open_once();
    drv.probed = 1;
}

static void drv_open_once(void)
{
    double t0 = rf_now();
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(drv.why, sizeof drv.why, "no NVIDIA driver (libcuda.so.1 cannot be loaded)");
        return;
    }
    cu_api *f = &drv.f;
#define LOAD(field, name, alt)                                                                                         \
    do {                                                                                                               \
        *(void **)&f->field = sym(h, name, alt);                                                                       \
        if (!f->field) {                                                                                               \
            snprintf(drv.why, sizeof drv.why, "the NVIDIA driver lacks %s (too old?)", name);                          \
            return;                                                                                                    \
        }                                                                                                              \
    } while (0)
    LOAD(Init, "cuInit", NULL);
    LOAD(DriverGetVersion, "cuDriverGetVersion", NULL);
    LOAD(DeviceGetCount, "cuDeviceGetCount", NULL);
    LOAD(DeviceGet, "cuDeviceGet", NULL);
    LOAD(DeviceGetName, "cuDeviceGetName", NULL);
    LOAD(DeviceGetAttribute, "cuDeviceGetAttribute", NULL);
    LOAD(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL);
    LOAD(CtxSetCurrent, "cuCtxSetCurrent", NULL);
    LOAD(MemGetInfo, "cuMemGetInfo_v2", NULL);
    LOAD(MemAlloc, "cuMemAlloc_v2", NULL);
    LOAD(MemFree, "cuMemFree_v2", NULL);
    LOAD(MemAllocHost, "cuMemAllocHost_v2", NULL);
    LOAD(MemFreeHost, "cuMemFreeHost", NULL);
    *(void **)&f->MemHostRegister = sym(h, "cuMemHostRegister_v2", "cuMemHostRegister");
    *(void **)&f->MemHostUnregister = sym(h, "cuMemHostUnregister", NULL);
    if (!f->MemHostUnregister) f->MemHostRegister = NULL;
    hostmem_begin(); /* (the staging buffers' pages, touched while cuInit and the context run) */
    LOAD(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL);
    LOAD(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL);
    LOAD(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", NULL);
    LOAD(MemsetD8Async, "cuMemsetD8Async", NULL);
    LOAD(StreamCreate, "cuStreamCreate", NULL);
    LOAD(StreamDestroy, "cuStreamDestroy_v2", "cuStreamDestroy");
    LOAD(StreamSynchronize, "cuStreamSynchronize", NULL);
    LOAD(EventCreate, "cuEventCreate", NULL);
    LOAD(EventRecord, "cuEventRecord", NULL);
    LOAD(EventSynchronize, "cuEventSynchronize", NULL);
    LOAD(EventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime");
    LOAD(EventDestroy, "cuEventDestroy_v2", "cuEventDestroy");
    LOAD(ModuleLoadData, "cuModuleLoadData", NULL);
    LOAD(ModuleGetFunction, "cuModuleGetFunction", NULL);
    LOAD(ModuleUnload, "cuModuleUnload", NULL);
    /* optional: without them the kernels are looked up (and, with the
    ** driver's lazy loading, put on the GPU) at their first launch */
    *(void **)&f->ModuleGetFunctionCount = sym(h, "cuModuleGetFunctionCount", NULL);
    *(void **)&f->ModuleEnumerateFunctions = sym(h, "cuModuleEnumerateFunctions", NULL);
    *(void **)&f->FuncGetName = sym(h, "cuFuncGetName", NULL);
    *(void **)&f->FuncLoad = sym(h, "cuFuncLoad", NULL);
    *(void **)&f->OccupancyMaxActiveBlocksPerMultiprocessor = sym(h, "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL);
    /* optional: without the linker the driver JITs the PTX itself (and
    ** keeps its own cache), only our cubin cache is lost */
    *(void **)&f->LinkCreate = sym(h, "cuLinkCreate_v2", NULL);
    *(void **)&f->LinkAddData = sym(h, "cuLinkAddData_v2", NULL);
    *(void **)&f->LinkComplete = sym(h, "cuLinkComplete", NULL);
    *(void **)&f->LinkDestroy = sym(h, "cuLinkDestroy", NULL);
    LOAD(LaunchKernel, "cuLaunchKernel", NULL);
    LOAD(GetErrorString, "cuGetErrorString", NULL);
    LOAD(GetErrorName, "cuGetErrorName", NULL);
#undef LOAD
    CUresult r = f->Init(0);
    double t1 = rf_now();
    drv.t_init = t1 - t0;
    if (r != CUDA_SUCCESS) {
        snprintf(drv.why, sizeof drv.why, "the NVIDIA driver does not start: %s (%s)", cu_errstr(r), cu_errname(r));
        return;
    }
    int n = 0;
    if ((r = f->DeviceGetCount(&n)) != CUDA_SUCCESS || n == 0) {
        snprintf(drv.why, sizeof drv.why, "no CUDA device%s%s", r ? ": " : "", r ? cu_errstr(r) : "");
        return;
    }
    /* several ranks on one host: rank r takes GPU r mod the GPUs visible */
    drv.count = n;
    drv.ordinal = drv.choice % n;
    if ((r = f->DeviceGet(&drv.dev, drv.ordinal)) != CUDA_SUCCESS ||
        (r = f->DeviceGetName(drv.name, (int)sizeof drv.name, drv.dev)) != CUDA_SUCCESS ||
        (r = f->DeviceGetAttribute(&drv.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, drv.dev)) !=
            CUDA_SUCCESS ||
        (r = f->DeviceGetAttribute(&drv.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, drv.dev)) !=
            CUDA_SUCCESS ||
        (r = f->DeviceGetAttribute(&drv.sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, drv.dev)) != CUDA_SUCCESS ||
        (r = f->DriverGetVersion(&drv.driver)) != CUDA_SUCCESS) {
        snprintf(drv.why, sizeof drv.why, "the CUDA device cannot be queried: %s", cu_errstr(r));
        return;
    }
    if (drv.cc_major < 8) {
        snprintf(drv.why, sizeof drv.why, "the GPU %s (compute capability %d.%d) is older than the 8.0 redfox needs",
                 drv.name, drv.cc_major, drv.cc_minor);
        return;
    }
    if ((r = f->DevicePrimaryCtxRetain(&drv.ctx, drv.dev)) != CUDA_SUCCESS ||
        (r = f->CtxSetCurrent(drv.ctx)) != CUDA_SUCCESS) {
        snprintf(drv.why, sizeof drv.why, "no CUDA context on %s: %s (%s)", drv.name, cu_errstr(r), cu_errname(r));
        return;
    }
    int dom = 0, bus = 0, slot = 0;
    if (f->DeviceGetAttribute(&dom, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, drv.dev) == CUDA_SUCCESS &&
        f->DeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, drv.dev) == CUDA_SUCCESS &&
        f->DeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, drv.dev) == CUDA_SUCCESS)
        drv.pci = ((int64_t)dom << 16 | (int64_t)bus << 8 | slot) + 1;
    size_t fr = 0;
    if ((r = f->MemGetInfo(&fr, &drv.total)) != CUDA_SUCCESS) {
        snprintf(drv.why, sizeof drv.why, "the CUDA device cannot be queried: %s", cu_errstr(r));
        return;
    }
    drv.t_context = rf_now() - t1;
    /* cudart (CUB) binds to the same device and thereby its primary
    ** context: on a thread of its own, beside the rest of the start (the
    ** device's open, the program module's load, the first copies); the
    ** first CUB call and the load's end wait for it (cudart_ready) */
    if (pthread_create(&crt.th, NULL, cudart_main, NULL) == 0)
        crt.running = 1;
    else
        cudart_main(NULL);
    drv.ok = 1;
}

/* cudart's start waited for: where it failed, the GPU is not usable. */
static void cudart_settle(void)
{
    pthread_mutex_lock(&crt.mu);
    cudart_join_locked();
    if (crt.err && drv.ok) {
        snprintf(drv.why, sizeof drv.why, "the CUDA runtime does not start on %s: %s", drv.name,
                 rf_cub_error_string(crt.err));
        drv.ok = 0;
    }
    pthread_mutex_unlock(&crt.mu);
}

/* The probe; with settle, cudart's start waited for too (a device's open
** does not wait: its first CUB call or its load's end does, cudart_ready). */
static int probe(char *why, size_t n, int settle)
{
    pthread_once(&drv.once, drv_open);
    if (settle) cudart_settle();
    if (why && n) {
        char which[48] = "";
        if (drv.count > 1) snprintf(which, sizeof which, "; GPU %d of %d", drv.ordinal, drv.count);
        if (drv.ok)
            snprintf(why, n, "%s (sm_%d%d, %d SMs, %zu GiB, driver %d.%d%s)", drv.name, drv.cc_major, drv.cc_minor,
                     drv.sms, drv.total >> 30, drv.driver / 1000, drv.driver % 1000 / 10, which);
        else
            snprintf(why, n, "%s", drv.why);
    }
    return drv.ok;
}

int rf_gpu_cuda_probe(char *why, size_t n) { return probe(why, n, 1); }

int rf_gpu_cuda_start(void) { return probe(NULL, 0, 0); }

int rf_gpu_cuda_started(void) { return drv.probed && drv.ok; }

int rf_gpu_cuda_start_parts(double *init, double *context, double *cudart, double *cudart_wait)
{
    *init = *context = *cudart = *cudart_wait = 0;
    if (!drv.probed || !drv.ok) return 0;
    pthread_mutex_lock(&crt.mu);
    /* (claimed once, and only once cudart's thread is done: its time is known) */
    int mine = !drv.parts_claimed && !crt.running;
    if (mine) {
        drv.parts_claimed = 1;
        *init = drv.t_init;
        *context = drv.t_context;
        *cudart = crt.secs;
        *cudart_wait = crt.waited;
    }
    pthread_mutex_unlock(&crt.mu);
    return mine;
}

void rf_gpu_cuda_bind_thread(void)
{
    if (drv.probed && drv.ok) drv.f.CtxSetCurrent(drv.ctx);
}

int rf_gpu_cuda_maybe(char *why, size_t n)
{
    /* (started: cudart's start not waited for here; the run's load waits) */
    if (drv.probed) return probe(why, n, 0);
    /* the library loads in milliseconds; cuInit and the context take
    ** hundreds (the probe, then on a thread beside the reading) */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        if (why && n) snprintf(why, n, "no NVIDIA driver (libcuda.so.1 cannot be loaded)");
        return 0;
    }
    /* kept loaded: the start's own dlopen then costs nothing */
    if (why && n) snprintf(why, n, "an NVIDIA driver (the GPU not started yet)");
    return 1;
}

int rf_gpu_cuda_absent(char *why, size_t n)
{
    if (drv.probed) return !probe(why, n, 0);
    return !rf_gpu_driver_installed(why, n);
}

int rf_gpu_cuda_count(char *why, size_t n)
{
    if (drv.probed) {
        if (!drv.ok && why && n) snprintf(why, n, "%s", drv.why);
        return drv.ok ? drv.count : 0;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        if (why && n) snprintf(why, n, "no NVIDIA driver (libcuda.so.1 cannot be loaded)");
        return 0;
    }
    CUresult (*init)(unsigned) = NULL;
    CUresult (*count)(int *) = NULL;
    *(void **)&init = sym(h, "cuInit", NULL);
    *(void **)&count = sym(h, "cuDeviceGetCount", NULL);
    int c = 0;
    CUresult r = CUDA_SUCCESS;
    if (!init || !count) {
        if (why && n) snprintf(why, n, "the NVIDIA driver lacks cuInit or cuDeviceGetCount (too old?)");
    } else if ((r = init(0)) != CUDA_SUCCESS) {
        if (why && n) snprintf(why, n, "the NVIDIA driver does not start (CUresult %d)", (int)r);
    } else if ((r = count(&c)) != CUDA_SUCCESS || c <= 0) {
        if (why && n) snprintf(why, n, "no CUDA device");
        c = 0;
    }
    return c; /* the library stays loaded: a start later in this process reuses it */
}

int64_t rf_gpu_cuda_pci(void)
{
    pthread_once(&drv.once, drv_open);
    return drv.ok ? drv.pci : 0;
}

/* ---- memory and transfers ---------------------------------------------------- */

static void arena_join(cu_state *c);

static rf_status cu_mem_alloc(gdev *g, uint64_t bytes, gptr *out)
{
    cu_state *c = g->impl;
    if (c->early_bytes) {
        /* the first arena, allocated ahead: taken where the pool asks for
        ** that size, else given back (another gpu_pool_mb, a cap) */
        double t0 = rf_now();
        arena_join(c);
        g->start_arena_wait = rf_now() - t0;
        g->start_arena = c->early ? c->early_secs : 0;
        uint64_t eb = c->early_bytes;
        c->early_bytes = 0;
        if (c->early && bytes == eb) {
            *out = (gptr)c->early;
            c->early = 0;
            return RF_OK;
        }
        if (c->early) drv.f.MemFree(c->early);
        c->early = 0;
    }
    CUdeviceptr p = 0;
    /* no message here: the pool reports the shortage with its own numbers */
    if (drv.f.MemAlloc(&p, (size_t)bytes) != CUDA_SUCCESS) return RF_ENOMEM;
    *out = (gptr)p;
    return RF_OK;
}

static void cu_mem_free(gdev *g, gptr p)
{
    (void)g;
    if (p) drv.f.MemFree((CUdeviceptr)p);
}

typedef struct stage_fill {
    char *dst;
    const char *src;     /* a plain copy's source, or NULL: fill makes it */
    rf_gpu_fill_fn fill; /* (h2d_fill) */
    void *ctx;
    uint64_t at; /* where the chunk starts in the source */
} stage_fill;

static void stage_fill_part(void *ctx, int64_t begin, int64_t end, int worker)
{
    const stage_fill *f = ctx;
    (void)worker;
    if (f->src)
        memcpy(f->dst + begin, f->src + begin, (size_t)(end - begin));
    else
        f->fill(f->ctx, f->at + (uint64_t)begin, f->at + (uint64_t)end, f->dst + begin);
}

/* The pinned buffers' thread (rf_gpu_cuda_open): two staging buffers and
** the small one, beside the program module's load, which needs the context
** and nothing else: the memory hostmem touched during the driver's start
** (c->hm), registered (about 1 ms), else cuMemAllocHost's (12-19 ms for 32
** MiB). c->hm is the opener's, not this thread's: the first copy may fill
** its first chunk there meanwhile (pin_settle). */
static void *pin_main(void *arg)
{
    cu_state *c = arg;
    double t0 = rf_now();
    CUresult r = drv.f.CtxSetCurrent(drv.ctx);
    char *hm = c->hm;
    if (r == CUDA_SUCCESS && hm && drv.f.MemHostRegister(hm, STAGING_BYTES, 0) == CUDA_SUCCESS) {
        c->registered = hm;
        c->stage[0] = hm;
        c->stage[1] = hm + STAGE_BYTES;
        c->small = hm + 2 * STAGE_BYTES;
    } else {
        /* (not registered: the driver's own pinned memory, as ever) */
        for (int i = 0; i < 2 && r == CUDA_SUCCESS; i++) r = drv.f.MemAllocHost(&c->stage[i], STAGE_BYTES);
        if (r == CUDA_SUCCESS) r = drv.f.MemAllocHost(&c->small, SMALL_BYTES);
    }
    c->pin_r = r;
    c->pin_secs = rf_now() - t0;
    return NULL;
}

/* The pool's first arena (about 1 ms on an H100 for a quarter of its
** memory; 10-12 ms on some hosts): on a thread of its own beside the
** registration and the program's load, not in the first copy, and not
** after the registration (the first copy's destination is allocated
** before the copy: it waited for both). Where the driver refuses it the
** pool allocates as ever. */
static void *arena_main(void *arg)
{
    cu_state *c = arg;
    double t0 = rf_now();
    if (drv.f.CtxSetCurrent(drv.ctx) != CUDA_SUCCESS ||
        drv.f.MemAlloc(&c->early, (size_t)c->early_bytes) != CUDA_SUCCESS)
        c->early = 0;
    c->early_secs = rf_now() - t0;
    return NULL;
}

static void arena_join(cu_state *c)
{
    if (!c->arena_running) return;
    pthread_join(c->arena_th, NULL);
    c->arena_running = 0;
}

/* Waits for the pinned buffers' thread (once): its times and the wait into
** g (--profile). */
static void pin_join(gdev *g)
{
    cu_state *c = g->impl;
    if (!c->pin_running) return;
    double t0 = rf_now();
    pthread_join(c->pin_th, NULL);
    c->pin_running = 0;
    g->start_pinned = c->pin_secs;
    g->start_pinned_wait = rf_now() - t0;
}

/* Where the first copy may fill its first chunk before the pinned buffers
** are ready: the memory being registered as stage[0], while the
** registration runs and stage[0] is next (NULL: fill after the wait). */
static char *prefill_target(cu_state *c)
{
    return c->pin_running && c->hm && c->stage_next == 0 && !c->stage_used[0] ? c->hm : NULL;
}

/* After the pinned buffers' thread: c->hm is stage[0] where it was
** registered; else the filled bytes move to the buffer the driver gave,
** and the memory goes. */
static void pin_settle(cu_state *c, uint64_t filled)
{
    if (!c->hm) return;
    if (c->registered != c->hm) {
        if (filled && c->pin_r == CUDA_SUCCESS) memcpy(c->stage[0], c->hm, (size_t)filled);
        free(c->hm);
    }
    c->hm = NULL;
}

/* The pinned buffers' thread done (filled: bytes the caller put at
** prefill_target meanwhile): an error if they could not be allocated. */
static rf_status pinned_ready_filled(gdev *g, uint64_t filled)
{
    cu_state *c = g->impl;
    pin_join(g);
    pin_settle(c, filled);
    if (c->pin_r != CUDA_SUCCESS) CU(g, c->pin_r, "allocating pinned staging buffers");
    return RF_OK;
}

static rf_status pinned_ready(gdev *g) { return pinned_ready_filled(g, 0); }

/* A stretch of a staged copy (filling a buffer, waiting for one) into
** --trace's timeline, inside the copy's own event, and its time into *sum
** (--profile). */
static void copy_part(gdev *g, const char *what, double t0, uint64_t n, double *sum)
{
    double t1 = rf_now();
    *sum += t1 - t0;
    if (g->acct.fn) g->acct.fn(g->acct.fn_ctx, "gpu", what, t0, t1, (int64_t)n);
}

/* Waits until staging buffer i's last copy has left it. */
static rf_status stage_free(gdev *g, cu_state *c, int i)
{
    if (!c->stage_used[i]) return RF_OK;
    double t0 = rf_now();
    CU(g, drv.f.EventSynchronize(c->stage_ev[i]), "waiting for a host-to-GPU copy");
    copy_part(g, "wait for a staging buffer", t0, 0, &g->copy_wait_s);
    return RF_OK;
}

/* Host to device through the two pinned staging buffers: while the GPU
** copies one, the host fills the other (across calls too: a call starts
** with the buffer the last one did not fill last, so a run of small copies
** overlaps as a big one does). One thread's memcpy (about 5-10 GB/s, and
** slower where the pages of a mapped column file are touched for the first
** time) is below what PCIe moves, so a big chunk is filled by the run's
** threads together, a piece each. src NULL: fill makes the bytes
** (h2d_fill), straight into the staging buffer. The process's first copy
** fills its first chunk while the pinned buffers are being registered. */
static rf_status staged_h2d(gdev *g, gptr dst, const void *src, rf_gpu_fill_fn fill, void *ctx, uint64_t n)
{
    cu_state *c = g->impl;
    uint64_t done = 0;
    char *pre = n ? prefill_target(c) : NULL;
    size_t prelen = n > STAGE_BYTES ? STAGE_BYTES : (size_t)n;
    int filled = 0;
    if (!pre) {
        rf_status st = pinned_ready(g);
        if (st) return st;
    }
    while (done < n || pre) {
        size_t len = n - done > STAGE_BYTES ? STAGE_BYTES : (size_t)(n - done);
        int i = c->stage_next;
        char *to = pre ? pre : NULL;
        if (!to) {
            /* the buffer's previous copy must have left it before it is refilled */
            rf_status st = stage_free(g, c, i);
            if (st) return st;
            to = c->stage[i];
        }
        if (!filled) {
            double t0 = rf_now();
            stage_fill f = {to, src ? (const char *)src + done : NULL, fill, ctx, done};
            if (len >= STAGE_PAR_MIN && g->cpu && rf_cpu_pool_threads(g->cpu) > 1)
                rf_cpu_parallel_for(g->cpu, (int64_t)len, STAGE_GRAIN, stage_fill_part, &f);
            else
                stage_fill_part(&f, 0, (int64_t)len, 0);
            copy_part(g, "fill a staging buffer", t0, len, &g->copy_fill_s);
        }
        if (pre) { /* then wait for the buffers: the chunk is stage[0]'s */
            rf_status st = pinned_ready_filled(g, prelen);
            if (st) return st;
            pre = NULL;
            filled = 1;
            continue;
        }
        filled = 0;
        CU(g, drv.f.MemcpyHtoDAsync((CUdeviceptr)(dst + done), c->stage[i], len, c->stream), "a host-to-GPU copy");
        CU(g, drv.f.EventRecord(c->stage_ev[i], c->stream), "recording an event");
        c->stage_used[i] = 1;
        done += len;
        c->stage_next = i ^ 1;
    }
    return RF_OK;
}

static rf_status cu_h2d(gdev *g, gptr dst, const void *src, uint64_t n)
{
    return staged_h2d(g, dst, src ? src : "", NULL, NULL, n);
}

static rf_status cu_h2d_fill(gdev *g, gptr dst, uint64_t n, rf_gpu_fill_fn fill, void *ctx)
{
    return staged_h2d(g, dst, NULL, fill, ctx, n);
}

/* A database's narrow column as stored (rt_gpu_wire.c): round by round,
** the run's threads pack its pieces into the staging buffer the GPU is not
** copying from, the round crosses into scratch, and the widening kernel
** (CUB's library, skeletons/cub/rf_wire.cu) writes it into dst. All on the
** one stream: the next round's copy into scratch waits for this round's
** widening (a few microseconds a round; a second stream with two halves of
** scratch, the widening beside the next copy, gained nothing measurable on
** an H200: q06's copy 14.65 against 14.9 ms, q01's 35.0 against 33.6),
** whatever follows on the stream sees the column whole, and the host packs
** the next round meanwhile. The process's first copy packs its first round
** while the pinned buffers are being registered. */
static rf_status cu_h2d_stored(gdev *g, gptr dst, const rf_rt_stored *s, gptr scratch)
{
    cu_state *c = g->impl;
    int elem = rf_db_type_width(s->type);
    int64_t b = 0, r = 0;
    char *pre = s->nblocks ? prefill_target(c) : NULL;
    uint64_t len = 0;
    int32_t np = 0;
    rf_status st = RF_OK;
    if (pre) {
        double t0 = rf_now();
        st = rf_gpu_wire_pack(g->cpu, s, g->wire_piece, g->wire_round, &b, &r, pre, &len, &np);
        copy_part(g, "pack a round", t0, len, &g->copy_fill_s);
        if (st) return st;
    }
    st = pinned_ready_filled(g, pre ? len : 0);
    if (!st) st = cudart_ready(g);
    if (st) return st;
    int packed = pre != NULL; /* (round 0 is in stage[0]) */
    while (packed || b < s->nblocks) {
        int i = c->stage_next;
        if (!packed) {
            st = stage_free(g, c, i);
            if (st) return st;
            double t0 = rf_now();
            st = rf_gpu_wire_pack(g->cpu, s, g->wire_piece, g->wire_round, &b, &r, c->stage[i], &len, &np);
            copy_part(g, "pack a round", t0, len, &g->copy_fill_s);
            if (st) return st;
        }
        packed = 0;
        double ti = rf_now(), issued = 0;
        CU(g, drv.f.MemcpyHtoDAsync((CUdeviceptr)scratch, c->stage[i], (size_t)len, c->stream), "a host-to-GPU copy");
        CU(g, drv.f.EventRecord(c->stage_ev[i], c->stream), "recording an event");
        c->stage_used[i] = 1;
        int e = rf_cub_wire_widen((const void *)(uintptr_t)scratch, np, elem, (void *)(uintptr_t)dst, c->stream);
        if (e) return cub_fail(g, e, "widening a column copied as stored");
        copy_part(g, "issue a round's copy and widening", ti, len, &issued);
        g->wire_bytes += len;
        c->stage_next = i ^ 1;
    }
    return RF_OK;
}

/* A staging buffer's len bytes out to dst once its copy from the device is
** done: by the run's threads together for a big chunk (one thread's memcpy
** into fresh pages, about 1-2 GB/s, was what moving values to host memory
** under a cap ran at). */
static rf_status stage_drain(gdev *g, cu_state *c, int i, char *dst, size_t len)
{
    CU(g, drv.f.EventSynchronize(c->stage_ev[i]), "waiting for a GPU-to-host copy");
    if (len >= STAGE_PAR_MIN && g->cpu && rf_cpu_pool_threads(g->cpu) > 1) {
        stage_fill f = {.dst = dst, .src = c->stage[i]};
        rf_cpu_parallel_for(g->cpu, (int64_t)len, STAGE_GRAIN, stage_fill_part, &f);
    } else {
        memcpy(dst, c->stage[i], len);
    }
    return RF_OK;
}

/* Device to host through the two pinned staging buffers: while the host
** empties one, the GPU fills the other. */
static rf_status cu_d2h(gdev *g, void *dst, gptr src, uint64_t n)
{
    cu_state *c = g->impl;
    rf_status pst = pinned_ready(g);
    if (pst) return pst;
    if (n <= SMALL_BYTES) {
        if (!n) return RF_OK;
        CU(g, drv.f.MemcpyDtoHAsync(c->small, (CUdeviceptr)src, (size_t)n, c->stream), "a GPU-to-host copy");
        CU(g, drv.f.StreamSynchronize(c->stream), "waiting for the GPU");
        memcpy(dst, c->small, (size_t)n);
        return RF_OK;
    }
    uint64_t done = 0, prev_at = 0;
    size_t prev_len = 0;
    int i = 0;
    while (done < n) {
        size_t len = n - done > STAGE_BYTES ? STAGE_BYTES : (size_t)(n - done);
        /* (an earlier host-to-device copy from this buffer is ahead in the stream) */
        CU(g, drv.f.MemcpyDtoHAsync(c->stage[i], (CUdeviceptr)(src + done), len, c->stream), "a GPU-to-host copy");
        CU(g, drv.f.EventRecord(c->stage_ev[i], c->stream), "recording an event");
        c->stage_used[i] = 1;
        if (prev_len) {
            rf_status st = stage_drain(g, c, i ^ 1, (char *)dst + prev_at, prev_len);
            if (st) return st;
        }
        prev_at = done;
        prev_len = len;
        done += len;
        i ^= 1;
    }
    return stage_drain(g, c, i ^ 1, (char *)dst + prev_at, prev_len);
}

static rf_status cu_d2d(gdev *g, gptr dst, gptr src, uint64_t n)
{
    cu_state *c = g->impl;
    if (!n) return RF_OK;
    CU(g, drv.f.MemcpyDtoDAsync((CUdeviceptr)dst, (CUdeviceptr)src, (size_t)n, c->stream), "a GPU-to-GPU copy");
    return RF_OK;
}

static rf_status cu_memset8(gdev *g, gptr dst, uint8_t v, uint64_t n)
{
    cu_state *c = g->impl;
    if (!n) return RF_OK;
    CU(g, drv.f.MemsetD8Async((CUdeviceptr)dst, v, (size_t)n, c->stream), "clearing GPU memory");
    return RF_OK;
}

static rf_status cu_sync(gdev *g)
{
    cu_state *c = g->impl;
    /* (the load's end waits here: the pinned buffers' and cudart's threads are done by then) */
    rf_status pst = pinned_ready(g);
    if (!pst) pst = cudart_ready(g);
    if (pst) return pst;
    CU(g, drv.f.StreamSynchronize(c->stream), "waiting for the GPU");
    return RF_OK;
}

/* ---- the module ------------------------------------------------------------------ */

/* The JIT cache's file for ptx (NULL, NULL: no cache): owned. */
static void cubin_path(const rf_gpu_ptx *ptx, const char *cache_dir, char **dir, char **path)
{
    uint64_t h[2];
    if (ptx->ptx_hashed)
        memcpy(h, ptx->ptx_hash, sizeof h);
    else
        rf_gpu_hash128(ptx->ptx, ptx->len, h);
    *dir = rf_gpu_cache_dir(cache_dir, "jit");
    *path = *dir ? rf_sprintf("%s/%016" PRIx64 "%016" PRIx64 "-sm%d%d-drv%d.cubin", *dir, h[0], h[1], drv.cc_major,
                              drv.cc_minor, drv.driver)
                 : NULL;
}

/* PTX to a cubin by the driver's linker: *ls holds *cubin until LinkDestroy. */
static CUresult link_cubin(const rf_gpu_ptx *ptx, CUlinkState *ls, void **cubin, size_t *ncubin, char *log,
                           size_t nlog)
{
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {log, (void *)(uintptr_t)nlog};
    *ls = NULL;
    CUresult r = drv.f.LinkCreate(2, opts, vals, ls);
    if (r == CUDA_SUCCESS)
        r = drv.f.LinkAddData(*ls, CU_JIT_INPUT_PTX, ptx->ptx, (size_t)ptx->len + 1, "redfox.ptx", 0, NULL, NULL);
    if (r == CUDA_SUCCESS) r = drv.f.LinkComplete(*ls, cubin, ncubin);
    return r;
}

static int have_linker(void) { return drv.f.LinkCreate && drv.f.LinkAddData && drv.f.LinkComplete && drv.f.LinkDestroy; }

int rf_gpu_cuda_jit_cache(const rf_gpu_ptx *ptx, const char *cache_dir)
{
    if (!drv.probed || !drv.ok || !have_linker()) return 0;
    char *dir, *path;
    cubin_path(ptx, cache_dir, &dir, &path);
    int ok = 0;
    /* an entry is kept only when the run would take it (whole, checked, an
    ** ELF file): any other, cut short or damaged, is linked again and
    ** written anew aside, then renamed, so that the first run does not wait */
    uint64_t have = 0;
    char *kept = path ? rf_gpu_cubin_read_checked(path, &have) : NULL;
    if (kept) {
        ok = 1;
    } else if (path && drv.f.CtxSetCurrent(drv.ctx) == CUDA_SUCCESS) {
        char log[1024];
        log[0] = 0;
        CUlinkState ls = NULL;
        void *cubin = NULL;
        size_t ncubin = 0;
        if (link_cubin(ptx, &ls, &cubin, &ncubin, log, sizeof log) == CUDA_SUCCESS) {
            rf_gpu_cache_write_checked(dir, path, cubin, (uint64_t)ncubin, NULL); /* (the run says it) */
            ok = 1;
        }
        if (ls) drv.f.LinkDestroy(ls);
    }
    free(kept);
    free(dir);
    free(path);
    return ok;
}

static rf_status cu_load_module(gdev *g, const rf_gpu_ptx *ptx, const char *src, uint64_t srclen)
{
    (void)src;
    (void)srclen;
    cu_state *c = g->impl;
    char *dir, *path;
    cubin_path(ptx, g->cache_dir, &dir, &path);
    if (path) {
        uint64_t n = 0; /* checked: a damaged cubin is never handed to the driver */
        char *data = rf_gpu_cubin_read_checked(path, &n);
        if (data && drv.f.ModuleLoadData(&c->mod, data) == CUDA_SUCCESS) {
            free(data);
            free(dir);
            free(path);
            return RF_OK;
        }
        free(data); /* absent or stale: JIT again */
        c->mod = NULL;
    }
    char log[8192];
    log[0] = 0;
    if (!have_linker()) {
        free(dir);
        free(path);
        CU(g, drv.f.ModuleLoadData(&c->mod, ptx->ptx), "loading the program's PTX");
        return RF_OK;
    }
    CUlinkState ls = NULL;
    void *cubin = NULL;
    size_t ncubin = 0;
    CUresult r = link_cubin(ptx, &ls, &cubin, &ncubin, log, sizeof log);
    if (r == CUDA_SUCCESS) r = drv.f.ModuleLoadData(&c->mod, cubin);
    if (r != CUDA_SUCCESS) {
        rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU: compiling the program's PTX for %s failed: %s (%s)%s%.2000s",
                 drv.name, cu_errstr(r), cu_errname(r), log[0] ? "\n" : "", log);
        if (ls) drv.f.LinkDestroy(ls);
        free(dir);
        free(path);
        return RF_EINTERNAL;
    }
    if (path) rf_gpu_cache_write_checked(dir, path, cubin, (uint64_t)ncubin, g->d);
    drv.f.LinkDestroy(ls);
    free(dir);
    free(path);
    return RF_OK;
}

/* Every kernel is a grid-stride loop (RF_FOR): one wave of resident blocks
** covers any size, and more blocks than fit at once only add a tail wave. */
static rf_status fn_add(cu_state *c, const char *name, CUfunction f, fnent **out)
{
    if (c->nfns == c->capfns) {
        int nc = c->capfns ? 2 * c->capfns : 64;
        fnent **n = rf_realloc(c->fns, (size_t)nc * sizeof *n);
        if (!n) return RF_ENOMEM;
        c->fns = n;
        c->capfns = nc;
    }
    fnent *e = rf_calloc(1, sizeof *e);
    if (!e || !(e->name = rf_strdup(name))) {
        free(e);
        return RF_ENOMEM;
    }
    e->fn = f;
    int per_sm = 0;
    if (drv.f.OccupancyMaxActiveBlocksPerMultiprocessor &&
        drv.f.OccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, RF_GPU_TILE, 0) == CUDA_SUCCESS && per_sm > 0)
        e->max_grid = (unsigned)per_sm * (unsigned)drv.sms;
    c->fns[c->nfns++] = e;
    if (out) *out = e;
    return RF_OK;
}

/* Every kernel of the module, looked up and put on the GPU now: with the
** driver's lazy loading (the default since CUDA 12.2) each kernel would
** otherwise be loaded at its first launch, inside the timed run, on every
** run (each run loads the module anew). Needs the 12.4 driver API; without
** it the kernels load at their first launch, as before. */
static rf_status cu_load_functions(gdev *g)
{
    cu_state *c = g->impl;
    unsigned n = 0;
    if (!drv.f.ModuleGetFunctionCount || !drv.f.ModuleEnumerateFunctions || !drv.f.FuncGetName ||
        drv.f.ModuleGetFunctionCount(&n, c->mod) != CUDA_SUCCESS || n == 0)
        return RF_OK;
    CUfunction *fs = rf_calloc(n, sizeof *fs);
    if (!fs) return RF_ENOMEM;
    rf_status st = RF_OK;
    if (drv.f.ModuleEnumerateFunctions(fs, n, c->mod) == CUDA_SUCCESS)
        for (unsigned i = 0; i < n && !st; i++) {
            const char *name = NULL;
            if (drv.f.FuncGetName(&name, fs[i]) != CUDA_SUCCESS || !name) continue;
            if (drv.f.FuncLoad) {
                CUresult r = drv.f.FuncLoad(fs[i]);
                if (r != CUDA_SUCCESS) {
                    st = cu_fail(g, r, "loading a kernel onto the GPU");
                    break;
                }
            }
            st = fn_add(c, name, fs[i], NULL);
        }
    free(fs);
    return st;
}

/* ---- modules kept between runs ------------------------------------------------------- */

/* The modules of closed devices, kept loaded with their kernel tables for
** the next run of the same PTX in this process: reading the cubin, loading
** it and putting each kernel on the GPU cost 2.5-6 ms a run (H200), which
** `redfox exec --each` paid twice a transaction (the maintenance and the
** outputs) and `--repeat` once a run. A module holds no state between runs
** (the generated code's only module-scope data are constant tables), so a
** kept one is as good as a new load. An open device takes its module out
** (no two devices share one); the least recently kept is unloaded when a
** ninth comes. Keyed by the PTX's hash and the context it was loaded in:
** the same PTX on the same device and driver links to the same cubin, and
** a module is usable only in its own context (the process has one, the
** device's primary one; the context in the key keeps that true should it
** ever be released and retained again, or a second device be opened). */
#define KEPT_MODULES 8
static struct {
    pthread_mutex_t mu;
    int n;
    struct kept_module {
        uint64_t key[2];
        CUcontext ctx;
        CUmodule mod;
        fnent **fns;
        int nfns, capfns;
    } m[KEPT_MODULES]; /* oldest first */
} kept_mods = {PTHREAD_MUTEX_INITIALIZER, 0, {{{0, 0}, NULL, NULL, NULL, 0, 0}}};

static void fns_free(fnent **fns, int n)
{
    for (int i = 0; i < n; i++) {
        free(fns[i]->name);
        free(fns[i]);
    }
    free(fns);
}

/* The kept module of key into c: 1 when there was one. */
static int kept_take(cu_state *c, const uint64_t key[2])
{
    pthread_mutex_lock(&kept_mods.mu);
    int found = 0;
    for (int i = kept_mods.n - 1; i >= 0 && !found; i--) {
        if (kept_mods.m[i].key[0] != key[0] || kept_mods.m[i].key[1] != key[1] || kept_mods.m[i].ctx != drv.ctx)
            continue;
        c->mod = kept_mods.m[i].mod;
        c->fns = kept_mods.m[i].fns;
        c->nfns = kept_mods.m[i].nfns;
        c->capfns = kept_mods.m[i].capfns;
        memmove(&kept_mods.m[i], &kept_mods.m[i + 1], (size_t)(kept_mods.n - i - 1) * sizeof kept_mods.m[0]);
        kept_mods.n--;
        found = 1;
    }
    pthread_mutex_unlock(&kept_mods.mu);
    return found;
}

/* c's module kept for a later run (c's pointers are then cleared); the
** oldest kept one unloaded to make room. */
static void kept_put(cu_state *c)
{
    struct kept_module old = {{0, 0}, NULL, NULL, NULL, 0, 0};
    pthread_mutex_lock(&kept_mods.mu);
    if (kept_mods.n == KEPT_MODULES) {
        old = kept_mods.m[0];
        memmove(&kept_mods.m[0], &kept_mods.m[1], (size_t)(KEPT_MODULES - 1) * sizeof kept_mods.m[0]);
        kept_mods.n--;
    }
    struct kept_module *k = &kept_mods.m[kept_mods.n++];
    memcpy(k->key, c->mod_key, sizeof k->key);
    k->ctx = drv.ctx;
    k->mod = c->mod;
    k->fns = c->fns;
    k->nfns = c->nfns;
    k->capfns = c->capfns;
    pthread_mutex_unlock(&kept_mods.mu);
    c->mod = NULL;
    c->fns = NULL;
    c->nfns = c->capfns = 0;
    if (old.mod) drv.f.ModuleUnload(old.mod);
    if (old.fns) fns_free(old.fns, old.nfns);
}

static rf_status cu_load(gdev *g, const rf_gpu_ptx *ptx, const char *src, uint64_t srclen)
{
    cu_state *c = g->impl;
    if (ptx->ptx_hashed)
        memcpy(c->mod_key, ptx->ptx_hash, sizeof c->mod_key);
    else
        rf_gpu_hash128(ptx->ptx, ptx->len, c->mod_key);
    if ((g->module_kept = kept_take(c, c->mod_key))) return RF_OK;
    rf_status st = cu_load_module(g, ptx, src, srclen);
    return st ? st : cu_load_functions(g);
}

static rf_status cu_func(gdev *g, const char *name, void **fn)
{
    cu_state *c = g->impl;
    for (int i = 0; i < c->nfns; i++)
        if (!strcmp(c->fns[i]->name, name)) {
            *fn = c->fns[i];
            return RF_OK;
        }
    CUfunction f;
    CUresult r = drv.f.ModuleGetFunction(&f, c->mod, name);
    if (r != CUDA_SUCCESS) {
        rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU: the program has no kernel %s: %s", name, cu_errstr(r));
        return RF_EINTERNAL;
    }
    fnent *e = NULL;
    rf_status st = fn_add(c, name, f, &e);
    if (!st) *fn = e;
    return st;
}

static rf_status cu_launch(gdev *g, void *fn, const char *name, uint64_t grid, const rf_gpu_args *a)
{
    cu_state *c = g->impl;
    const fnent *e = fn;
    if (e->max_grid && grid > e->max_grid) grid = e->max_grid;
    void *params[] = {(void *)a};
    CUresult r = drv.f.LaunchKernel(e->fn, (unsigned)grid, 1, 1, RF_GPU_TILE, 1, 1, 0, c->stream, params, NULL);
    if (r != CUDA_SUCCESS) {
        rf_error(g->d, rf_mkloc(NULL, 0, 0), "GPU: launching %s failed: %s (%s)", name, cu_errstr(r), cu_errname(r));
        return RF_EINTERNAL;
    }
    return RF_OK;
}

/* ---- CUB ---------------------------------------------------------------------------- */

static rf_status cu_sort_pairs(gdev *g, gptr temp, uint64_t *tbytes, gptr kin, gptr kout, gptr vin, gptr vout,
                               int64_t n, int b0, int b1)
{
    cu_state *c = g->impl;
    rf_status rst = cudart_ready(g);
    if (rst) return rst;
    size_t sz = (size_t)*tbytes;
    int e = rf_cub_sort_pairs_u64_i64((void *)temp, &sz, (const uint64_t *)kin, (uint64_t *)kout, (const int64_t *)vin,
                                      (int64_t *)vout, n, b0, b1, c->stream);
    *tbytes = sz;
    return e ? cub_fail(g, e, "radix sort") : RF_OK;
}

static rf_status cu_scan_i64(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n)
{
    cu_state *c = g->impl;
    rf_status rst = cudart_ready(g);
    if (rst) return rst;
    size_t sz = (size_t)*tbytes;
    int e = rf_cub_exclusive_sum_i64((void *)temp, &sz, (const int64_t *)in, (int64_t *)out, n, c->stream);
    *tbytes = sz;
    return e ? cub_fail(g, e, "scan") : RF_OK;
}

static rf_status cu_scan_u8(gdev *g, gptr temp, uint64_t *tbytes, gptr in, gptr out, int64_t n)
{
    cu_state *c = g->impl;
    rf_status rst = cudart_ready(g);
    if (rst) return rst;
    size_t sz = (size_t)*tbytes;
    int e = rf_cub_exclusive_sum_u8((void *)temp, &sz, (const uint8_t *)in, (int64_t *)out, n, c->stream);
    *tbytes = sz;
    return e ? cub_fail(g, e, "scan") : RF_OK;
}

static rf_status cu_select(gdev *g, gptr temp, uint64_t *tbytes, gptr flags, gptr out, gptr nsel, int64_t n)
{
    cu_state *c = g->impl;
    rf_status rst = cudart_ready(g);
    if (rst) return rst;
    size_t sz = (size_t)*tbytes;
    int e = rf_cub_select_flagged_i64((void *)temp, &sz, NULL, (const uint8_t *)flags, (int64_t *)out, (int64_t *)nsel,
                                      n, c->stream);
    *tbytes = sz;
    return e ? cub_fail(g, e, "stream compaction") : RF_OK;
}

/* ---- timing ------------------------------------------------------------------------------ */

static rf_status cu_mark(gdev *g, int which)
{
    cu_state *c = g->impl;
    CU(g, drv.f.EventRecord(c->mark[which & 1], c->stream), "recording an event");
    return RF_OK;
}

static rf_status cu_elapsed(gdev *g, double *seconds)
{
    cu_state *c = g->impl;
    float ms = 0;
    CU(g, drv.f.EventSynchronize(c->mark[1]), "waiting for the GPU");
    CU(g, drv.f.EventElapsedTime(&ms, c->mark[0], c->mark[1]), "reading an event");
    *seconds = ms * 1e-3;
    return RF_OK;
}

/* ---- pinned bandwidth (--profile) ------------------------------------------------------------ */

/* Copies of the staging buffer timed: 8 x 16 MiB, about 2.5 ms at 53 GB/s,
** after one untimed copy (the first pays the driver's own setup). */
#define BW_COPIES 8

static struct {
    pthread_mutex_t mu;
    int done;
    double gbs;
} pinned_bw = {PTHREAD_MUTEX_INITIALIZER, 0, 0};

static double measure_pinned(cu_state *c)
{
    CUdeviceptr p = 0;
    float ms = 0;
    if (drv.f.MemAlloc(&p, STAGE_BYTES) != CUDA_SUCCESS) return 0;
    CUresult r = drv.f.StreamSynchronize(c->stream);
    for (int i = 0; i <= BW_COPIES && r == CUDA_SUCCESS; i++) {
        if (i == 1) r = drv.f.EventRecord(c->mark[0], c->stream);
        if (r == CUDA_SUCCESS) r = drv.f.MemcpyHtoDAsync(p, c->stage[0], STAGE_BYTES, c->stream);
    }
    if (r == CUDA_SUCCESS) r = drv.f.EventRecord(c->mark[1], c->stream);
    if (r == CUDA_SUCCESS) r = drv.f.EventSynchronize(c->mark[1]);
    if (r == CUDA_SUCCESS) r = drv.f.EventElapsedTime(&ms, c->mark[0], c->mark[1]);
    drv.f.MemFree(p);
    return r == CUDA_SUCCESS && ms > 0 ? (double)STAGE_BYTES * BW_COPIES / (ms * 1e-3) * 1e-9 : 0;
}

double rf_gpu_cuda_pinned_gbs(gdev *g)
{
    cu_state *c = g->impl;
    if (!c || pinned_ready(g)) return 0;
    pthread_mutex_lock(&pinned_bw.mu);
    if (!pinned_bw.done && c && c->stream && c->stage[0] && c->mark[0] && c->mark[1]) {
        pinned_bw.gbs = measure_pinned(c);
        pinned_bw.done = 1;
    }
    double gbs = pinned_bw.gbs;
    pthread_mutex_unlock(&pinned_bw.mu);
    return gbs;
}

/* ---- open and close -------------------------------------------------------------------------- */

/* The stream, pinned staging buffers and events of a closed device, kept
** for the next open in this process: pinning 32 MiB and making the stream
** cost about 15 ms a run, which `tpch run`'s 22 queries paid 22 times. One
** set is kept (a second closed device frees its own). */
static struct {
    pthread_mutex_t mu;
    int have;
    CUstream stream;
    void *stage[2], *small, *registered;
    CUevent stage_ev[2], mark[2];
} spare = {PTHREAD_MUTEX_INITIALIZER, 0, NULL, {NULL, NULL}, NULL, NULL, {NULL, NULL}, {NULL, NULL}};

/* Takes the spare set into c: 1 when there was one. */
static int spare_take(cu_state *c)
{
    pthread_mutex_lock(&spare.mu);
    int had = spare.have;
    if (had) {
        c->stream = spare.stream;
        for (int i = 0; i < 2; i++) {
            c->stage[i] = spare.stage[i];
            c->stage_ev[i] = spare.stage_ev[i];
            c->mark[i] = spare.mark[i];
        }
        c->small = spare.small;
        c->registered = spare.registered;
        spare.have = 0;
    }
    pthread_mutex_unlock(&spare.mu);
    return had;
}

/* Keeps c's set as the spare: 1 when it did (c's pointers are then cleared). */
static int spare_keep(cu_state *c)
{
    if (!c->stream || !c->small) return 0;
    for (int i = 0; i < 2; i++)
        if (!c->stage[i] || !c->stage_ev[i] || !c->mark[i]) return 0;
    pthread_mutex_lock(&spare.mu);
    int kept = !spare.have;
    if (kept) {
        spare.stream = c->stream;
        for (int i = 0; i < 2; i++) {
            spare.stage[i] = c->stage[i];
            spare.stage_ev[i] = c->stage_ev[i];
            spare.mark[i] = c->mark[i];
            c->stage[i] = NULL;
            c->stage_ev[i] = NULL;
            c->mark[i] = NULL;
        }
        spare.small = c->small;
        spare.registered = c->registered;
        c->small = NULL;
        c->registered = NULL;
        c->stream = NULL;
        spare.have = 1;
    }
    pthread_mutex_unlock(&spare.mu);
    return kept;
}

static void cu_close(gdev *g)
{
    cu_state *c = g->impl;
    if (!c) return;
    cudart_settle(); /* (a process may end after this: no thread of ours in the driver then) */
    if (c->pin_running) {
        pthread_join(c->pin_th, NULL);
        c->pin_running = 0;
    }
    pin_settle(c, 0);
    arena_join(c);
    if (c->early) drv.f.MemFree(c->early); /* (never taken: the pool had no arena) */
    c->early = 0;
    c->early_bytes = 0;
    /* wait for everything before the staging buffers and the module go;
    ** the module is kept for a later run only where the device had no
    ** error (after a kernel's fault the context itself is broken) */
    int healthy = !c->stream || drv.f.StreamSynchronize(c->stream) == CUDA_SUCCESS;
    if (c->mod && healthy) kept_put(c);
    if (c->mod) drv.f.ModuleUnload(c->mod);
    c->mod = NULL;
    spare_keep(c);
    for (int i = 0; i < 2; i++) {
        if (c->stage[i] && !c->registered) drv.f.MemFreeHost(c->stage[i]);
        if (c->stage_ev[i]) drv.f.EventDestroy(c->stage_ev[i]);
        if (c->mark[i]) drv.f.EventDestroy(c->mark[i]);
    }
    if (c->small && !c->registered) drv.f.MemFreeHost(c->small);
    if (c->registered) {
        drv.f.MemHostUnregister(c->registered);
        free(c->registered);
    }
    if (c->stream) drv.f.StreamDestroy(c->stream);
    fns_free(c->fns, c->nfns);
    free(c);
    g->impl = NULL;
}

static const gdev_ops cu_ops = {cu_load,     cu_func,     cu_launch,     cu_mem_alloc, cu_mem_free,
                                cu_h2d,      cu_h2d_fill, cu_d2h,      cu_d2d,        cu_memset8,   cu_sync,
                                cu_sort_pairs, cu_scan_i64, cu_scan_u8,  cu_select,    cu_mark,
                                cu_elapsed,  cu_close,    cu_h2d_stored};

rf_status rf_gpu_cuda_open(gdev *g, rf_diags *d, char *why, size_t nwhy)
{
    memset(g, 0, sizeof *g);
    g->d = d;
    if (!probe(why, nwhy, 0)) return RF_EUSER;
    g->ops = &cu_ops;
    cu_state *c = rf_calloc(1, sizeof *c);
    if (!c) return RF_ENOMEM;
    g->impl = c;
    snprintf(g->desc, sizeof g->desc, "%s (sm_%d%d, %d SMs)", drv.name, drv.cc_major, drv.cc_minor, drv.sms);
    g->sms = drv.sms;
    g->max_grid = (uint64_t)drv.sms * 8;
    g->wire_piece = RF_WIRE_PIECE;
    g->wire_round = STAGE_BYTES;
    rf_status st = RF_OK;
    CUresult r = drv.f.CtxSetCurrent(drv.ctx);
    size_t fr = 0, total = 0;
    if (r == CUDA_SUCCESS) r = drv.f.MemGetInfo(&fr, &total);
    g->mem_free = fr;
    /* a first arena of a quarter of the free memory (at least 1 GiB), then
    ** arenas that double while the device has room: most runs allocate
    ** once, a large one a few times (each cuMemAlloc costs milliseconds),
    ** and other processes on the same GPU keep room. Taking 85% at the
    ** start left a second redfox on the card 16 MiB: ten test processes on
    ** one H200 failed with "out of GPU memory" */
    g->pool_first = fr / 4 > (UINT64_C(1) << 30) ? fr / 4 : (UINT64_C(1) << 30); /* (gpu_pool_mb may set another) */
    double t0 = rf_now();
    if (r == CUDA_SUCCESS && !spare_take(c)) {
        r = drv.f.StreamCreate(&c->stream, CU_STREAM_NON_BLOCKING);
        for (int i = 0; i < 2 && r == CUDA_SUCCESS; i++) {
            r = drv.f.EventCreate(&c->stage_ev[i], CU_EVENT_DISABLE_TIMING);
            if (r == CUDA_SUCCESS) r = drv.f.EventCreate(&c->mark[i], CU_EVENT_DEFAULT);
        }
        /* the pinned buffers, and the pool's first arena of the size the
        ** defaults give it, each on a thread beside the rest of the start
        ** (or here) */
        if (r == CUDA_SUCCESS) {
            c->hm = hostmem_take();
            if (pthread_create(&c->pin_th, NULL, pin_main, c) == 0) {
                c->pin_running = 1;
            } else {
                pin_main(c);
                pin_settle(c, 0);
                g->start_pinned = c->pin_secs;
                r = c->pin_r;
            }
        }
        if (r == CUDA_SUCCESS) {
            c->early_bytes = rf_gpool_first_bytes(g);
            if (c->early_bytes && pthread_create(&c->arena_th, NULL, arena_main, c) == 0) c->arena_running = 1;
            else c->early_bytes = 0; /* (the pool allocates as ever) */
        }
    }
    g->start_stream = rf_now() - t0;
    g->stream = c->stream;
    if (r != CUDA_SUCCESS) st = cu_fail(g, r, "setting up the GPU");
    if (st) cu_close(g);
    return st;
}
