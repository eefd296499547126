/*
** tests/fuzz/fuzz_load.c: libFuzzer target for the text data reader. The
** first byte picks the column types (up to 6 columns, every type), the
** second the header flag and the delimiter ('|' or ','), the rest is the
** file (quotes included); it must load or be rejected with located errors,
** identically with 1 and 3 threads.
*/
#include "rf_load.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static rf_status load(const char *path, const rf_type *types, int32_t n, int threads, int header, char delim,
                      rf_rt_texttable *t, rf_diags *d)
{
    rf_rt_load_opts o = {.delimiter = delim, .header = header, .threads = threads};
    return rf_rt_load_text(path, types, n, &o, t, d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    rf_type types[6];
    int32_t n = 1 + data[0] % 6;
    for (int32_t i = 0; i < n; i++) types[i] = (rf_type)((data[0] / 6 + (unsigned)i * (data[1] % 7 + 1)) % 6);
    int header = data[1] >> 7;
    char delim = data[1] & 0x40 ? ',' : '|';
    int fd = memfd_create("fuzz_load", 0);
    if (fd < 0) return 0;
    if (write(fd, data + 2, size - 2) != (ssize_t)(size - 2)) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    rf_rt_texttable a, b;
    rf_diags da, db;
    rf_diags_init(&da);
    rf_diags_init(&db);
    rf_status sa = load(path, types, n, 1, header, delim, &a, &da);
    rf_status sb = load(path, types, n, 3, header, delim, &b, &db);
    /* the thread count must change nothing */
    if (sa != sb || a.nrows != b.nrows || da.count != db.count || !a.lines != !b.lines) abort();
    if (a.lines && memcmp(a.lines, b.lines, (size_t)a.nrows * sizeof *a.lines)) abort();
    for (int64_t i = 0; i < da.count; i++)
        if (strcmp(da.items[i].msg, db.items[i].msg) || da.items[i].loc.line != db.items[i].loc.line ||
            da.items[i].loc.col != db.items[i].loc.col)
            abort();
    if (sa == RF_OK)
        for (int32_t c = 0; c < n; c++) {
            if (types[c] == RF_TYPE_STRING) {
                if (memcmp(a.cols[c].str_off, b.cols[c].str_off, (size_t)(a.nrows + 1) * sizeof(int64_t)) ||
                    memcmp(a.cols[c].str_bytes, b.cols[c].str_bytes, (size_t)a.cols[c].str_off[a.nrows]))
                    abort();
            } else if (a.nrows && memcmp(a.cols[c].data, b.cols[c].data, (size_t)a.nrows * (size_t)rf_val_type_size(types[c]))) {
                abort();
            }
        }
    rf_rt_texttable_free(&a);
    rf_rt_texttable_free(&b);
    rf_diags_free(&da);
    rf_diags_free(&db);
    close(fd);
    return 0;
}
