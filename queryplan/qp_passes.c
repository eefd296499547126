/*
** queryplan/qp_passes.c: the pass table and the pass driver.
**
** Owns: the order in which rf_qp_optimize runs the passes, and what happens
** around each one (compaction of the relation table, re-inference of the
** properties, verification). The order matters: folding first exposes
** constant filters; selection push-down before join ordering gives the
** join order the filtered estimates; computed keys (keyjoin) come after
** join ordering, which leaves the cross products of a chain, where such
** keys are, at its top; common subexpressions are found
** before projection push-down makes equal scans differ in their columns;
** hoisting moves commands in their final form, and before partial
** aggregates, so that an aggregate moved out of a loop may be split;
** dead relations go last so that names are renumbered once.
*/
#include "qp_internal.h"

static const rf_qp_pass passes[] = {
    {"fold", "constant folding; filters that fold to true go, to false make the command a clear", rf_qp_pass_fold},
    {"select", "selection push-down: one-sided filters move to the scans, equalities become join keys",
     rf_qp_pass_select},
    {"joinorder", "greedy join ordering from cardinality estimates, avoiding cross products", rf_qp_pass_joinorder},
    {"keyjoin", "computed join keys: an equality of values computed from each side of a join becomes its key",
     rf_qp_pass_keyjoin},
    {"cse", "common subexpressions: identical commands over identical inputs in a block computed once",
     rf_qp_pass_cse},
    {"project", "projection push-down: columns nobody reads are dropped where they are made", rf_qp_pass_project},
    {"lftj", "worst-case-optimal joins: a cyclic chain of joins becomes one leapfrog triejoin", rf_qp_pass_lftj},
    {"unique", "dedupes of relations already known to be duplicate-free are dropped", rf_qp_pass_unique},
    {"hoist", "loop-invariant commands: what a loop reads but never writes is computed once, before it",
     rf_qp_pass_hoist},
    {"partagg", "partial aggregates: each rank groups its own rows first, then the parts are combined",
     rf_qp_pass_partagg},
    {"dead", "dead relation elimination: results nobody needs for an output are removed", rf_qp_pass_dead},
};

const rf_qp_pass *rf_qp_passes(int32_t *count)
{
    *count = (int32_t)RF_ARRAY_LEN(passes);
    return passes;
}

static rf_status run_one(rf_qp_program *p, const rf_qp_pass *ps, rf_diags *d)
{
    if (p->oom) return RF_ENOMEM;
    rf_status st = ps->run(p, d);
    if (st) return st;
    if (p->oom) return RF_ENOMEM;
    qp_compact_rels(p);
    rf_qp_infer(p);
    if (p->oom) return RF_ENOMEM;
    int64_t before = d->nerrors;
    st = rf_qp_verify(p, d);
    if (st && d->nerrors > before)
        rf_diag_add(d, RF_SEV_NOTE, (rf_loc){p->fe ? p->fe->file : NULL, 0, 0}, "the plan was broken by the pass `%s`",
                    ps->name);
    return st;
}

rf_status rf_qp_run_pass(rf_qp_program *p, const char *name, rf_diags *d)
{
    for (int64_t i = 0; i < RF_ARRAY_LEN(passes); i++)
        if (strcmp(passes[i].name, name) == 0) return run_one(p, &passes[i], d);
    rf_buf b;
    rf_buf_init(&b);
    for (int64_t i = 0; i < RF_ARRAY_LEN(passes); i++) rf_buf_printf(&b, "%s%s", i ? ", " : "", passes[i].name);
    rf_loc nowhere = {NULL, 0, 0};
    rf_error(d, nowhere, "unknown query-plan pass `%s` (known: %s)", name, rf_buf_cstr(&b));
    rf_buf_free(&b);
    return RF_EUSAGE;
}

rf_status rf_qp_optimize(rf_qp_program *p, rf_diags *d)
{
    for (int64_t i = 0; i < RF_ARRAY_LEN(passes); i++) {
        rf_status st = run_one(p, &passes[i], d);
        if (st) return st;
    }
    return RF_OK;
}
