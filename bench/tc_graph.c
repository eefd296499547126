/*
** bench/tc_graph.c: a sparse random directed graph for the transitive
** closure benchmark, as dbgen-style "from|to|" lines on stdout.
**
** usage: tc_graph NODES EDGES SEED
** Edges are drawn uniformly (no self loops, duplicates dropped), so with more
** edges than nodes one giant strongly connected component forms. The
** generator is a fixed xorshift64*, so a (NODES, EDGES, SEED) triple gives
** the same file everywhere.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t state;

static uint64_t next_rand(void)
{
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * UINT64_C(2685821657736338717);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: tc_graph NODES EDGES SEED\n");
        return 2;
    }
    int64_t nodes = atoll(argv[1]), edges = atoll(argv[2]);
    state = (uint64_t)atoll(argv[3]) * 0x9E3779B97F4A7C15ull + 1;
    if (nodes < 2 || edges < 1 || edges > nodes * (nodes - 1)) {
        fprintf(stderr, "tc_graph: need NODES >= 2 and 1 <= EDGES <= NODES*(NODES-1)\n");
        return 2;
    }
    uint8_t *seen = calloc((size_t)(nodes * nodes + 7) / 8, 1);
    if (!seen) {
        fprintf(stderr, "tc_graph: out of memory\n");
        return 1;
    }
    for (int64_t made = 0; made < edges;) {
        int64_t a = (int64_t)(next_rand() % (uint64_t)nodes), b = (int64_t)(next_rand() % (uint64_t)nodes);
        int64_t bit = a * nodes + b;
        if (a == b || (seen[bit / 8] >> (bit % 8)) & 1) continue;
        seen[bit / 8] |= (uint8_t)(1u << (bit % 8));
        printf("%lld|%lld|\n", (long long)a, (long long)b);
        made++;
    }
    free(seen);
    return 0;
}
