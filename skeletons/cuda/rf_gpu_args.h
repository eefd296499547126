/*
** skeletons/cuda/rf_gpu_args.h: the kernel argument block, defined once.
**
** Owns: the layout of the one argument block every kernel takes by value
** (rf_gpu_args in C, rf::Args in the generated CUDA C++ and the emulator's
** host C++: both come from RF_ARGS_FIELDS below), its sizes and offsets,
** checked on both sides, and the names of its slots per kernel family,
** in the manner of Lua's lopcodes.h GETARG_A: RF_A_JOIN_COUNTS(a) is the
** slot where a join's count pass writes its counts. The host sets slots by
** these names; the skeletons (*.cuh) read the same slots, documented there
** by number. The code generator pastes this file first into every program,
** and its text is part of the ABI tag (rf_gpu_abi_tag), so PTX made for
** another layout or another assignment of slots is never used.
**
** Plain C11 and C++ at once: only macros, and the struct in the form each
** language needs (C: <stddef.h>, <stdint.h>; C++: nothing, as NVRTC has
** no headers).
*/
#ifndef RF_GPU_ARGS_H
#define RF_GPU_ARGS_H

#ifndef __cplusplus
#include <stddef.h>
#include <stdint.h>
#endif

/* ---- the layout ---------------------------------------------------------
** Every field is 8 bytes wide (integers, device addresses), so the two
** compilers have no padding to disagree on. The block must stay within the
** 4 KiB of kernel parameters (2,352 bytes). */

#define RF_ARGS_NX 6    /* small integer parameters */
#define RF_ARGS_MAXC 64 /* columns per side (wider relations stay on the host) */
#define RF_ARGS_NP 12   /* work arrays */
#define RF_ARGS_NK 64   /* scalar parameters: one per column where a kernel needs that */
#define RF_ARGS_NT 16   /* lookup tables */

/* I64: a count or small integer; U64: a scalar; IN: a column read; OUT: a
** column written; ROWS: a row index vector (i64); PTR: a work array. */
#define RF_ARGS_FIELDS(I64, U64, IN, OUT, ROWS, PTR, TAB)                                    \
    I64 n, m;               /* items of this launch; a second size */                       \
    I64 x[RF_ARGS_NX];      /* small integer parameters */                                   \
    IN c0[RF_ARGS_MAXC];    /* columns of the first input (or its key columns) */            \
    IN c1[RF_ARGS_MAXC];    /* columns of the second input */                                \
    OUT o[RF_ARGS_MAXC];    /* output columns */                                             \
    ROWS r0;                /* row indices into c0, or 0: row r itself */                    \
    ROWS r1;                /* row indices into c1 */                                        \
    PTR p[RF_ARGS_NP];      /* work arrays (flags, positions, tables, the error word) */     \
    U64 k[RF_ARGS_NK];      /* scalar parameters (widths, string codes, table bases) */      \
    TAB t[RF_ARGS_NT];      /* lookup tables (per-string-code results, the dictionary) */

#define RF_ARGS_OFF_N 0
#define RF_ARGS_OFF_M 8
#define RF_ARGS_OFF_X 16
#define RF_ARGS_OFF_C0 (RF_ARGS_OFF_X + 8 * RF_ARGS_NX)
#define RF_ARGS_OFF_C1 (RF_ARGS_OFF_C0 + 8 * RF_ARGS_MAXC)
#define RF_ARGS_OFF_O (RF_ARGS_OFF_C1 + 8 * RF_ARGS_MAXC)
#define RF_ARGS_OFF_R0 (RF_ARGS_OFF_O + 8 * RF_ARGS_MAXC)
#define RF_ARGS_OFF_R1 (RF_ARGS_OFF_R0 + 8)
#define RF_ARGS_OFF_P (RF_ARGS_OFF_R1 + 8)
#define RF_ARGS_OFF_K (RF_ARGS_OFF_P + 8 * RF_ARGS_NP)
#define RF_ARGS_OFF_T (RF_ARGS_OFF_K + 8 * RF_ARGS_NK)
#define RF_ARGS_BYTES (RF_ARGS_OFF_T + 8 * RF_ARGS_NT)

/* The checks both sides compile. Each field's size (SZ(f): a member's bytes)
** and the block's: when the sizes add up to RF_ARGS_BYTES there is no
** padding anywhere, so every offset is the RF_ARGS_OFF_* above (C checks
** those too, with offsetof; NVRTC has no offsetof). */
#define RF_ARGS_CHECK(assert_, T, SZ)                                                         \
    assert_(sizeof(T) == RF_ARGS_BYTES, "argument block: size");                              \
    assert_(RF_ARGS_BYTES <= 4096, "argument block: kernel parameters are limited to 4 KiB");  \
    assert_(SZ(n) == 8 && SZ(m) == 8 && SZ(r0) == 8 && SZ(r1) == 8, "argument block: n, m, r0, r1"); \
    assert_(SZ(x) == 8 * RF_ARGS_NX, "argument block: x");                                    \
    assert_(SZ(c0) == 8 * RF_ARGS_MAXC && SZ(c1) == 8 * RF_ARGS_MAXC, "argument block: c0, c1"); \
    assert_(SZ(o) == 8 * RF_ARGS_MAXC, "argument block: o");                                  \
    assert_(SZ(p) == 8 * RF_ARGS_NP, "argument block: p");                                   \
    assert_(SZ(k) == 8 * RF_ARGS_NK, "argument block: k");                                    \
    assert_(SZ(t) == 8 * RF_ARGS_NT, "argument block: t")

#ifdef __cplusplus
namespace rf {
struct Args {
    RF_ARGS_FIELDS(long long, unsigned long long, const void *, void *, const long long *, void *, const void *)
};
#define RF_ARGS_SZ(f) sizeof(Args::f)
RF_ARGS_CHECK(static_assert, Args, RF_ARGS_SZ);
#undef RF_ARGS_SZ
} // namespace rf
#else
/* Device addresses are integers on the host (gptr). */
typedef struct rf_gpu_args {
    RF_ARGS_FIELDS(int64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t)
} rf_gpu_args;
#define RF_ARGS_SZ(f) sizeof(((rf_gpu_args *)0)->f)
RF_ARGS_CHECK(_Static_assert, rf_gpu_args, RF_ARGS_SZ);
#undef RF_ARGS_SZ
_Static_assert(offsetof(rf_gpu_args, x) == RF_ARGS_OFF_X && offsetof(rf_gpu_args, c0) == RF_ARGS_OFF_C0 &&
                   offsetof(rf_gpu_args, c1) == RF_ARGS_OFF_C1 && offsetof(rf_gpu_args, o) == RF_ARGS_OFF_O &&
                   offsetof(rf_gpu_args, r0) == RF_ARGS_OFF_R0 && offsetof(rf_gpu_args, r1) == RF_ARGS_OFF_R1 &&
                   offsetof(rf_gpu_args, p) == RF_ARGS_OFF_P && offsetof(rf_gpu_args, k) == RF_ARGS_OFF_K &&
                   offsetof(rf_gpu_args, t) == RF_ARGS_OFF_T,
               "argument block: offsets");
#endif

/* ---- slots by kernel family ------------------------------------------------
** a is the block (write RF_A_X(*pa) through a pointer). Unnamed fields keep
** their general meaning: n items, m a second size, c0/c1 the sides'
** columns, r0/r1 their row indices, o the outputs. */

/* Every kernel of a plan (rf_gpu_kplan) that reads strings: string constant
** i's code, island j's table and its base code, the dictionary's device
** copy (u64 offsets, bytes: rf_str.cuh). */
#define RF_ARGS_MAX_CONSTS 32
#define RF_ARGS_KISLAND 32 /* k[RF_ARGS_KISLAND + j]: island j's base code */
#define RF_ARGS_TDICT 14   /* t[14], t[15]: the dictionary */
#define RF_A_CONST(a, i) ((a).k[i])
#define RF_A_ISLAND_BASE(a, j) ((a).k[RF_ARGS_KISLAND + (j)])
#define RF_A_ISLAND_TABLE(a, j) ((a).t[j])
#define RF_A_DICT_OFFSETS(a) ((a).t[RF_ARGS_TDICT])
#define RF_A_DICT_BYTES(a) ((a).t[RF_ARGS_TDICT + 1])

/* rf_gather.cuh: gather (also set_append's columns): columns and widths;
** iota, cross, code_range, code_mark, sort_key. */
#define RF_A_NCOLS(a) ((a).x[0])
#define RF_A_WIDTH(a, c) ((a).k[c])
#define RF_A_IOTA_OUT(a) ((a).p[0])
#define RF_A_CROSS_RIGHT_ROWS(a) ((a).x[0])
#define RF_A_CROSS_LEFT_OUT(a) ((a).p[0])
#define RF_A_CROSS_RIGHT_OUT(a) ((a).p[1])
#define RF_A_CODE_RANGE_OUT(a) ((a).p[0]) /* code_range: u64[2] min, max */
#define RF_A_CODE_BITS_OUT(a) ((a).p[0])  /* code_mark: a byte per code */
#define RF_A_CODE_LO(a) ((a).x[0])        /* code_mark, island tables, rank_scatter: the first code */
#define RF_A_SORT_KIND(a) ((a).x[0])      /* sort_key, red_min/max: storage kind */
#define RF_A_SORT_DESC(a) ((a).x[1])
#define RF_A_SORT_KEYS_OUT(a) ((a).p[0])
/* part_flags (several ranks): key columns c0[], their kinds k[], ranks, the rank wanted */
#define RF_A_PART_NKEYS(a) ((a).x[0])
#define RF_A_PART_RANKS(a) ((a).x[1])
#define RF_A_PART_WANT(a) ((a).x[2])
#define RF_A_PART_KIND(a, c) ((a).k[c])
#define RF_A_PART_FLAGS_OUT(a) ((a).p[0])
#define RF_A_RANK_LO(a) ((a).x[2]) /* sort_key, red_min/max: ranks by code from */
#define RF_A_RANKS(a) ((a).t[0])

/* rf_group.cuh: hash tables of first occurrences and sets. */
#define RF_A_GRP_TABLE(a) ((a).p[0])
#define RF_A_GRP_MASK(a) ((a).x[0])
#define RF_A_GRP_SLOTS(a) ((a).p[1])
#define RF_A_GRP_WANT(a) ((a).p[2])    /* grp_insert: rows to take (0: all) */
#define RF_A_GRP_FLAGS(a) ((a).p[2])   /* grp_flag out; grp_finish, set_append in */
#define RF_A_GRP_ID_BASE(a) ((a).x[1]) /* grp_flag: row i is id base + i; set_append: N */
#define RF_A_GRP_SCAN(a) ((a).p[3])
#define RF_A_GRP_GROUP_OUT(a) ((a).p[4])
#define RF_A_GRP_FIRST_OUT(a) ((a).p[5])
#define RF_A_SET_ABSENT_OUT(a) ((a).p[2]) /* set_probe */
/* set_flag over a narrow set (int columns stored in 32 bits): the candidate
** columns c1[c] to check (bit c) and a u64 word raised to 1 when a new row
** holds a value outside 32 bits (0: no check) */
#define RF_A_SET_FIT_COLS(a) ((a).x[2])
#define RF_A_SET_FIT_STATUS(a) ((a).p[4])
/* col_narrow (i64 c0[0] -> i32 o[0], the u64 word p[0] raised to 1 when a
** value does not fit) and col_widen (i32 c0[0] -> i64 o[0]) */
#define RF_A_COL_STATUS(a) ((a).p[0])
/* set_append's width of a column: an i64 candidate into a 32-bit column */
#define RF_W_NARROW 84

/* rf_group.cuh runs_first: the walk over runs of an ordered first column. */
#define RF_A_RUNS_FLAGS_OUT(a) ((a).p[0])
#define RF_A_RUNS_WANT(a) ((a).p[1])
#define RF_A_RUNS_STATUS(a) ((a).p[2])
#define RF_A_RUNS_FIRST_OUT(a) ((a).p[3]) /* groups: each row's lowest equal row */
#define RF_A_RUNS_LIMIT(a) ((a).x[0])

/* rf_join.cuh: the hash's parameters (struct jh) in every build and probe;
** join_range_smem, join_hash, join_runs; the probes (join_count, join_write,
** anti_flags). */
#define RF_A_JH_MASK(a) ((a).x[0])
#define RF_A_JH_BASE(a) ((a).x[1])
#define RF_A_JH_ROT1(a) ((a).x[2])
#define RF_A_JOIN_RANGE_OUT(a) ((a).p[0])
#define RF_A_JOIN_HASH_OUT(a) ((a).p[0])
#define RF_A_JOIN_ROW_OUT(a) ((a).p[1])
#define RF_A_JOIN_RUNS_HASHES(a) ((a).p[0])
#define RF_A_JOIN_RUNS_STARTS(a) ((a).p[1])
#define RF_A_JOIN_HASHES(a) ((a).p[0])
#define RF_A_JOIN_ROWS(a) ((a).p[1])
#define RF_A_JOIN_STARTS(a) ((a).p[2])
#define RF_A_JOIN_COUNTS_OUT(a) ((a).p[4])
#define RF_A_JOIN_POS(a) ((a).p[5])
#define RF_A_JOIN_LEFT_OUT(a) ((a).p[6])
#define RF_A_JOIN_RIGHT_OUT(a) ((a).p[7])
#define RF_A_ANTI_FLAGS_OUT(a) ((a).p[4])

/* rf_reduce.cuh. */
#define RF_A_RED_GROUPS(a) ((a).p[0])
#define RF_A_RED_ACC(a) ((a).p[1])
#define RF_A_RED_COUNTS(a) ((a).p[2]) /* red_final */
#define RF_A_RED_ERR(a) ((a).p[3])    /* red_final */
#define RF_A_RED_OP(a) ((a).x[0])     /* red_final */
#define RF_A_RED_KIND(a) ((a).x[1])   /* red_final (red_min/max: RF_A_SORT_KIND) */
#define RF_A_RED_BACK(a) ((a).t[1])   /* red_final: the code of each rank */

/* rf_map.cuh: map_write, map_onepass (a map kernel of its own). */
#define RF_A_MAP_TILES(a) ((a).p[0])
#define RF_A_MAP_ERR(a) ((a).p[1])
#define RF_A_MAP_CTL(a) ((a).p[2]) /* map_onepass: the tile counter, then the rows written */
#define RF_A_MAP_RUNS_STATUS(a) ((a).p[3])
#define RF_A_RUNS_WALK(a) ((a).x[5]) /* maps and fused kernels: > 0, the walk's limit (drop repeats) */

/* codegen.c's fused kernels (rfg<u>_*). */
#define RF_A_FUSED_ERR(a) ((a).p[0]) /* the stages' error words, then the counts */
#define RF_A_FUSED_FLAGS(a) ((a).p[1])
#define RF_A_FUSED_POS(a) ((a).p[2])
#define RF_A_FUSED_FIRST(a) ((a).p[3]) /* runs_first over the left relation */
#define RF_A_FUSED_ACC(a) ((a).p[3])   /* totals: the sums */
#define RF_A_FUSED_HASHES(a) ((a).p[4])
#define RF_A_FUSED_ROWS(a) ((a).p[5])
#define RF_A_FUSED_STARTS(a) ((a).p[6])
#define RF_A_FUSED_RUNS_STATUS(a) ((a).p[7])

/* rf_str.cuh: island tables, str_dedup, str_rep, str_resolve, str_scatter,
** str_chunk, rank_scatter. */
#define RF_A_STR_PRESENT(a) ((a).p[0]) /* island tables, str_*: a byte per code (0: all) */
#define RF_A_STR_TABLE(a) ((a).p[1])   /* island tables out; str_*: the views */
#define RF_A_STR_SLOTS(a) ((a).p[4])
#define RF_A_STR_MASK(a) ((a).x[1])
#define RF_A_STR_REP_OUT(a) ((a).p[5])
#define RF_A_STR_CODES(a) ((a).p[6])
#define RF_A_STR_REPS(a) ((a).p[7])
#define RF_A_STR_REP_CODES(a) ((a).p[8])
#define RF_A_CHUNK(a) ((a).x[0])      /* str_chunk: 8-byte chunk, or -1: the length */
#define RF_A_CHUNK_CODE_LO(a) ((a).x[1])
#define RF_A_CHUNK_KEYS_OUT(a) ((a).p[0])
#define RF_A_CHUNK_MAXLEN(a) ((a).p[1])
#define RF_A_RANK_OUT(a) ((a).p[0])  /* rank_scatter: ranks by code */
#define RF_A_RANK_BACK(a) ((a).p[1]) /* rank_scatter: code by rank */

#endif
