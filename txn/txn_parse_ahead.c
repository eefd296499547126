/*
** txn/txn_parse_ahead.c: a transaction file parsed ahead of its
** transaction, on the caller's thread while the transaction before it runs
** (`redfox exec --each`), and taken by its transaction.
**
** Owns: rf_txn_parsed: one file's updates parsed for one program into each
** base predicate's columns, as txn_parse.c leaves them in a transaction,
** but with its strings not interned yet and a bad line only located. What
** the parse reads is the program alone (its predicates, which of them are
** base, their columns' types) and the text: nothing of the database or of
** the transaction before, which may change both meanwhile. What depends on
** them stays in the transaction that takes the parse: the strings interned
** into the dictionary the transaction before left (in file order, so the
** codes are those a parse in the transaction gives), a bad line's message
** and error (reported only when its transaction applies the file: a bad
** file after a transaction that fails is never what the user sees), the
** key checks and the resolution by key (txn_batch.c, txn_kset.c).
*/
#include "rf_cpu.h"
#include "rf_sys.h"
#include "rf_txn.h"

#include <stdlib.h>
#include <string.h>

struct rf_txn_parsed {
    const rf_fe_program *fe; /* the program it was parsed for */
    int32_t file;            /* the file's place in its batch */
    int32_t npreds;
    rf_txn_ops **ops;        /* [npreds]: t->preds[i]'s updates from this file (NULL: none, or taken) */
    rf_txn_strings *strings;
    int64_t bad;             /* the first bad line's byte offset; -1: none */
    int taken;
    double seconds;          /* the parse's time on its thread */
};

int rf_txn_pred_has_rows(const rf_fe_pred *q) { return q->input_file || (q->nrules && !q->aux); }

rf_txn_parsed *rf_txn_parse_ahead(const rf_fe_program *fe, int threads, int32_t file, const char *text, int64_t len)
{
    double t0 = rf_now();
    rf_txn_parsed *pp = rf_calloc(1, sizeof *pp);
    rf_txn t;
    memset(&t, 0, sizeof t);
    t.fe = fe;
    t.threads = threads > 0 ? threads : rf_online_cpus();
    t.preds = rf_calloc((size_t)fe->npreds + 1, sizeof *t.preds);
    rf_cpu_pool *pool = NULL;
    rf_status st = pp && t.preds ? rf_cpu_pool_new(t.threads, &pool) : RF_ENOMEM;
    /* the preds of the transaction's own rf_txn, in its order (txn_exec.c) */
    for (int32_t i = 0; !st && i < fe->npreds; i++) {
        if (!rf_txn_pred_has_rows(fe->preds[i])) continue;
        rf_txn_pred *p = &t.preds[t.npreds++];
        p->fe = fe->preds[i];
        p->base = fe->preds[i]->input_file != NULL;
    }
    int64_t bad = -1;
    if (!st) st = rf_txn_parse_pending(&t, pool, file, text, len, &bad, &pp->strings);
    if (!st || st == RF_EUSER) {
        pp->ops = rf_calloc((size_t)t.npreds + 1, sizeof *pp->ops);
        if (!pp->ops) st = RF_ENOMEM;
        for (int32_t i = 0; pp->ops && i < t.npreds; i++) {
            pp->ops[i] = t.preds[i].ops;
            t.preds[i].ops = NULL;
        }
        if (pp->ops && st == RF_EUSER) st = RF_OK;
    }
    for (int32_t i = 0; t.preds && i < t.npreds; i++) rf_txn_ops_free(t.preds[i].ops);
    free(t.preds);
    rf_cpu_pool_free(pool);
    if (st) { /* (its transaction parses the file itself) */
        rf_txn_parsed_free(pp);
        return NULL;
    }
    pp->fe = fe;
    pp->file = file;
    pp->npreds = t.npreds;
    pp->bad = bad;
    pp->seconds = rf_now() - t0;
    return pp;
}

void rf_txn_parsed_free(rf_txn_parsed *pp)
{
    if (!pp) return;
    for (int32_t i = 0; pp->ops && i < pp->npreds; i++) rf_txn_ops_free(pp->ops[i]);
    free(pp->ops);
    rf_txn_strings_free(pp->strings);
    free(pp);
}

double rf_txn_parsed_seconds(const rf_txn_parsed *pp) { return pp ? pp->seconds : 0; }

int rf_txn_parsed_usable(const rf_txn_parsed *pp, const rf_txn *t, int32_t file)
{
    if (!pp || pp->taken || pp->fe != t->fe || pp->file != file || pp->npreds != t->npreds) return 0;
    for (int32_t i = 0; i < t->npreds; i++)
        if (pp->ops[i] && !t->preds[i].base) return 0;
    return 1;
}

rf_status rf_txn_parsed_take(rf_txn *t, rf_txn_parsed *pp, int64_t *bad)
{
    *bad = -1;
    if (!rf_txn_parsed_usable(pp, t, pp ? pp->file : -1)) return RF_EINTERNAL;
    pp->taken = 1;
    int64_t *first = rf_calloc((size_t)t->npreds + 1, sizeof *first);
    if (!first) return RF_ENOMEM;
    rf_status st = RF_OK;
    for (int32_t i = 0; i < t->npreds && !st; i++) {
        if (!t->preds[i].base) continue;
        first[i] = t->preds[i].ops ? t->preds[i].ops->n : 0;
        st = rf_txn_ops_take(&t->preds[i], &pp->ops[i]);
    }
    if (!st) st = rf_txn_strings_intern(t, pp->strings, first);
    free(first);
    if (!st) *bad = pp->bad;
    return st;
}
