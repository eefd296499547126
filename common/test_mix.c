/*
** common/test_mix.c: unit tests of common/rf_mix.h, the tree's one 64-bit
** hash mixing.
**
** Owns: checks rf_mix64 and rf_mix64_combine against values computed apart
** from this code (Murmur3's fmix64 and boost's hash_combine in 64-bit
** arithmetic, by a Python script), since the CPU's partitions must keep
** agreeing with the GPU's copy (skeletons/cuda) and no hash may move.
*/
#include "rf_mix.h"

#include <stdio.h>

#include "rf_test_check.h"

int main(void)
{
    CHECK(rf_mix64(0) == 0);
    CHECK(rf_mix64(1) == UINT64_C(0xb456bcfc34c2cb2c));
    CHECK(rf_mix64(UINT64_C(0xdeadbeef)) == UINT64_C(0xd24bd59f862a1dac));
    CHECK(rf_mix64(UINT64_MAX) == UINT64_C(0x64b5720b4b825f21));
    CHECK(rf_mix64_combine(0, 0) == UINT64_C(0x9e3779b97f4a7c15));
    CHECK(rf_mix64_combine(1, 2) == UINT64_C(0x9e3779b97f4a7c56));
    CHECK(rf_mix64_combine(UINT64_MAX, UINT64_MAX) == UINT64_C(0x21c8864680b5842c));
    CHECK(rf_mix64_combine(UINT64_C(0x123456789abcdef0), 42) == UINT64_C(0x3dee7b06cf8db10b));
    if (failures) return 1;
    printf("rf_mix64 and rf_mix64_combine: as computed apart\n");
    return 0;
}
