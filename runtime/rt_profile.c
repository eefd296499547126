/*
** runtime/rt_profile.c: a run's profile as text, the report `redfox run
** --profile` prints and rf_result_profile_write (api/) gives.
**
** Owns: the profile's text: the load and run time, one line per kernel that
** ran, the phases, --device auto's prediction, a database's skipped blocks,
** the GPU's memory, input cache, dictionary copy and host time, and each
** rank's time and bytes (what it read, and on the GPU what its inputs
** copied).
*/
#include "rf_runtime.h"
#include "rf_rt_place.h"
#include "rf_rt_dist.h"

#include <stdio.h>
#include <string.h>

/* cuInit slower than this gets --profile's hint about `redfox hold`: 10-16
** ms on an H200 while another process holds the driver, 104-192 ms alone */
#define RF_RT_SLOW_CUINIT_S 0.05

/* The GPU's start in its parts: the driver's (where this run started it),
** the stream and pinned buffers, the rest of the device's open, the
** program's module, the pool's arenas; which of them ran on threads of
** their own, and how long what needed them waited. */
static void gpu_start_write(const rf_rt_result *res, FILE *f)
{
    char drv[224], pin[256];
    double mine = 0; /* the open's parts counted here, on the open's thread */
    if (res->gpu_start_driver == 1) {
        snprintf(drv, sizeof drv,
                 "driver and cuInit %.3f ms, context %.3f ms, cudart and CUB %.3f ms on a thread of its own "
                 "(waited for %.3f ms)",
                 res->gpu_start_init_s * 1e3, res->gpu_start_context_s * 1e3, res->gpu_start_cudart_s * 1e3,
                 res->gpu_start_cudart_wait_s * 1e3);
        mine = res->gpu_start_init_s + res->gpu_start_context_s;
    } else {
        snprintf(drv, sizeof drv, "%s",
                 res->gpu_start_driver == 2 ? "driver started earlier in the process" : "emulated (no driver)");
    }
    if (res->gpu_start_driver == 3)
        pin[0] = 0;
    else if (res->gpu_start_pinned_s > 0 && res->gpu_start_arena_s > 0)
        snprintf(pin, sizeof pin,
                 ", stream %.3f ms, pinned buffers %.3f ms and the pool's first arena %.3f ms on threads of their "
                 "own beside the program's load (the copies waited %.3f ms for the buffers)",
                 res->gpu_start_stream_s * 1e3, res->gpu_start_pinned_s * 1e3, res->gpu_start_arena_s * 1e3,
                 res->gpu_start_pinned_wait_s * 1e3);
    else if (res->gpu_start_pinned_s > 0)
        snprintf(pin, sizeof pin,
                 ", stream %.3f ms, pinned buffers %.3f ms on a thread beside the program's load (waited for %.3f ms)",
                 res->gpu_start_stream_s * 1e3, res->gpu_start_pinned_s * 1e3, res->gpu_start_pinned_wait_s * 1e3);
    else
        snprintf(pin, sizeof pin, ", stream and pinned buffers kept from an earlier run (%.3f ms)",
                 res->gpu_start_stream_s * 1e3);
    mine += res->gpu_start_stream_s;
    double rest = res->device_seconds - mine;
    char mod[200] = "";
    if (res->gpu_module_aside)
        snprintf(mod, sizeof mod, " on a thread of its own beside the copies (waited for %.3f ms at the load's end)%s",
                 res->gpu_module_wait_s * 1e3, res->gpu_module_kept ? ", its module kept loaded from an earlier run" : "");
    else if (res->gpu_module_kept)
        snprintf(mod, sizeof mod, ", its module kept loaded from an earlier run");
    fprintf(f,
            "gpu start: %s%s, the rest of the device's open (plans, pool) %.3f ms; program %.3f ms%s; pool arenas "
            "%.3f ms (in the copy or the run)\n",
            drv, pin, (rest > 0 ? rest : 0) * 1e3, res->program_seconds * 1e3, mod, res->gpu_alloc_seconds * 1e3);
    /* a slow cuInit is, on the hosts measured, the unified-memory module
    ** registering a GPU no other process had registered (tools/cmd_hold.c):
    ** said where the user can act on it */
    if (res->gpu_start_driver == 1 && res->gpu_start_init_s > RF_RT_SLOW_CUINIT_S)
        fprintf(f,
                "gpu start hint: cuInit took %.0f ms; where no other process has the GPU started, the driver's "
                "unified-memory module (nvidia-uvm) registers it anew, about 0.1 s on an H200: `redfox hold` "
                "running beside keeps it started for later processes (redfox hold --help)\n",
                res->gpu_start_init_s * 1e3);
}

/* A rank's load: what it read, and on the GPU what its inputs copied. */
static void rank_load_write(const rf_rt_result *res, const rf_rt_rankstat *s, FILE *f)
{
    fprintf(f, "read %lld input rows, %lld bytes", (long long)s->read_rows, (long long)s->read_bytes);
    if (!strcmp(res->device, "gpu"))
        fprintf(f, "; inputs: %lld bytes to the device (%lld bytes sent), %lld bytes found on the device (kept by an "
                   "earlier run, not copied)",
                (long long)s->load_h2d_bytes, (long long)s->load_wire_bytes, (long long)s->load_found_bytes);
}

/* Where a rank's work (its run less its waits for other ranks and the
** moving of rows) went, step by step (rf_rt_dist_step), and the rest. */
static void rank_steps_write(int32_t r, int32_t n, const rf_rt_rankstat *s, double work, FILE *f)
{
    static const char *const name[RF_RT_DIST_NSTEPS] = {
        [RF_RT_DIST_STEP_KERNELS] = "kernels",           [RF_RT_DIST_STEP_PLAN] = "planning moves",
        [RF_RT_DIST_STEP_VIEW] = "copies to the host",   [RF_RT_DIST_STEP_HASH] = "rows' ranks",
        [RF_RT_DIST_STEP_PACK] = "packing",              [RF_RT_DIST_STEP_UNPACK] = "unpacking",
        [RF_RT_DIST_STEP_LOAD] = "copies back",          [RF_RT_DIST_STEP_CUT] = "limits' cuts",
        [RF_RT_DIST_STEP_DEVMOVE] = "moves on the device"};
    double rest = work;
    fprintf(f, "rank %d of %d: work %.3f ms:", (int)r, (int)n, work * 1e3);
    for (int i = 0; i < RF_RT_DIST_NSTEPS; i++) {
        fprintf(f, "%s %s %.3f ms", i ? "," : "", name[i], s->step_seconds[i] * 1e3);
        if (i == RF_RT_DIST_STEP_UNPACK)
            fprintf(f, " (%lld strings received as bytes)", (long long)s->strings_interned);
        rest -= s->step_seconds[i];
    }
    fprintf(f, ", the rest %.3f ms\n", rest * 1e3);
}

void rf_rt_profile_write(const rf_rt_result *res, FILE *f)
{
    fprintf(f, "profile (device %s): load %.6f s, run %.6f s\n", res->device, res->load_seconds, res->run_seconds);
    int64_t skipped = 0, kskipped = 0;
    for (int32_t i = 0; i < res->nstats; i++) {
        skipped += res->stats[i].skipped;
        kskipped += res->stats[i].skipped > 0;
    }
    /* (the column only where a loop's kernel was not run: its input was empty) */
    fprintf(f, "%-6s %-12s %-6s %6s %10s %12s %12s %14s%s\n", "kernel", "kind", "device", "calls", "ms", "rows in",
            "rows out", "bytes moved", skipped ? "  skipped" : "");
    for (int32_t i = 0; i < res->nstats; i++) {
        const rf_rt_kstat *s = &res->stats[i];
        if (!s->calls && !s->skipped) continue;
        char rin[24], rout[24], skip[32] = "";
        snprintf(rin, sizeof rin, "%lld", (long long)s->rows_in);
        snprintf(rout, sizeof rout, "%lld", (long long)s->rows_out);
        if (skipped) snprintf(skip, sizeof skip, " %8lld", (long long)s->skipped);
        fprintf(f, "k%-5d %-12s %-6s %6lld %10.3f %12s %12s %14lld%s\n", s->kernel, s->what, s->device ? s->device : "-",
                (long long)s->calls, s->seconds * 1e3, s->rows_in < 0 ? "-" : rin, s->rows_out < 0 ? "-" : rout,
                (long long)(s->bytes_in + s->bytes_out), skip);
    }
    if (skipped)
        fprintf(f, "skipped: %lld runs of %lld kernels in loops, not run: their driving input was empty (nothing to make)\n",
                (long long)skipped, (long long)kskipped);
    if (!strcmp(res->device, "gpu")) {
        /* the copy phase's rate from its own bytes (a run under a cap copies
        ** ranges of inputs later, in the run: h2d_bytes counts those too) */
        /* (not the waits for the program's module and the pool's first arena: the start's) */
        double copying = res->copy_seconds - res->gpu_module_wait_s - res->gpu_copy_arena_wait_s;
        /* (on the bytes that crossed: a narrow column crosses as stored) */
        double gbs = copying > 0 ? (double)res->load_wire_bytes / copying * 1e-9 : 0;
        /* the copy's share of what pinned copies reach on this machine */
        char share[96];
        if (res->gpu_pinned_gbs > 0)
            snprintf(share, sizeof share, ", %.0f%% of the %.1f GB/s pinned bandwidth measured",
                     gbs / res->gpu_pinned_gbs * 100, res->gpu_pinned_gbs);
        else
            snprintf(share, sizeof share, ", pinned bandwidth not measured");
        fprintf(f,
                "phases: device %.3f ms, program %.3f ms, read %.3f ms, copy %.3f ms (%llu bytes to the device, "
                "%llu bytes sent, %.2f GB/s%s), run %.3f ms (%llu more bytes to the device), outputs back %.3f ms (%llu bytes to "
                "the host); device memory allocations %.3f ms (in the copy or the run)\n",
                res->device_seconds * 1e3, res->program_seconds * 1e3, res->read_seconds * 1e3,
                res->copy_seconds * 1e3, (unsigned long long)res->load_h2d_bytes,
                (unsigned long long)res->load_wire_bytes, gbs, share, res->run_seconds * 1e3,
                (unsigned long long)(res->h2d_bytes > res->load_h2d_bytes ? res->h2d_bytes - res->load_h2d_bytes : 0),
                res->output_seconds * 1e3, (unsigned long long)res->d2h_bytes, res->gpu_alloc_seconds * 1e3);
        if (res->start_aside && res->gpu_module_aside)
            fprintf(f,
                    "start: device (%.3f ms) on a thread beside the reading (%.3f ms); the reading then waited %.3f ms "
                    "for it; the program (%.3f ms) on a thread of its own beside the copies\n",
                    res->device_seconds * 1e3, res->read_seconds * 1e3, res->start_wait_seconds * 1e3,
                    res->program_seconds * 1e3);
        else if (res->start_aside)
            fprintf(f,
                    "start: device and program (%.3f ms) on a thread beside the reading (%.3f ms); the reading then "
                    "waited %.3f ms for it\n",
                    (res->device_seconds + res->program_seconds) * 1e3, res->read_seconds * 1e3,
                    res->start_wait_seconds * 1e3);
        if (res->gpu_start_driver) gpu_start_write(res, f);
        if (res->gpu_copy_fill_s > 0 || res->gpu_copy_wait_s > 0)
            fprintf(f,
                    "copy: the host filled the pinned buffers for %.3f ms (copying, packing columns as stored) and "
                    "waited %.3f ms for the GPU to empty one; the copy's rate leaves out its waits for the program's "
                    "module (%.3f ms) and the pool's first arena (%.3f ms)\n",
                    res->gpu_copy_fill_s * 1e3, res->gpu_copy_wait_s * 1e3, res->gpu_module_wait_s * 1e3,
                    res->gpu_copy_arena_wait_s * 1e3);
    } else {
        fprintf(f, "phases: read %.3f ms, run %.3f ms\n", res->read_seconds * 1e3, res->run_seconds * 1e3);
    }
    if (res->place_auto) {
        int gpu = !strcmp(res->device, "gpu");
        char g[400]; /* (a prediction from a model's records may be up to 1e308 s: %.6f then takes 316 bytes) */
        if (res->place_gpu_s < 0) snprintf(g, sizeof g, "- (no usable GPU)");
        else snprintf(g, sizeof g, "%.6f s", res->place_gpu_s);
        char tie[128] = "";
        if (res->place_tie)
            snprintf(tie, sizeof tie, "; a near tie (the GPU faster by less than %.0f %% of the CPU's time): the CPU, "
                     "which needs no start", RF_RT_PLACE_TIE * 100);
        /* the emulator has no driver: its figures are the model's for a real
        ** GPU (its own times are not recorded), its start weighed until it
        ** has opened in this process, as a real GPU's driver start */
        const char *how = res->place_emulated
                              ? (res->place_gpu_started ? "; the GPU emulated (RF_GPU_EMULATE): predicted as a real GPU, "
                                                     "started in this process (no start to pay)"
                                                   : "; the GPU emulated (RF_GPU_EMULATE): predicted as a real GPU, "
                                                     "its start included (not yet run in this process)")
                          : res->place_probed ? ""
                                              : "; the GPU's driver not loaded (the choice needs none)";
        /* a fresh process's start while `redfox hold` runs is the short one */
        const char *held = !res->place_gpu_held ? ""
                           : res->place_held_guessed
                               ? "; the driver held by `redfox hold`: its start weighed at half a fresh one's (no "
                                 "held start measured yet)"
                               : "; the driver held by `redfox hold`: its start as measured while held";
        fprintf(f, "auto: predicted cpu %.6f s, gpu %s -> chose %s (model: %lld records)%s%s%s\n", res->place_cpu_s,
                g, res->device, (long long)res->place_records, held, tie, how);
        if (res->place_cpu_read_s > 0 || res->place_gpu_read_s > 0)
            fprintf(f, "auto: of those, the inputs' reading: cpu %.6f s, gpu %.6f s (this program's runs)\n",
                    res->place_cpu_read_s, res->place_gpu_read_s);
        if (res->place_runs > 1 || res->place_later_gain_s > 0) {
            char gt[400];
            if (res->place_gpu_total_s < 0) snprintf(gt, sizeof gt, "-");
            else snprintf(gt, sizeof gt, "%.6f s", res->place_gpu_total_s);
            fprintf(f, "auto: expected %lld run%s: cpu %.6f s, gpu %s in all (its start once, kept inputs copied "
                       "once); later programs' gain on a started GPU %.6f s\n",
                    (long long)res->place_runs, res->place_runs == 1 ? "" : "s", res->place_cpu_total_s, gt,
                    res->place_later_gain_s);
        }
        fprintf(f, "auto: the choice took %.3f ms (the model read %.3f ms, the inputs' sizes %.3f ms, the prediction "
                   "%.3f ms); libcuda.so.1 %s in this process\n",
                res->place_choose_s * 1e3, res->place_model_s * 1e3, res->place_inputs_s * 1e3,
                res->place_predict_s * 1e3, res->place_driver_loaded ? "loaded" : "not loaded");
        double start = !gpu ? 0 : res->start_aside ? res->start_wait_seconds : res->device_seconds + res->program_seconds;
        double copy = gpu ? res->copy_seconds : 0;
        /* the copies' phase ends waiting for the program's kernels (the
        ** JIT's module; the emulator's object, built by a compiler where
        ** its cache has none: seconds): part of the start, not copying */
        double module = gpu && res->gpu_module_wait_s > 0 && res->gpu_module_wait_s <= copy ? res->gpu_module_wait_s : 0;
        char mod[96] = "";
        if (gpu)
            snprintf(mod, sizeof mod, ", the program's kernels waited for %.6f s", module);
        fprintf(f, "auto: actual %s %.6f s (reading %.6f s, start not hidden %.6f s%s, copies %.6f s, run and outputs "
                   "%.6f s)\n",
                res->device, res->read_seconds + start + copy + res->run_seconds + res->output_seconds,
                res->read_seconds, start, mod, copy - module, res->run_seconds + res->output_seconds);
    }
    if (res->place_unkept[0])
        fprintf(f, "placement model: this run's records not kept (%s): --device auto does not learn from it\n",
                res->place_unkept);
    if (res->db_blocks)
        fprintf(f, "database: %lld of %lld blocks skipped (min/max outside every constant range filter)\n",
                (long long)res->db_blocks_skipped, (long long)res->db_blocks);
    if (res->cpu_fused)
        fprintf(f, "cpu: %lld grouped totals (a map, its group and its reduce in one pass; --no-fuse: apart)\n",
                (long long)res->cpu_fused);
    if (res->cpu_parted)
        fprintf(f, "cpu: %lld recursion rounds' candidates in parts (joins, union, unique and difference as one pass "
                   "at the first join, at most cpu_part_pairs pairs at once; --no-fuse: apart)\n",
                (long long)res->cpu_parted);
    if (!strcmp(res->device, "gpu")) {
        int64_t moved = 0;
        for (int32_t i = 0; i < res->nstats; i++) moved += res->stats[i].bytes_in + res->stats[i].bytes_out;
        fprintf(f, "gpu: %d fused kernel runs, peak device memory %llu bytes, %lld bytes moved\n", (int)res->gpu_fused,
                (unsigned long long)res->gpu_peak_bytes, (long long)moved);
        if (res->gpu_memory_cap || res->gpu_spills || res->gpu_parted || res->gpu_radixed || res->gpu_fused_ranged) {
            char cap[48];
            snprintf(cap, sizeof cap, "%llu bytes", (unsigned long long)res->gpu_memory_cap);
            fprintf(f,
                    "gpu memory cap: %s; %lld values moved to host memory for room, %llu bytes out, %llu "
                    "bytes back; %lld kernels run in %lld row ranges; %lld kernels run in %lld key partitions; "
                    "%lld fused kernels run in %lld row ranges\n",
                    res->gpu_memory_cap ? cap : "none", (long long)res->gpu_spills,
                    (unsigned long long)res->gpu_spill_out_bytes, (unsigned long long)res->gpu_spill_in_bytes,
                    (long long)res->gpu_parted, (long long)res->gpu_parts, (long long)res->gpu_radixed,
                    (long long)res->gpu_radix_parts, (long long)res->gpu_fused_ranged,
                    (long long)res->gpu_fused_ranges);
        }
        if (res->gpu_recparted) {
            int64_t r = res->gpu_recpart_rounds > 0 ? res->gpu_recpart_rounds : 1;
            fprintf(f,
                    "gpu recursive sets: partitioned into %lld parts by row hash; %lld kernels on them in %lld "
                    "rounds, %lld partitions found kept on the device, %llu bytes to the device and %llu back "
                    "(%llu and %llu a round)\n",
                    (long long)res->gpu_recpart_parts, (long long)res->gpu_recparted,
                    (long long)res->gpu_recpart_rounds, (long long)res->gpu_recpart_kept,
                    (unsigned long long)res->gpu_recpart_in_bytes,
                    (unsigned long long)res->gpu_recpart_out_bytes,
                    (unsigned long long)(res->gpu_recpart_in_bytes / (uint64_t)r),
                    (unsigned long long)(res->gpu_recpart_out_bytes / (uint64_t)r));
        }
        fprintf(f, "gpu join builds: %lld made, %lld reused (a loop's joins with a relation the loop does not change)\n",
                (long long)res->gpu_join_builds, (long long)res->gpu_join_reuses);
        if (res->gpu_cache)
            fprintf(f,
                    "gpu input cache: %lld columns found on the device (%llu bytes, not copied), %lld copied (%llu "
                    "bytes), %lld grown by their new rows alone (in those bytes); %lld evicted for room (%llu bytes); "
                    "it holds %lld columns, %llu bytes\n",
                    (long long)res->gpu_cache_hits, (unsigned long long)res->gpu_cache_hit_bytes,
                    (long long)res->gpu_cache_misses, (unsigned long long)res->gpu_cache_miss_bytes,
                    (long long)res->gpu_cache_grown,
                    (long long)res->gpu_cache_evictions, (unsigned long long)res->gpu_cache_evicted_bytes,
                    (long long)res->gpu_cache_columns, (unsigned long long)res->gpu_cache_bytes);
        fprintf(f, "gpu dictionary: %llu bytes copied to the device; it holds %lld strings\n",
                (unsigned long long)res->gpu_dict_bytes, (long long)res->gpu_dict_codes);
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
            fprintf(f, "; %lld rows sent, %lld received", (long long)s->rows_sent, (long long)s->rows_received);
            fprintf(f, "; ");
            rank_load_write(res, s, f);
            fputc('\n', f);
            /* where a rank's time between kernels goes (runtime/dist/README.md) */
            fprintf(f,
                    "rank %d of %d: %lld moves, %lld exchanges (%.3f ms moving rows), %lld collectives (%.3f ms), ",
                    (int)r, (int)res->nranks, (long long)s->moves, (long long)s->exchanges, s->xport_seconds * 1e3,
                    (long long)s->collectives, s->collective_seconds * 1e3);
            fprintf(f, "%lld round trips in the %lld moves that asked other ranks (%.2f each), transport ",
                    (long long)s->move_trips, (long long)s->talks,
                    s->talks ? (double)s->move_trips / (double)s->talks : 0.0);
            if (!res->rank_exchange[0]) fprintf(f, "MPI\n");
            else if (s->starts) fprintf(f, "started for this run (%.3f ms)\n", s->start_seconds * 1e3);
            else fprintf(f, "reused (started by an earlier run of this process)\n");
            /* the run's moves: the load's (the inputs distributed) are not in run_seconds */
            double work = s->run_seconds - s->wait_seconds - s->run_xport_seconds;
            rank_steps_write(r, res->nranks, s, work, f);
            double slow_work = res->ranks[slow].run_seconds - res->ranks[slow].wait_seconds - res->ranks[slow].run_xport_seconds;
            if (work > slow_work) slow = r;
        }
        if (res->rank_exchange[0]) fprintf(f, "ranks exchange rows %s\n", res->rank_exchange);
        if (res->rank_strings[0]) fprintf(f, "ranks' string codes: %s\n", res->rank_strings);
        fprintf(f, "slowest rank: %d (%.3f ms of work besides waiting and moving rows)\n", (int)slow,
                (res->ranks[slow].run_seconds - res->ranks[slow].wait_seconds - res->ranks[slow].run_xport_seconds) * 1e3);
    }
}
