// skeletons/cuda/test_gt_cache.cpp: the grouped totals' per-thread cache
// (rf_reduce.cuh rf::gt_cache, compiled as host C++ the way the emulator
// does) against plain 128-bit sums: one thread's rows, in ascending row
// order, through the cache into a block's table must give every group's
// exact row count, first row and 128-bit sums. The cache spills every
// 2^SPAN rows; here SPAN is 3 (kernels use RF_GT_SPAN), so that its spills,
// the values just inside and just past its bound (2^(63 - SPAN)), rows of
// more groups than it has entries and a table that runs out of records are
// all met within a few thousand rows. Random rows, seeded: the same every
// run. Built and run by test_gt_cache.sh; exit 0 when all agree.
#include <cstdio>
#include <map>
#include <random>
#include <vector>
#include "rf_emu_prelude.cuh"
#include "rf_gpu_args.h"
#include "rf_base.cuh"
#include "rf_reduce.cuh"
using namespace rf;

static long bad = 0, cases = 0;

#define H 256
#define G 128
#define SPAN 3

struct ref_group {
    i64 first = -1;
    u64 n = 0;
    std::vector<i128> s;
};

// Runs rows of NK keys (taken from ngroups groups) and NS values through a
// cache of C entries with key words KT; big: how often a value is drawn
// from the whole 64-bit range rather than near the bound.
template <int NK, int NS, int C, class KT>
static void run(const char *name, unsigned seed, int nrows, int ngroups, int big)
{
    constexpr int RW = NK + 2 + 2 * NS;
    std::vector<u64> tab(1 + H + (size_t)G * RW, 0);
    u64 status = 0;
    // threads 0..T-1 take rows r with r % T == thread, and run one after
    // another, the last first (as the emulator may): a group's first row
    // then comes from a thread that runs later
    const int T = 3;
    gt_cache<NK, NS, H, G, C, KT, SPAN> c;
    std::mt19937_64 rng(seed);
    std::map<std::vector<u64>, ref_group> ref;
    const i64 edge = (i64)1 << (63 - SPAN);
    i64 r = 0;
    for (int row = 0; row < nrows; row++) {
        int th = T - 1 - row * T / nrows;
        if (row == 0 || th != T - 1 - (row - 1) * T / nrows) {
            if (row) c.flush(tab.data());
            c.init();
            r = th + T * (i64)(rng() % 4);
        }
        r += T * (1 + (i64)(rng() % 3)); // ascending, with gaps, as a thread's rows are
        int grp = (int)(rng() % (u64)ngroups);
        u64 gk[NK];
        KT ck[NK];
        std::vector<u64> key;
        for (int j = 0; j < NK; j++) {
            // distinct groups by their first key; negative keys too (as int keys widen)
            gk[j] = j == 0 ? (u64)(i64)(grp - ngroups / 2) * 7 : (u64)(grp % 3);
            if (sizeof(KT) == 4) gk[j] = (u64)(u32)gk[j];
            ck[j] = (KT)gk[j];
            key.push_back(gk[j]);
        }
        i64 v[NS > 0 ? NS : 1];
        for (int j = 0; j < NS; j++) {
            u64 pick = rng() % 16;
            i64 x;
            if (big < 0) x = pick < 10 ? edge - 1 : pick < 14 ? edge + (i64)(rng() % 3) : -edge; // at the bound, mostly one sign
            else if ((int)pick < big) x = (i64)rng(); // anywhere, INT64_MIN included sometimes
            else if (pick < 8) x = (i64)(rng() % 2000) - 1000;
            else if (pick < 10) x = edge - 1 - (i64)(rng() % 3); // inside the bound
            else if (pick < 12) x = -edge + (i64)(rng() % 3);
            else if (pick < 13) x = edge + (i64)(rng() % 3); // just past it
            else if (pick < 14) x = -edge - 1 - (i64)(rng() % 3);
            else x = (i64)(rng() >> (rng() % 64)) * (rng() & 1 ? 1 : -1);
            if (big >= 0 && rng() % 997 == 0) x = RF_I64_MIN;
            v[j] = x;
        }
        c.row(tab.data(), &status, ck, gk, r, v);
        ref_group &rg = ref[key];
        if (rg.first < 0 || r < rg.first) rg.first = r;
        rg.n++;
        rg.s.resize(NS, 0);
        for (int j = 0; j < NS; j++) rg.s[j] += v[j];
    }
    c.flush(tab.data());
    cases++;
    if (ngroups > G) {
        // more groups than the table holds: the status word says so
        if (!status) {
            printf("%s: %d groups in a table of %d, no status\n", name, ngroups, G);
            bad++;
        }
        return;
    }
    if (status || tab[0] != ref.size()) {
        printf("%s: status %llu, %llu records for %zu groups\n", name, (unsigned long long)status,
               (unsigned long long)tab[0], ref.size());
        bad++;
        return;
    }
    for (u64 d = 0; d < tab[0]; d++) {
        const u64 *rec = &tab[1 + H + d * RW];
        std::vector<u64> key(rec, rec + NK);
        auto it = ref.find(key);
        if (it == ref.end()) {
            printf("%s: record %llu of no group\n", name, (unsigned long long)d);
            bad++;
            continue;
        }
        const ref_group &rg = it->second;
        bool ok = rec[NK] == (u64)rg.first && rec[NK + 1] == rg.n;
        for (int j = 0; j < NS; j++) {
            i128 s = (i128)(((unsigned __int128)rec[NK + 3 + 2 * j] << 64) | rec[NK + 2 + 2 * j]);
            ok = ok && s == rg.s[j];
        }
        if (!ok) {
            if (bad < 10)
                printf("%s: group %lld: first %llu (want %lld), count %llu (want %llu) or a sum differs\n", name,
                       (long long)rec[0], (unsigned long long)rec[NK], (long long)rg.first,
                       (unsigned long long)rec[NK + 1], (unsigned long long)rg.n);
            bad++;
        }
    }
}

int main()
{
    for (unsigned seed = 1; seed <= 40; seed++) {
        // q01's shape: two narrow keys, four groups, four entries, five sums
        run<2, 5, 4, u32>("2 u32 keys, 4 groups", seed, 3000, 4, 0);
        run<2, 5, 4, u32>("2 u32 keys, 4 groups, wide values", seed, 3000, 4, 3);
        // every value at the partial sums' bound: a spill one row late wraps them
        run<2, 3, 4, u32>("2 u32 keys, 2 groups, values at the bound", seed, 3000, 2, -1);
        // more groups than entries: rows of the others go to the table
        run<1, 2, 4, u64>("1 u64 key, 9 groups", seed, 3000, 9, 1);
        run<2, 1, 2, u64>("2 u64 keys, 40 groups", seed, 3000, 40, 0);
        run<4, 3, 1, u64>("4 u64 keys, 3 groups", seed, 2000, 3, 2);
        // counts only
        run<1, 0, 4, u32>("1 u32 key, counts", seed, 2000, 6, 0);
        // past the table: the status word
        run<1, 1, 4, u64>("1 u64 key, 200 groups", seed, 3000, 200, 0);
    }
    printf("%ld of %ld runs differ\n", bad, cases);
    return bad ? 1 : 0;
}
