/*
** api/api_stats.c: a run's figures and the devices' descriptions, as the
** library hands them out (API level 4).
**
** Owns: rf_result_stats (the runtime's figures of one run copied into the
** caller's versioned rf_run_stats, as many fields as both sides know) and
** rf_device_info (the GPU's description or why there is none, the CPU's
** model name).
*/
#include "api_internal.h"
#include "rf_rt_gpu.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

int rf_result_stats(const rf_result *res, rf_run_stats *out)
{
    if (!res || !out || out->size < offsetof(rf_run_stats, device) + sizeof out->device) return REDFOX_MISUSE;
    const rf_rt_result *r = res->rr;
    rf_run_stats s;
    memset(&s, 0, sizeof s);
    s.device = r->device;
    s.gpu_fell_back = r->gpu_fell_back;
    s.rank = r->rank;
    s.nranks = r->nranks > 0 ? r->nranks : 1;
    s.load_seconds = r->load_seconds;
    s.run_seconds = r->run_seconds;
    s.device_seconds = r->device_seconds;
    s.program_seconds = r->program_seconds;
    s.read_seconds = r->read_seconds;
    s.copy_seconds = r->copy_seconds;
    s.output_seconds = r->output_seconds;
    s.input_rows = (int64_t)r->input_rows;
    s.input_bytes = (int64_t)r->input_bytes;
    s.kernel_bytes_in = s.kernel_bytes_out = r->nstats > 0 ? 0 : -1;
    for (int32_t k = 0; k < r->nstats; k++) {
        s.kernel_bytes_in += r->stats[k].bytes_in;
        s.kernel_bytes_out += r->stats[k].bytes_out;
    }
    s.cpu_fused = r->cpu_fused;
    s.h2d_bytes = (int64_t)r->h2d_bytes;
    s.d2h_bytes = (int64_t)r->d2h_bytes;
    s.gpu_peak_bytes = (int64_t)r->gpu_peak_bytes;
    s.gpu_fused = r->gpu_fused;
    s.gpu_memory_cap = (int64_t)r->gpu_memory_cap;
    s.gpu_values_moved = r->gpu_spills;
    s.gpu_kernels_in_ranges = r->gpu_parted + r->gpu_fused_ranged; /* (a fused kernel in ranges is one kernel) */
    s.gpu_kernels_in_partitions = r->gpu_radixed;
    s.gpu_cache_hits = r->gpu_cache_hits;
    s.gpu_cache_misses = r->gpu_cache_misses;
    s.gpu_cache_hit_bytes = (int64_t)r->gpu_cache_hit_bytes;
    s.gpu_cache_miss_bytes = (int64_t)r->gpu_cache_miss_bytes;
    size_t n = out->size < sizeof s ? out->size : sizeof s;
    s.size = n;
    memcpy(out, &s, n);
    return REDFOX_OK;
}

/* "model name : Intel(R) Xeon(R) ..." of /proc/cpuinfo (its first lines), else "CPU". */
static void cpu_name(char *out, size_t n)
{
    snprintf(out, n, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10)) continue;
        const char *p = strchr(line, ':');
        if (!p) break;
        for (p++; *p == ' ' || *p == '\t'; p++) {}
        snprintf(out, n, "%s", p);
        out[strcspn(out, "\n")] = 0;
        break;
    }
    fclose(f);
}

int rf_device_info(int device, char *text, size_t n)
{
    char buf[512];
    int ok = 0;
    if (device == REDFOX_DEVICE_CPU) {
        cpu_name(buf, sizeof buf);
        ok = 1;
    } else if (device == REDFOX_DEVICE_GPU) {
        ok = rf_rt_gpu_available(buf, sizeof buf);
    } else {
        snprintf(buf, sizeof buf, "unknown device %d (REDFOX_DEVICE_CPU or REDFOX_DEVICE_GPU)", device);
    }
    if (text && n) snprintf(text, n, "%s", buf);
    return ok;
}
