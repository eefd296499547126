/*
** runtime/rt_stored.c: input columns held as the database stores them
** (rf_rt_stored.h).
**
** Owns: making a stored column from a checked mapping, selecting the blocks
** block skipping keeps, and the host's widening of one (threads a share of
** the blocks each, into huge-page memory, as the database reader widens).
*/
#include "rf_rt_stored.h"

#include "rf_rt_data.h"

#include <stdlib.h>
#include <string.h>

uint64_t rf_rt_stored_wide_bytes(const rf_rt_stored *s)
{
    return (uint64_t)s->nrows * (uint64_t)rf_db_type_width(s->type);
}

rf_status rf_rt_stored_new(const rf_db_table *t, int32_t c, const uint8_t *keep, rf_db_map *m, rf_rt_stored **out)
{
    const rf_db_column *col = &t->cols[c];
    rf_rt_stored *s = rf_calloc(1, sizeof *s);
    if (s) s->blocks = rf_calloc((size_t)col->nblocks + 1, sizeof *s->blocks);
    if (!s || !s->blocks) {
        if (s) free(s->blocks);
        free(s);
        return RF_ENOMEM;
    }
    s->type = col->type;
    s->nrows = t->nrows;
    s->file = *m;
    s->base = m->addr;
    m->addr = NULL;
    m->len = 0;
    int64_t br = t->block_rows;
    for (int64_t b = 0; b < col->nblocks; b++) {
        if (keep && !keep[b]) continue;
        int64_t r0 = b * br, r1 = r0 + br < t->nrows ? r0 + br : t->nrows;
        if (r1 <= r0) continue;
        s->blocks[s->nblocks++] = (rf_rt_stored_block){col->blocks[b], r0, r1 - r0};
        s->stored_bytes += (uint64_t)(r1 - r0) * col->blocks[b].width;
    }
    *out = s;
    return RF_OK;
}

rf_status rf_rt_stored_select(const rf_rt_stored *s, const uint8_t *keep, int64_t block_rows, rf_rt_stored **out)
{
    rf_rt_stored *v = rf_calloc(1, sizeof *v);
    if (v) v->blocks = rf_calloc((size_t)s->nblocks + 1, sizeof *v->blocks);
    if (!v || !v->blocks) {
        if (v) free(v->blocks);
        free(v);
        return RF_ENOMEM;
    }
    v->type = s->type;
    v->base = s->base;
    /* the kept table blocks' rows, in order, whether s lists them or not
    ** (a block s does not list is zeros in s, and so here) */
    int64_t row = 0;
    int64_t ntb = (s->nrows + block_rows - 1) / block_rows;
    int64_t j = 0;
    for (int64_t b = 0; b < ntb; b++) {
        int64_t r0 = b * block_rows, r1 = r0 + block_rows < s->nrows ? r0 + block_rows : s->nrows;
        if (!keep[b]) continue;
        while (j < s->nblocks && s->blocks[j].row < r0) j++;
        if (j < s->nblocks && s->blocks[j].row == r0) {
            rf_rt_stored_block sb = s->blocks[j];
            sb.row = row;
            v->blocks[v->nblocks++] = sb;
            v->stored_bytes += (uint64_t)sb.n * sb.bl.width;
        }
        row += r1 - r0;
    }
    v->nrows = row;
    *out = v;
    return RF_OK;
}

typedef struct widen_job {
    const rf_rt_stored *s;
    unsigned char *out;
    int nthreads;
} widen_job;

static void widen_part(void *arg, int tid)
{
    const widen_job *j = arg;
    const rf_rt_stored *s = j->s;
    int w = rf_db_type_width(s->type);
    int64_t b0 = s->nblocks * tid / j->nthreads, b1 = s->nblocks * (tid + 1) / j->nthreads;
    for (int64_t b = b0; b < b1; b++) {
        const rf_rt_stored_block *sb = &s->blocks[b];
        /* (checked when mapped: every stored value is within its block's range) */
        rf_db_narrow_decode(s->type, &sb->bl, s->base + sb->bl.at, sb->n, j->out + sb->row * w);
    }
}

const void *rf_rt_stored_widen(rf_rt_stored *s, int threads)
{
    if (s->wide.addr || s->nrows == 0) return s->wide.addr;
    uint64_t len = rf_rt_stored_wide_bytes(s);
    /* zeroed huge pages: rows no block covers read as zeros, as the
    ** database reader leaves the rows of blocks it skipped */
    if (rf_db_map_huge(len, &s->wide)) return NULL;
    /* a thread per 16 MiB of widened values at most: fewer cost less to start */
    int64_t most = (int64_t)(len >> 24) + 1;
    widen_job j = {s, s->wide.addr, threads < 1 ? 1 : threads};
    if (j.nthreads > most) j.nthreads = (int)most;
    if (j.nthreads > s->nblocks) j.nthreads = s->nblocks > 0 ? (int)s->nblocks : 1;
    rf_rt_parallel(j.nthreads, widen_part, &j);
    return s->wide.addr;
}

void rf_rt_stored_free(rf_rt_stored *s)
{
    if (!s) return;
    rf_db_unmap(&s->wide);
    rf_db_unmap(&s->file);
    free(s->blocks);
    free(s);
}
