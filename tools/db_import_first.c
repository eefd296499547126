/*
** tools/db_import_first.c: the error a failed `redfox import` reports.
**
** Owns: which input's error that is. The import reads its files the largest
** first (a table's end overlaps the next file's parsing), but a text run
** (`redfox run --data DIR`) reads its inputs in the program's order and
** stops at the first bad one: of two bad files, the import would name the
** larger. After a failure, the tables not known good are read again as a
** run reads them (rf_rt_load_input: the loader, the key and functional
** dependency checks), in the program's order, and the first that fails
** gives the error, the run's own; the same whatever the threads or the
** order the import took. A pipe or FIFO the import never opened (streams
** are read last) is read here too; one it opened is not read again.
*/
#include "db_import.h"

#include "rf_cpu.h"
#include "rf_rt_data.h"
#include "rf_rt_input.h"
#include "rf_sys.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Reads tab's file at path as a run would, discarding the rows. */
static rf_status read_as_run(const rf_import_table *tab, const char *path, rf_cpu_pool *pool, int threads,
                             rf_diags *d)
{
    rf_hir_var v;
    memset(&v, 0, sizeof v);
    v.name = tab->pred;
    v.pred_name = tab->pred;
    v.ncols = tab->ncols;
    v.types = (rf_type *)tab->types;
    v.colnames = (const char **)tab->colnames;
    v.input_file = tab->file;
    v.delimiter = tab->delimiter;
    v.header = tab->header;
    v.input_key = (int32_t *)tab->key;
    v.ninput_key = tab->nkey;
    v.nkeys = tab->nfd;
    rf_rt_dict *dict = rf_rt_dict_new();
    if (!dict) return RF_ENOMEM;
    rf_rt_rel rel;
    memset(&rel, 0, sizeof rel);
    rf_status st = rf_rt_load_input(path, &v, dict, pool, threads, &rel, d);
    rf_rt_rel_free(&rel);
    rf_rt_dict_free(dict);
    return st;
}

rf_status rf_import_first_error(const rf_import_table *tabs, int32_t n, const char *data, const uint8_t *good,
                                const uint8_t *opened, int threads, rf_diags *d, int64_t count, int64_t nerrors,
                                rf_status st)
{
    if (threads <= 0) threads = rf_online_cpus();
    rf_cpu_pool *pool = NULL;
    rf_status pst = rf_cpu_pool_new(threads, &pool);
    if (pst) return pst;
    rf_status out = st;
    for (int32_t i = 0; i < n; i++) {
        if (good[i]) continue;
        char *path = rf_sprintf("%s/%s", data, tabs[i].file);
        if (!path) {
            out = RF_ENOMEM;
            break;
        }
        /* a pipe or FIFO that the import opened was read once: not again
        ** (the import's own error stands where no file before it fails);
        ** one whose turn never came (streams go last: their size is
        ** unknown) is unread, and read now as the run reads it */
        struct stat sb;
        int stream = opened[i] && stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode);
        rf_diags rd;
        rf_diags_init(&rd);
        rf_status rst = stream ? RF_OK : read_as_run(&tabs[i], path, pool, threads, &rd);
        free(path);
        if (rst == RF_ENOMEM) {
            rf_diags_free(&rd);
            out = RF_ENOMEM;
            break;
        }
        if (rst) {
            rf_diags_truncate(d, count, nerrors);
            for (int64_t k = 0; k < rd.count; k++) rf_diag_add(d, rd.items[k].sev, rd.items[k].loc, "%s", rd.items[k].msg);
            rf_diags_free(&rd);
            out = rst;
            break;
        }
        rf_diags_free(&rd);
    }
    rf_cpu_pool_free(pool);
    return out;
}
