/*
** runtime/rt_share.c: a rank's share of an input, when several MPI ranks
** run one program (runtime/dist, issue 22).
**
** Owns: which part of an input each rank reads, and the checks of what the
** program says about an input's rows made across the shares:
**   - a text file: rank r of R parses bytes [r * size / R, (r + 1) * size / R)
**     moved to line starts (rf_rt_text_range); the ranks first tell each
**     other their parts' line counts, so that each knows the file line of
**     its first line (data errors name the line one process names) and
**     rank 0 alone skips the header. A quoted field may hold a line end,
**     and a bound inside it would cut a record in two: when any part holds
**     a '"', every rank reads the whole file and keeps its rows instead (as
**     before shares). A pipe, a FIFO or a device can be read once, by one
**     reader: rank 0 reads it whole, and the other ranks hold none of its
**     rows.
**   - a database table: blocks [r * B / R, (r + 1) * B / R) of its B blocks
**     (rt_inputs.c asks rt_db_input.c for only those, block skipping then
**     keeps what it keeps of them); a table of one block is read whole by
**     every rank (replicated; its checks count rank 0's rows only).
**   - a declared key or a functional dependency is checked over all ranks'
**     rows: each share's rows, with their file lines, are hashed by the key
**     to ranks (equal keys meet), each rank checks what it received (rows
**     arrive in rank order, each share in its order: the file's order),
**     and the ranks vote the earliest line that breaks it; the rank holding
**     it reports it, with the same text as one process.
*/
#include "rf_rt_dist.h"
#include "rf_sys.h"
#include "rt_inputs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void rf_rt_share_blocks(const rf_rt_dist *x, int64_t nblocks, int64_t *b0, int64_t *b1)
{
    int r = rf_rt_dist_rank(x), n = rf_rt_dist_size(x);
    if (nblocks == 1) {
        /* a table of one block (at most --block-rows rows: TPC-H's nation
        ** and region): every rank reads it whole, so that it is replicated
        ** and joins with it move nothing (rf_rt_dist_loaded_whole) */
        *b0 = 0;
        *b1 = 1;
        return;
    }
    *b0 = (int64_t)((rf_dec128)nblocks * r / n);
    *b1 = (int64_t)((rf_dec128)nblocks * (r + 1) / n);
}

/* One check (which) over every rank's share r, whose row i is on line
** line0 + i. */
static rf_status check_one(rf_rt_dist *x, const char *path, int db, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool,
                           const rf_rt_rel *r, int64_t line0, int which, rf_diags *d)
{
    /* the rows sent: the key's columns (a key) or all (a dependency), then the line */
    int key = which == RF_RT_CHECK_KEY;
    int32_t nc = key ? v->ninput_key : v->ncols;
    rf_hir_var vv = *v;
    int32_t *pos = rf_calloc((size_t)nc + 1, sizeof *pos);
    rf_type *types = rf_calloc((size_t)nc + 2, sizeof *types);
    const char **names = rf_calloc((size_t)nc + 1, sizeof *names);
    void **cols = rf_calloc((size_t)nc + 2, sizeof *cols);
    int64_t *lines = rf_malloc(((size_t)r->nrows + 1) * sizeof *lines);
    rf_status st = pos && types && names && cols && lines ? RF_OK : RF_ENOMEM;
    for (int32_t c = 0; c < nc && !st; c++) {
        int32_t src = key ? v->input_key[c] : c;
        pos[c] = c;
        types[c] = v->types[src];
        names[c] = v->colnames ? v->colnames[src] : NULL;
        cols[c] = r->cols[src];
    }
    for (int64_t i = 0; i < r->nrows && !st; i++) lines[i] = line0 + i;
    if (!st) {
        types[nc] = RF_TYPE_INT;
        cols[nc] = lines;
        vv.ncols = nc;
        vv.types = types;
        vv.colnames = v->colnames ? names : NULL;
        if (key) vv.input_key = pos;
    }
    rf_rt_rel sent = {r->nrows, nc + 1, types, cols}, got;
    memset(&got, 0, sizeof got);
    int32_t nhash = key ? nc : v->nkeys;
    const char *what = key ? "the check of an input's key" : "the check of an input's functional dependency";
    /* a failure before the exchange is told to the others by the next
    ** vote (the run's end); one in it, by its own vote */
    rf_status xst = st ? st : rf_rt_dist_hash_rows(x, &sent, dict, pos, nhash, what, &got, d);
    free(lines);
    free(cols);
    int n = rf_rt_dist_size(x), me = rf_rt_dist_rank(x);
    rf_rt_dist_vote *all = NULL;
    if (!xst && !(all = rf_calloc((size_t)n, sizeof *all))) xst = RF_ENOMEM;
    if (!xst) {
        int64_t first = -1, dup = -1;
        rf_status lst = rf_rt_input_dup(pool, &vv, &got, which, &first, &dup);
        const int64_t *glines = got.nrows ? got.cols[nc] : NULL;
        int64_t mine[RF_RT_DIST_VOTE_N] = {dup >= 0 ? glines[dup] : INT64_MAX};
        xst = rf_rt_dist_allgather(x, lst != RF_OK, mine, all, what, d);
        if (lst) xst = lst;
        int owner = -1;
        int64_t best = INT64_MAX;
        for (int q = 0; q < n && !xst; q++)
            if (all[q].v[0] < best) best = all[q].v[0], owner = q;
        if (owner >= 0) {
            /* the earliest line that breaks it: its rank says which, the others stop */
            if (owner == me) rf_rt_input_dup_error(path, db, &vv, dict, &got, glines, which, first, dup, d);
            xst = rf_rt_dist_allgather(x, owner == me, NULL, all, what, d);
            if (!xst) xst = RF_EUSER;
        }
    }
    free(all);
    if (got.cols) rf_rt_rel_free(&got);
    free(pos);
    free(types);
    free(names);
    return xst;
}

rf_status rf_rt_share_check(rf_rt_dist *x, const char *path, int db, const rf_hir_var *v, rf_rt_dict *dict,
                            rf_cpu_pool *pool, const rf_rt_rel *r, int64_t line0, int checks, rf_diags *d)
{
    rf_status st = RF_OK;
    if (checks & RF_RT_CHECK_KEY) st = check_one(x, path, db, v, dict, pool, r, line0, RF_RT_CHECK_KEY, d);
    if (!st && (checks & RF_RT_CHECK_FD)) st = check_one(x, path, db, v, dict, pool, r, line0, RF_RT_CHECK_FD, d);
    return st;
}

int rf_rt_share_is_stream(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
}

rf_status rf_rt_share_streams_alike(const char *path, const rf_hir_var *v, int streams, int n, rf_diags *d)
{
    if (!streams || streams == n) return RF_OK;
    /* ranks on hosts where the path is a file on some, a pipe on others:
    ** every rank finds it, rank 0 reports it */
    rf_rt_dist_set_stopped_by(0);
    rf_error(d, rf_mkloc(path, 0, 0), "the input file of `%s` is a pipe or a device on some ranks and a file on "
             "others: every rank must see the same file", v->name);
    return RF_EUSER;
}

rf_status rf_rt_share_text_given(rf_rt_dist *x, const char *path, const rf_hir_var *v, int64_t nrows, rf_diags *d)
{
    int n = rf_rt_dist_size(x);
    rf_rt_dist_vote *all = rf_calloc((size_t)n, sizeof *all);
    if (!all) return RF_ENOMEM; /* the next vote tells the others */
    int64_t mine[RF_RT_DIST_VOTE_N] = {0, 0, 1};
    rf_status st = rf_rt_dist_allgather(x, 0, mine, all, "the shares of an input file", d);
    int streams = 0;
    for (int q = 0; q < n && !st; q++) streams += all[q].v[2] != 0;
    free(all);
    if (!st) st = rf_rt_share_streams_alike(path, v, streams, n, d);
    if (!st) rf_rt_dist_read(x, nrows, 0);
    return st;
}

rf_status rf_rt_share_text(rf_rt_dist *x, const char *path, const rf_hir_var *v, rf_rt_dict *dict, rf_cpu_pool *pool,
                           int threads, rf_rt_rel *out, int *whole, rf_diags *d)
{
    memset(out, 0, sizeof *out);
    *whole = 0;
    int me = rf_rt_dist_rank(x), n = rf_rt_dist_size(x);
    rf_rt_load_opts lo = {v->delimiter, 0, threads, v->name, NULL, NULL};
    rf_rt_textrange tr;
    memset(&tr, 0, sizeof tr);
    /* a pipe, a FIFO, a device: its bytes go to whichever rank reads them
    ** (a FIFO's writer fed both ranks parts of one stream: a count of 936
    ** rows out of 2,000, exit 0), and it can be read once: rank 0 reads it
    ** whole as one process does (its checks included), the others hold
    ** none of its rows (an input spread with all rows on rank 0) */
    int stream = rf_rt_share_is_stream(path);
    rf_status st = RF_OK;
    if (!stream) st = rf_rt_text_range(path, &lo, me, n, &tr, d);
    else if (me == 0) st = rf_rt_load_input(path, v, dict, pool, threads, out, d);
    rf_rt_dist_vote *all = rf_calloc((size_t)n, sizeof *all);
    if (!all) {
        rf_rt_text_range_free(&tr);
        if (stream) rf_rt_rel_free(out);
        return RF_ENOMEM; /* the next vote tells the others */
    }
    int64_t mine[RF_RT_DIST_VOTE_N] = {st ? 0 : tr.newlines, st ? 0 : tr.quote, stream};
    rf_status vst = rf_rt_dist_allgather(x, st != RF_OK, mine, all, "the shares of an input file", d);
    int64_t line = 1;
    int quoted = 0, streams = 0;
    for (int q = 0; q < n && !st && !vst; q++) {
        quoted |= all[q].v[1] != 0;
        streams += all[q].v[2] != 0;
        if (q < me) line += all[q].v[0];
    }
    free(all);
    if (!st && !vst) st = rf_rt_share_streams_alike(path, v, streams, n, d);
    if (st || vst) {
        rf_rt_text_range_free(&tr);
        if (stream) {
            rf_rt_rel_free(out);
            memset(out, 0, sizeof *out);
        }
        return st ? st : vst;
    }
    if (stream) {
        if (me == 0) {
            rf_rt_dist_read(x, out->nrows, 0);
            return RF_OK;
        }
        /* no rows here: the input's columns, empty */
        rf_rt_texttable t;
        st = rf_rt_load_mem(path, "", 0, 1, v->types, v->ncols, &lo, &t, d);
        if (!st) st = rf_rt_text_to_rel(v, &t, dict, threads, out, NULL);
        return st;
    }
    if (quoted) {
        /* a record may span a bound: the whole file, the caller keeps the rows of this rank */
        int64_t size = tr.size;
        rf_rt_text_range_free(&tr);
        *whole = 1;
        st = rf_rt_load_input(path, v, dict, pool, threads, out, d);
        if (!st) rf_rt_dist_read(x, out->nrows, size);
        return st;
    }
    lo.header = me == 0 && v->header;
    rf_rt_texttable t;
    st = rf_rt_load_mem(path, tr.data + tr.lo, tr.hi - tr.lo, line, v->types, v->ncols, &lo, &t, d);
    int64_t bytes = tr.hi - tr.lo;
    rf_rt_text_range_free(&tr);
    if (!st) st = rf_rt_text_to_rel(v, &t, dict, threads, out, NULL);
    if (st) return st; /* the next collective tells the others */
    rf_rt_dist_read(x, out->nrows, bytes);
    st = rf_rt_share_check(x, path, 0, v, dict, pool, out, line + (lo.header ? 1 : 0), rf_rt_input_checks(v), d);
    if (st) {
        rf_rt_rel_free(out);
        memset(out, 0, sizeof *out);
    }
    return st;
}
