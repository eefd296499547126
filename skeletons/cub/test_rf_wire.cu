// skeletons/cub/test_rf_wire.cu: the device's widening of a database's
// narrow column copied as stored (rf_wire.cu) on a real GPU: rounds of
// pieces of every stored width (1, 2, 4 and the column's own), exp 0 to 6,
// negative minimums, int64's and int32's extremes, pieces of 1 row to 65536
// (a last piece no grid divides evenly), for 8-byte and 4-byte columns,
// widened on the device and compared value by value with the definition
// (base + stored x 10^exp in unsigned 64-bit arithmetic, truncated to the
// column's width), computed on the host. Exit 0 when all agree, 1 on a
// difference, 77 (skipped) where there is no GPU.
#include "rf_cub.h"

#include "../cuda/rf_wire.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t next_u64()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t pow10u(int e)
{
    uint64_t p = 1;
    for (int i = 0; i < e; i++) p *= 10;
    return p;
}

struct piece {
    rf_wire_blk h;
    std::vector<unsigned char> bytes;
};

// One round of pieces for a column of elem bytes a value; the expected
// column (its rows, value by value) in want.
static bool run_round(int elem, const std::vector<piece> &pieces, int64_t rows, const std::vector<uint64_t> &want)
{
    size_t head = pieces.size() * sizeof(rf_wire_blk), at = head;
    std::vector<rf_wire_blk> hs;
    for (const piece &p : pieces) {
        rf_wire_blk h = p.h;
        h.at = at;
        hs.push_back(h);
        at += (p.bytes.size() + RF_WIRE_ALIGN - 1) / RF_WIRE_ALIGN * RF_WIRE_ALIGN;
    }
    std::vector<unsigned char> round(at, 0);
    memcpy(round.data(), hs.data(), head);
    for (size_t i = 0; i < pieces.size(); i++)
        if (!pieces[i].bytes.empty()) memcpy(round.data() + hs[i].at, pieces[i].bytes.data(), pieces[i].bytes.size());
    void *dround = nullptr, *dcol = nullptr;
    size_t colbytes = (size_t)rows * (size_t)elem;
    if (cudaMalloc(&dround, round.size()) != cudaSuccess || cudaMalloc(&dcol, colbytes) != cudaSuccess) {
        printf("cudaMalloc failed\n");
        return false;
    }
    cudaMemset(dcol, 0xa5, colbytes);
    cudaMemcpy(dround, round.data(), round.size(), cudaMemcpyHostToDevice);
    int e = rf_cub_wire_widen(dround, (int32_t)pieces.size(), elem, dcol, nullptr);
    std::vector<unsigned char> got(colbytes);
    if (!e) e = (int)cudaMemcpy(got.data(), dcol, colbytes, cudaMemcpyDeviceToHost);
    cudaFree(dround);
    cudaFree(dcol);
    if (e) {
        printf("widening failed: %s\n", rf_cub_error_string(e));
        return false;
    }
    for (int64_t r = 0; r < rows; r++) {
        uint64_t g = 0, w = elem == 8 ? want[r] : (uint32_t)want[r];
        memcpy(&g, got.data() + r * elem, (size_t)elem);
        if (g != w) {
            printf("elem %d: row %lld is %llu, not %llu\n", elem, (long long)r, (unsigned long long)g,
                   (unsigned long long)w);
            return false;
        }
    }
    return true;
}

int main()
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("no GPU: skipped\n");
        return 77;
    }
    int bad = 0, rounds = 0;
    const int64_t sizes[] = {1, 255, 256, 2047, 2048, 2049, 65535, 65536};
    for (int elem : {8, 4}) {
        const int widths[] = {1, 2, 4, 8};
        for (int wi = 0; wi < 4; wi++) {
            int w = widths[wi] >= elem ? elem : widths[wi];
            if (widths[wi] > elem) continue; // (8 on a 4-byte column: as the 4 before it)
            for (int e = 0; e <= 6; e++) {
                if (w == elem && e > 0) continue; // a block as it is has no multiplier
                // one round: a piece of each size, rows side by side, minimums of every kind
                std::vector<piece> pieces;
                std::vector<uint64_t> want;
                int64_t row = 0;
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
                    int64_t cnt = sizes[si];
                    piece p;
                    memset(&p.h, 0, sizeof p.h);
                    p.h.row = row;
                    p.h.n = (uint32_t)cnt;
                    p.h.width = (uint8_t)w;
                    uint64_t mul = pow10u(w == elem ? 0 : e);
                    p.h.exp = (uint8_t)(w == elem ? 0 : e);
                    int64_t tmax = elem == 8 ? INT64_MAX : INT32_MAX, tmin = elem == 8 ? INT64_MIN : INT32_MIN;
                    uint64_t qcap = w == 1 ? 0xff : w == 2 ? 0xffff : w == 4 ? 0xffffffffULL : ~0ULL;
                    int64_t base = 0;
                    uint64_t qmax = qcap;
                    if (w < elem) {
                        switch (si % 4) {
                        case 0: base = tmin; break;
                        case 1: base = -(int64_t)(next_u64() % 5000000); break;
                        case 2: base = (int64_t)(next_u64() % 1000); break;
                        default: base = tmax; break; // moved down below: values up to the type's largest
                        }
                        uint64_t room = si % 4 == 3 ? (uint64_t)tmax / mul : ((uint64_t)tmax - (uint64_t)base) / mul;
                        if (qmax > room) qmax = room;
                        if (si % 4 == 3) base = (int64_t)((uint64_t)tmax - qmax * mul);
                        p.h.base = base;
                    }
                    p.bytes.resize((size_t)cnt * (size_t)w);
                    for (int64_t i = 0; i < cnt; i++) {
                        uint64_t q;
                        if (w == elem) {
                            // as it is: any value of the type, its extremes first
                            int64_t v = i == 0 ? tmin : i == 1 ? tmax : (int64_t)next_u64();
                            if (elem == 4) v = (int32_t)v;
                            q = (uint64_t)v;
                        } else {
                            q = i == 0 ? qmax : i == 1 ? 0 : next_u64() % (qmax + 1);
                        }
                        memcpy(p.bytes.data() + i * w, &q, (size_t)w); // (little-endian: the low bytes)
                        uint64_t stored = 0;
                        memcpy(&stored, p.bytes.data() + i * w, (size_t)w);
                        want.push_back(w == elem ? stored : (uint64_t)base + stored * mul);
                    }
                    pieces.push_back(p);
                    row += cnt;
                }
                rounds++;
                if (!run_round(elem, pieces, row, want)) {
                    printf("  (elem %d, width %d, exp %d)\n", elem, w, e);
                    bad = 1;
                }
            }
        }
    }
    if (bad) return 1;
    printf("the device's widening agrees with the definition: %d rounds\n", rounds);
    return 0;
}
