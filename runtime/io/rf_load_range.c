/*
** runtime/io/rf_load_range.c: one part of a text file for a rank that reads
** only its share (runtime/dist, issue 22).
**
** Owns: the file's bytes of part p of n (rf_rt_textrange): the file mapped
** (a regular file: only the pages of the part and of the line that ends it
** are read) or read whole (a pipe, a FIFO), the part's bounds at line
** starts (the first line start at or after p * size / n, as the loader
** splits its chunks), and what its caller must agree on with the other
** parts before parsing: the part's '\n' count (the line number its first
** line has is one more than the counts of the parts before it) and whether
** it holds a '"' (a quoted field could carry a record over a bound).
*/
#include "rf_load.h"
#include "rf_load_file.h"

#include <stdlib.h>
#include <string.h>

/* The first line start at or after byte `at` of data[0..size). */
static int64_t line_start(const char *data, int64_t size, int64_t at)
{
    if (at <= 0) return 0;
    if (at >= size) return size;
    const char *nl = memchr(data + at - 1, '\n', (size_t)(size - at + 1));
    return nl ? (int64_t)(nl - data) + 1 : size;
}

static int64_t count_newlines(const char *p, const char *end)
{
    int64_t n = 0;
    while (p < end && (p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
        n++;
        p++;
    }
    return n;
}

rf_status rf_rt_text_range(const char *path, const rf_rt_load_opts *o, int part, int nparts, rf_rt_textrange *r,
                           rf_diags *d)
{
    memset(r, 0, sizeof *r);
    rf_rt_mapped m;
    rf_status st = rf_rt_file_map(path, o, &m, d);
    if (st) return st;
    r->data = m.data;
    r->size = m.size;
    r->is_mmap = m.is_mmap;
    r->guard = m.guard;
    int64_t lo = (int64_t)((rf_dec128)m.size * part / nparts), hi = (int64_t)((rf_dec128)m.size * (part + 1) / nparts);
    /* the first line (a header) is always part 0's, however small the file */
    if (part > 0 && lo < 1) lo = 1;
    if (hi < 1) hi = 1;
    r->lo = line_start(m.data, m.size, lo);
    r->hi = part + 1 == nparts ? m.size : line_start(m.data, m.size, hi);
    if (r->hi < r->lo) r->hi = r->lo;
    r->newlines = count_newlines(m.data + r->lo, m.data + r->hi);
    r->quote = r->hi > r->lo && memchr(m.data + r->lo, '"', (size_t)(r->hi - r->lo)) != NULL;
    return RF_OK;
}

void rf_rt_text_range_free(rf_rt_textrange *r)
{
    rf_rt_mapped m = {r->data, r->size, r->is_mmap, r->guard};
    if (r->data) rf_rt_file_unmap(&m);
    memset(r, 0, sizeof *r);
}
