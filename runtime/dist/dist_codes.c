/*
** runtime/dist/dist_codes.c: string codes that mean the same on every rank.
**
** Owns: the shared prefix of the run's dictionary (every rank interns the
** same strings first, in one order: the program's string constants, then
** the whole dictionary of every database column it reads, rt_db_input.c;
** before any rank's own strings: a text file's share, a plain column's
** rows, a LIKE class's representatives, strings a rule computes, strings
** received as bytes), its check (one vote per run: the prefix's hash and
** length, which must be alike on every rank, else no code is shared and
** strings move as bytes as before), and which variables hold shared codes
** only on every rank: those whose moves may go on the device (NCCL) like
** any other column, and those that may hold a rank's own codes do too when
** a check of their rows (the device's, then a vote) finds none on any rank.
** An input holds rank-local codes when any rank's share
** has a code past the prefix (voted in the same vote); a kernel's output
** does when an input of it does or it computes a string. The host's moves
** need none of this: each part says whether it carries codes or bytes
** (dist_pack.c).
*/
#include "dist_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The string constants of e, interned in the order a walk meets them;
** *computes 1 when e makes a string that is not a column or a constant. */
static rf_status intern_consts(const rf_qp_expr *e, rf_rt_dict *dict, int *computes, int64_t *top)
{
    if (!e) return RF_OK;
    if (e->type == RF_TYPE_STRING) {
        if (e->kind == RF_QP_E_CONST) {
            uint32_t code;
            rf_status st = rf_rt_dict_intern(dict, e->c.s ? e->c.s : "", e->c.s ? e->c.slen : 0, &code);
            if (st) return st;
            if ((int64_t)code >= *top) *top = (int64_t)code + 1;
        } else if (e->kind != RF_QP_E_COL) {
            *computes = 1;
        }
    }
    /* a LIKE's pattern and a comparison's constant are constants too */
    for (int32_t i = 0; i < e->nargs; i++) {
        rf_status st = intern_consts(e->args[i], dict, computes, top);
        if (st) return st;
    }
    return RF_OK;
}

static int has_strings(const rf_hir_var *v)
{
    for (int32_t c = 0; c < v->ncols; c++)
        if (v->types[c] == RF_TYPE_STRING) return 1;
    return 0;
}

/* Kernel k's string constants (expressions, facts) into dict; *computes as above. */
static rf_status kernel_consts(const rf_hir_program *p, const rf_hir_kernel *k, rf_rt_dict *dict, int *computes,
                               int64_t *top)
{
    rf_status st = intern_consts(k->filter, dict, computes, top);
    for (int32_t o = 0; o < k->nouts && !st; o++) st = intern_consts(k->outs[o], dict, computes, top);
    if (k->kind == RF_HIR_FACTS && k->out >= 0 && k->out < p->nvars) {
        const rf_hir_var *v = p->vars[k->out];
        for (int64_t i = 0; i < k->nrows && !st; i++)
            for (int32_t c = 0; c < v->ncols && !st; c++)
                if (v->types[c] == RF_TYPE_STRING) {
                    const rf_fe_const *f = &k->rows[i * v->ncols + c];
                    uint32_t code;
                    st = rf_rt_dict_intern(dict, f->s ? f->s : "", f->s ? f->slen : 0, &code);
                    if (!st && (int64_t)code >= *top) *top = (int64_t)code + 1;
                }
    }
    return st;
}

rf_status rf_rt_dist_codes_begin(rf_rt_dist *x, rf_rt_dict *dict)
{
    rf_rt_dict_set_shared(dict, 0); /* until the ranks agree (a cached dictionary keeps an earlier run's) */
    x->dict = dict;
    const rf_hir_program *p = x->p;
    if (!x->local && !(x->local = rf_calloc((size_t)p->nvars + 1, 1))) return RF_ENOMEM;
    rf_status st = RF_OK;
    x->prefix = 0;
    for (int32_t b = 0; b < p->nblocks && !st; b++)
        for (int32_t j = 0; j < p->blocks[b]->nkernels && !st; j++) {
            int computes = 0;
            const rf_hir_kernel *k = p->blocks[b]->kernels[j];
            st = kernel_consts(p, k, dict, &computes, &x->prefix);
            if (computes && k->out >= 0 && k->out < p->nvars) x->local[k->out] |= 2; /* its own strings */
        }
    return st;
}

void rf_rt_dist_codes_mark(rf_rt_dist *x, const rf_rt_dict *dict, int64_t top)
{
    /* the codes the prefix's strings have: in a fresh dictionary all it
    ** holds; in one an earlier run of the process filled (the input cache's),
    ** those the same program's strings got then, below its own strings */
    if (top > x->prefix) x->prefix = top;
    x->prefix_hash = rf_rt_dict_prefix_hash(dict, x->prefix);
}

/* The largest of n codes: a loop the compiler vectorizes (every run scans
** a share's string columns, hundreds of millions of codes at SF 100). */
static uint32_t max_code(const uint32_t *codes, int64_t n)
{
    uint32_t m = 0;
    for (int64_t i = 0; i < n; i++) m = codes[i] > m ? codes[i] : m;
    return m;
}

void rf_rt_dist_codes_input(rf_rt_dist *x, int32_t var, const rf_rt_rel *r, const uint8_t *read)
{
    if (!x->local || var < 0 || var >= x->p->nvars || !r->cols) return;
    /* only the columns the program reads: the others go nowhere (a share
    ** holds them as the cache does, and at SF 100 scanning lineitem's
    ** unread strings cost a rank about a second every run) */
    enum { CHUNK = 1 << 16 };
    for (int32_t c = 0; c < r->ncols && !(x->local[var] & 1); c++) {
        if (r->types[c] != RF_TYPE_STRING || !r->cols[c] || (read && !read[c])) continue;
        const uint32_t *codes = r->cols[c];
        for (int64_t i = 0; i < r->nrows; i += CHUNK)
            if ((int64_t)max_code(codes + i, r->nrows - i < CHUNK ? r->nrows - i : CHUNK) >= x->prefix) {
                x->local[var] |= 1;
                break;
            }
    }
}

/* Rank-local codes from the inputs (bit 1) and computed strings (bit 2)
** through the kernels that copy them (every rank alike: the program). */
static void spread_local(rf_rt_dist *x)
{
    const rf_hir_program *p = x->p;
    for (int changed = 1; changed;) {
        changed = 0;
        for (int32_t b = 0; b < p->nblocks; b++)
            for (int32_t j = 0; j < p->blocks[b]->nkernels; j++) {
                const rf_hir_kernel *k = p->blocks[b]->kernels[j];
                if (k->out < 0 || k->out >= p->nvars || (x->local[k->out] & 4) || !has_strings(p->vars[k->out]))
                    continue;
                int any = x->local[k->out] != 0;
                for (int32_t i = 0; i < k->nin && !any; i++)
                    any = k->in[i] >= 0 && k->in[i] < p->nvars && x->local[k->in[i]];
                if (any) {
                    x->local[k->out] |= 4;
                    changed = 1;
                }
            }
    }
}

rf_status rf_rt_dist_codes_agree(rf_rt_dist *x, rf_rt_dict *dict, rf_diags *d)
{
    const rf_hir_program *p = x->p;
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all || !x->local) {
        free(all);
        return RF_ENOMEM;
    }
    /* the prefix, and which inputs with strings hold codes past it here (by
    ** their order among such inputs; past what the vote holds: all do) */
    int64_t v[RF_RT_DIST_VOTE_N] = {(int64_t)(x->prefix_hash >> 1), x->prefix};
    int32_t nbits = (RF_RT_DIST_VOTE_N - 2) * 63, ord = 0;
    for (int32_t var = 0; var < p->nvars; var++) {
        if (p->vars[var]->role != RF_HIR_ROLE_INPUT || !has_strings(p->vars[var])) continue;
        if (ord < nbits && (x->local[var] & 1)) v[2 + ord / 63] |= INT64_C(1) << (ord % 63);
        ord++;
    }
    rf_status st = dist_vote(x, 0, v, all, "the ranks' string codes", d);
    int same = 1;
    for (int r = 0; r < x->size && !st; r++) same &= all[r].v[0] == v[0] && all[r].v[1] == v[1];
    ord = 0;
    for (int32_t var = 0; var < p->nvars && !st; var++) {
        if (p->vars[var]->role != RF_HIR_ROLE_INPUT || !has_strings(p->vars[var])) continue;
        int any = ord >= nbits;
        for (int r = 0; r < x->size && !any; r++) any = (all[r].v[2 + ord / 63] >> (ord % 63)) & 1;
        if (any) x->local[var] |= 1;
        else x->local[var] &= (uint8_t)~1;
        ord++;
    }
    free(all);
    if (st) return st;
    x->codes_same = same;
    if (!same) {
        /* every string is a rank's own: moved as bytes, as before */
        for (int32_t var = 0; var < p->nvars; var++) x->local[var] = (uint8_t)(has_strings(p->vars[var]) ? 1 : 0);
        return RF_OK;
    }
    rf_rt_dict_set_shared(dict, x->prefix);
    spread_local(x);
    return RF_OK;
}

int64_t dist_codes_own_len(const rf_rt_dist *x)
{
    int64_t lo = x->dict ? rf_rt_dict_shared(x->dict) : 0, n = x->dict ? rf_rt_dict_count(x->dict) - lo : 0;
    if (n <= 0) return 0;
    /* evenly spaced codes: a text share's, a plain column's, received ones */
    int64_t step = n / 64 + 1, sum = 0, seen = 0;
    for (int64_t c = lo; c < lo + n; c += step, seen++) {
        int64_t len = 0;
        rf_rt_dict_str(x->dict, (uint32_t)c, &len);
        sum += len;
    }
    return sum / seen;
}

int rf_rt_dist_codes_shared(const rf_rt_dist *x, int32_t var)
{
    return x && x->local && x->codes_same && var >= 0 && var < x->p->nvars && !x->local[var];
}

int rf_rt_dist_codes_checkable(const rf_rt_dist *x)
{
    return x && x->local && x->codes_same && x->dict && rf_rt_dict_shared(x->dict) > 0;
}

int64_t rf_rt_dist_codes_limit(const rf_rt_dist *x) { return x && x->dict ? rf_rt_dict_shared(x->dict) : 0; }

rf_status rf_rt_dist_codes_check(rf_rt_dist *x, int failed, int own, int *none, rf_diags *d)
{
    *none = 0;
    rf_rt_dist_vote *all = rf_calloc((size_t)x->size, sizeof *all);
    if (!all) return RF_ENOMEM;
    int64_t v[RF_RT_DIST_VOTE_N] = {own};
    rf_status st = dist_vote(x, failed, v, all, "the ranks' string codes of a move", d);
    int any = 0;
    for (int r = 0; r < x->size && !st; r++) any |= all[r].v[0] != 0;
    free(all);
    if (st) return st;
    x->stat.str_checked++;
    x->stat.str_checked_shared += !any;
    *none = !any;
    return RF_OK;
}

void rf_rt_dist_codes_note(const rf_rt_dist *x, const rf_rt_rankstat *stats, char *buf, size_t n)
{
    int64_t coded = 0, bytes = 0;
    for (int r = 0; r < x->size && stats; r++) coded += stats[r].str_coded, bytes += stats[r].str_bytes;
    if (!x->local) {
        snprintf(buf, n, "per rank (not compared)");
    } else if (!x->codes_same) {
        snprintf(buf, n, "per rank: the ranks' dictionaries began differently (strings moved as bytes)");
    } else {
        int32_t own = 0, with = 0;
        for (int32_t var = 0; var < x->p->nvars; var++)
            if (has_strings(x->p->vars[var])) with++, own += x->local[var] != 0;
        /* (the checks are votes: every rank counts alike) */
        int64_t checked = stats ? stats[0].str_checked : 0, none = stats ? stats[0].str_checked_shared : 0;
        snprintf(buf, n,
                 "%lld shared by every rank (the program's constants and the database's dictionaries); "
                 "%lld moves of relations with strings sent codes only, %lld sent bytes (all ranks); %d of %d "
                 "variables with strings may hold a rank's own strings; %lld moves of such checked the ranks' rows, "
                 "%lld held shared codes only and moved on the device",
                 (long long)x->prefix, (long long)coded, (long long)bytes, (int)own, (int)with, (long long)checked,
                 (long long)none);
    }
}
