/*
** bench/txn/tpcb_gen.c: the data of the TPC-B-style benchmark
** (bench/txn/tpcb/README.md), deterministic from a seed.
**
** Owns: the bank at a scale (BRANCHES branches, 10 tellers and
** ACCOUNTS accounts per branch, opening balances), a batch of N TPC-B
** transactions, and the end state the batch must leave, computed here
** independently of redfox and DuckDB:
**   tpcb_gen OUTDIR BRANCHES ACCOUNTS N [SEED [BATCHES]]
** writes
**   OUTDIR/data/{account,teller,branch,txn}.tbl  the bank before the batch
**                                               (`|`-separated; txn.tbl, the
**                                               history, is empty)
**   OUTDIR/batch.txn   the batch for `redfox exec --batch`: `+txn(i, a, t, b, d).`
**   OUTDIR/batch.tbl   the same rows, `i|a|t|b|d`, for DuckDB (tpcb_duck.c)
**   (with BATCHES K > 1: K successive batches of N instead, batch_1.txn and
**   batch_1.tbl to batch_K.*, the ids running on from one to the next; the
**   end state is the one after the K-th)
**   OUTDIR/expected.txt the state after the batch, in the form of
**                      tpcb.logic's outputs as `redfox exec --format tbl`
**                      prints them
**   OUTDIR/expected_accounts.tbl  every account's balance after it, `a|v`
** A transaction (TPC-B's profile): a teller drawn at random, its branch, an
** account of that branch (85 %) or of another one (15 %, with more than one
** branch), a delta in [-99999, 99999]; it adds the delta to the account's,
** the teller's and the branch's balance and appends a history row.
*/
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TELLERS_PER_BRANCH 10

static uint64_t rng_state;

/* splitmix64: a fixed sequence for a seed on every platform */
static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* uniform in [0, n) (n > 0; the bias of a 64-bit modulus is negligible here) */
static int64_t rng_below(int64_t n) { return (int64_t)(rng_next() % (uint64_t)n); }

static int64_t parse_count(const char *s, const char *what, int64_t lo, int64_t hi)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || !end || *end || end == s || v < lo || v > hi) {
        fprintf(stderr, "tpcb_gen: %s must be an integer in [%lld, %lld], not '%s'\n", what, (long long)lo, (long long)hi,
                s);
        exit(2);
    }
    return (int64_t)v;
}

static FILE *open_out(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "tpcb_gen: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return f;
}

static void close_out(FILE *f, const char *name)
{
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "tpcb_gen: cannot write %s\n", name);
        exit(1);
    }
}

static void make_dir(const char *path)
{
    if (mkdir(path, 0777) && errno != EEXIST) {
        fprintf(stderr, "tpcb_gen: cannot create %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc < 5 || argc > 7) {
        fprintf(stderr, "usage: tpcb_gen OUTDIR BRANCHES ACCOUNTS_PER_BRANCH N [SEED [BATCHES]]\n");
        return 2;
    }
    const char *out = argv[1];
    int64_t nb = parse_count(argv[2], "BRANCHES", 1, 100000);
    int64_t per = parse_count(argv[3], "ACCOUNTS_PER_BRANCH", 1, 10000000);
    int64_t n = parse_count(argv[4], "N", 0, 1000000000);
    rng_state = argc > 5 ? (uint64_t)parse_count(argv[5], "SEED", 0, INT64_MAX) : 1;
    int64_t nbatches = argc > 6 ? parse_count(argv[6], "BATCHES", 1, 10000) : 1;
    int64_t na = nb * per, nt = nb * TELLERS_PER_BRANCH;
    int64_t *abal = calloc((size_t)na + 1, sizeof *abal), *tbal = calloc((size_t)nt + 1, sizeof *tbal);
    int64_t *bbal = calloc((size_t)nb + 1, sizeof *bbal);
    if (!abal || !tbal || !bbal) {
        fprintf(stderr, "tpcb_gen: out of memory\n");
        return 1;
    }
    char data[4096];
    snprintf(data, sizeof data, "%s/data", out);
    make_dir(out);
    make_dir(data);

    /* The opening balances: accounts at random, each branch the sum of its
    ** accounts, split among its tellers (so every consistency condition
    ** holds before the batch). Ids count from 1; account a is of branch
    ** (a - 1) / per + 1, teller t of (t - 1) / 10 + 1. */
    FILE *f = open_out(data, "account.tbl");
    for (int64_t a = 1; a <= na; a++) {
        int64_t b = (a - 1) / per + 1;
        abal[a] = rng_below(100000);
        bbal[b] += abal[a];
        fprintf(f, "%" PRId64 "|%" PRId64 "|%" PRId64 "\n", a, b, abal[a]);
    }
    close_out(f, "account.tbl");
    f = open_out(data, "teller.tbl");
    for (int64_t b = 1; b <= nb; b++) {
        int64_t left = bbal[b];
        for (int64_t k = 0; k < TELLERS_PER_BRANCH; k++) {
            int64_t t = (b - 1) * TELLERS_PER_BRANCH + k + 1;
            tbal[t] = k + 1 < TELLERS_PER_BRANCH ? rng_below(left / 2 + 1) : left;
            left -= tbal[t];
            fprintf(f, "%" PRId64 "|%" PRId64 "|%" PRId64 "\n", t, b, tbal[t]);
        }
    }
    close_out(f, "teller.tbl");
    f = open_out(data, "branch.tbl");
    for (int64_t b = 1; b <= nb; b++) fprintf(f, "%" PRId64 "|%" PRId64 "\n", b, bbal[b]);
    close_out(f, "branch.tbl");
    close_out(open_out(data, "txn.tbl"), "txn.tbl");

    /* The batches, applied here as well (sequentially, as TPC-B states it). */
    for (int64_t k = 1; k <= nbatches; k++) {
        char txn_name[64], tbl_name[64];
        snprintf(txn_name, sizeof txn_name, "batch_%" PRId64 ".txn", k);
        snprintf(tbl_name, sizeof tbl_name, "batch_%" PRId64 ".tbl", k);
        if (nbatches == 1) strcpy(txn_name, "batch.txn"), strcpy(tbl_name, "batch.tbl");
        FILE *txn = open_out(out, txn_name), *tbl = open_out(out, tbl_name);
        for (int64_t i = (k - 1) * n + 1; i <= k * n; i++) {
            int64_t t = rng_below(nt) + 1, b = (t - 1) / TELLERS_PER_BRANCH + 1;
            int64_t ab = b;
            if (nb > 1 && rng_below(100) < 15) {
                ab = rng_below(nb - 1) + 1; /* another branch */
                if (ab >= b) ab++;
            }
            int64_t a = (ab - 1) * per + rng_below(per) + 1;
            int64_t d = rng_below(199999) - 99999;
            abal[a] += d;
            tbal[t] += d;
            bbal[b] += d;
            fprintf(txn, "+txn(%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ").\n", i, a, t, b, d);
            fprintf(tbl, "%" PRId64 "|%" PRId64 "|%" PRId64 "|%" PRId64 "|%" PRId64 "\n", i, a, t, b, d);
        }
        close_out(txn, txn_name);
        close_out(tbl, tbl_name);
    }

    /* The end state, as tpcb.logic's outputs print with --format tbl (in
    ** the order of the program's predicates: teller_balance, violation,
    ** branch_state, account_checksum; each under its column names). */
    f = open_out(out, "expected.txt");
    int64_t *home = calloc((size_t)nb + 1, sizeof *home);
    if (!home) {
        fprintf(stderr, "tpcb_gen: out of memory\n");
        return 1;
    }
    int64_t checksum = 0;
    for (int64_t a = 1; a <= na; a++) {
        home[(a - 1) / per + 1] += abal[a];
        checksum += (a % 1000 + 1) * abal[a];
    }
    fprintf(f, "teller_balance (%" PRId64 " rows)\nt|v\n", nt);
    for (int64_t t = 1; t <= nt; t++) fprintf(f, "%" PRId64 "|%" PRId64 "\n", t, tbal[t]);
    fprintf(f, "\nviolation (0 rows)\nb|w|x\n\nbranch_state (%" PRId64 " row%s)\nb|v|s\n", nb, nb == 1 ? "" : "s");
    for (int64_t b = 1; b <= nb; b++) fprintf(f, "%" PRId64 "|%" PRId64 "|%" PRId64 "\n", b, bbal[b], home[b]);
    fprintf(f, "\naccount_checksum (1 row)\ns\n%" PRId64 "\n", checksum);
    close_out(f, "expected.txt");
    f = open_out(out, "expected_accounts.tbl");
    for (int64_t a = 1; a <= na; a++) fprintf(f, "%" PRId64 "|%" PRId64 "\n", a, abal[a]);
    close_out(f, "expected_accounts.tbl");
    free(home);
    free(abal);
    free(tbal);
    free(bbal);
    return 0;
}
