/*
** runtime/gpu/test_gpu_str.c: unit test of the dictionary's device copy
** (rt_gpu_str.c) on the emulated device: the first copy, extensions that fit
** the slack and ones that outgrow it (the buffers move, by device-to-device
** copies), empty strings, a string longer than the slack, and many codes
** copied by several threads, in one batch or many, a bulk intern's strings
** with the copy's pieces made by a pool of threads; after each sync the device's offsets and bytes
** must be exactly the host dictionary's. Exit 0 on success, 1 with a message.
*/
#include "rf_rt_data.h"
#include "rt_gpu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check(gstr *s, const char *when)
{
    int64_t n = rf_rt_dict_count(s->dict);
    if (s->dd.n != n) {
        fprintf(stderr, "%s: %lld codes on the device, %lld in the dictionary\n", when, (long long)s->dd.n,
                (long long)n);
        return 1;
    }
    uint64_t *off = malloc((size_t)(n + 1) * 8);
    char *bytes = malloc((size_t)s->dd.nbytes + 1);
    if (!off || !bytes) return 1;
    int bad = s->g->ops->d2h(s->g, off, s->dd.off.p, (uint64_t)(n + 1) * 8) != RF_OK ||
              (s->dd.nbytes && s->g->ops->d2h(s->g, bytes, s->dd.bytes.p, s->dd.nbytes) != RF_OK);
    if (!bad && off[0] != 0) bad = 1;
    for (int64_t c = 0; c < n && !bad; c++) {
        int64_t len = 0;
        const char *p = rf_rt_dict_str(s->dict, (uint32_t)c, &len);
        if (off[c + 1] - off[c] != (uint64_t)len || (len && memcmp(bytes + off[c], p, (size_t)len))) {
            fprintf(stderr, "%s: code %lld differs on the device\n", when, (long long)c);
            bad = 1;
        }
    }
    if (!bad && off[n] != s->dd.nbytes) bad = 1;
    free(off);
    free(bytes);
    if (bad) fprintf(stderr, "%s: the device copy is wrong\n", when);
    return bad;
}

static int add(rf_rt_dict *d, const char *tag, int64_t k, int64_t len)
{
    char buf[64];
    uint32_t code;
    if (len < 0) {
        snprintf(buf, sizeof buf, "%s-%lld", tag, (long long)k);
        return rf_rt_dict_intern(d, buf, (int64_t)strlen(buf), &code) != RF_OK;
    }
    char *big = malloc((size_t)len + 1);
    if (!big) return 1;
    for (int64_t i = 0; i < len; i++) big[i] = (char)('a' + (k + i) % 26);
    int r = rf_rt_dict_intern(d, big, len, &code) != RF_OK;
    free(big);
    return r;
}

int main(void)
{
    rf_diags d;
    rf_diags_init(&d);
    gdev g;
    gpool *pool = NULL;
    rf_rt_dict *dict = rf_rt_dict_new();
    if (!dict || rf_gpu_emu_open(&g, &d) || rf_gpool_new(&g, &pool)) {
        fprintf(stderr, "cannot open the emulated device\n");
        return 1;
    }
    g.pool = pool;
    gstr s;
    memset(&s, 0, sizeof s);
    s.g = &g;
    s.pool = pool;
    s.dict = dict;
    s.threads = 4;
    int bad = 0;
    uint32_t code;
    /* an empty dictionary, then the empty string and a few */
    bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "empty");
    bad |= rf_rt_dict_intern(dict, "", 0, &code) != RF_OK;
    for (int64_t k = 0; k < 100 && !bad; k++) bad |= add(dict, "a", k, -1);
    bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "first copy");
    /* within the slack */
    for (int64_t k = 0; k < 10 && !bad; k++) bad |= add(dict, "b", k, -1);
    uint64_t where = s.dd.off.p;
    bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "small extension");
    if (!bad && s.dd.off.p != where) {
        fprintf(stderr, "a small extension moved the offsets\n");
        bad = 1;
    }
    /* beyond the slack of codes (65536) and of bytes (1 MiB): the buffers move;
    ** more than 65536 new codes are copied by several threads */
    for (int64_t k = 0; k < 200000 && !bad; k++) bad |= add(dict, "c", k, -1);
    bad |= add(dict, "long", 3, (int64_t)3 << 20);
    bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "large extension");
    /* a fresh copy in many small batches, several threads each: the bytes
    ** move as the estimate of the room needed changes */
    rf_gpu_dict_free(&s);
    s.batch_codes = 1000;
    bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "copy in batches");
    for (int64_t k = 0; k < 5000 && !bad; k++) bad |= add(dict, "d", k, k % 7 ? -1 : 300);
    bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "extension in batches");
    /* a bulk intern (strings of many lengths, empty ones and repeats among
    ** them), copied with the device's pieces filled by a pool of threads,
    ** in one batch and in batches that cut the pieces elsewhere */
    {
        int64_t nb = 300000;
        int64_t *boff = malloc((size_t)(nb + 1) * sizeof *boff);
        char *bbytes = malloc((size_t)nb * 80);
        uint32_t *bcodes = malloc((size_t)nb * sizeof *bcodes);
        rf_cpu_pool *cpu = NULL;
        bad |= !boff || !bbytes || !bcodes || rf_cpu_pool_new(3, &cpu) != RF_OK;
        int64_t at = 0;
        for (int64_t i = 0; i < nb && !bad; i++) {
            boff[i] = at;
            if (i % 1013 == 0) continue; /* empty */
            int64_t k = i % 97 == 5 ? i - 1 : i, len = (k * 7919) % 70 + 1;
            int w = snprintf(bbytes + at, 24, "e%lld.", (long long)k);
            for (int64_t j = w; j < len; j++) bbytes[at + j] = (char)('A' + (k + j) % 50);
            at += len > w ? len : w;
        }
        if (!bad) boff[nb] = at;
        bad |= !bad && rf_rt_dict_intern_many(dict, boff, bbytes, nb, bcodes, 4) != RF_OK;
        g.cpu = cpu;
        bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "bulk extension, pieces in parallel");
        rf_gpu_dict_free(&s);
        s.batch_codes = 7777;
        bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "bulk copy in batches, pieces in parallel");
        rf_gpu_dict_free(&s);
        s.batch_codes = 0;
        g.cpu = NULL;
        bad |= rf_gpu_dict_sync(&s, 0) != RF_OK || check(&s, "bulk copy in one batch");
        rf_cpu_pool_free(cpu);
        free(boff);
        free(bbytes);
        free(bcodes);
    }
    /* a code above the dictionary's count is a bug of the caller */
    if (!bad && rf_gpu_dict_sync(&s, rf_rt_dict_count(dict) + 1) != RF_EINTERNAL) {
        fprintf(stderr, "a code the dictionary never gave was accepted\n");
        bad = 1;
    }
    rf_gpu_dict_free(&s);
    rf_gpool_free(pool);
    g.ops->close(&g);
    rf_rt_dict_free(dict);
    rf_diags_free(&d);
    if (!bad) printf("ok\n");
    return bad;
}
