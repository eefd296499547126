/*
** runtime/io/rf_load_file.h: the loader's file in memory (inside
** runtime/io; rf_load.h is the loader's interface).
*/
#ifndef RF_LOAD_FILE_H
#define RF_LOAD_FILE_H

#include "rf_load.h"

typedef struct rf_rt_mapped {
    char *data;
    int64_t size;
    int is_mmap; /* 1 mapped, 0 read into a malloc'd block, -1 the caller's memory */
    int guard;   /* its rf_rt_map_guard_add slot (0: none) */
} rf_rt_mapped;

/* Maps path (a regular file) or reads it whole (anything else; o->progress,
** where set, hears "reading" and the bytes read so far). Errors name the
** file, and o->pred where set. */
rf_status rf_rt_file_map(const char *path, const rf_rt_load_opts *o, rf_rt_mapped *m, rf_diags *d);

/* Releases what rf_rt_file_map gave (nothing for the caller's memory). */
void rf_rt_file_unmap(rf_rt_mapped *m);

#endif
