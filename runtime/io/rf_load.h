/*
** runtime/io/rf_load.h: the parallel loader of dbgen-style delimited text
** files into typed columns (the input side of `redfox run --data DIR`).
**
** Owns: the loaded columns (rf_rt_texttable) until rf_rt_texttable_free;
** each data / str_off / str_bytes array is one malloc block, so a caller
** may take one over (and free() it) after setting the pointer to NULL.
**
** Format: one record per line, "\n" or "\r\n" line ends, the last line may
** lack its line end; fields separated by the delimiter, no quoting; each
** field is parsed as its column type by common/rf_value.h. A delimiter right
** before the line end (dbgen writes one) is accepted. With header = 1 the
** first line is skipped. An empty file has 0 rows. An empty line is an error
** (missing fields), except in a table of one string column, where it is the
** empty string. An empty last field of a non-string column is reported as
** missing; of a string column it is the empty string ("a|b|" in a table of
** three string columns is ("a", "b", "")). No quoting or escaping: a field
** cannot contain the delimiter.
** Line numbers in errors count every line of the file, header included;
** columns are 1-based byte columns of the offending character (the start of
** the field for errors about the whole value). Past line 2^31-1, where
** rf_loc cannot hold the number, the line goes into the message text.
*/
#ifndef RF_LOAD_H
#define RF_LOAD_H

#include <stdint.h>

#include "rf_common.h"
#include "rf_value.h"

typedef struct rf_rt_textcol {
    rf_type type;
    void *data;       /* int64_t / double / int64_t (decimal) / uint8_t / int32_t (date); strings: NULL */
    int64_t *str_off; /* strings only: nrows+1 offsets into str_bytes */
    char *str_bytes;  /* strings only: concatenated UTF-8 bytes, followed by one NUL */
} rf_rt_textcol;

typedef struct rf_rt_texttable {
    int64_t nrows;
    int32_t ncols;
    rf_rt_textcol *cols;
} rf_rt_texttable;

typedef struct rf_rt_load_opts {
    char delimiter; /* 0 means '|'; '\n' and '\r' are refused */
    int header;     /* 1: skip the first line */
    int threads;    /* > 0: split into exactly this many chunks (at most 256);
                       <= 0: one per online CPU, at most one per 8 MiB of text */
} rf_rt_load_opts;

/* Loads path into *out (zeroed first; left empty on failure). o may be NULL
** for the defaults. Data errors go to d as "file:line:col: expected a decimal,
** found \"12.3x4\": unexpected character", at most 5 of them, the earliest
** lines of the file whatever the thread count; loc.file names path (the
** diagnostics keep their own copy). Returns RF_OK, RF_EUSER (bad data), RF_EIO (the file
** cannot be read), RF_ENOMEM, or RF_EUSAGE (bad arguments). Results do not
** depend on the thread count. */
rf_status rf_rt_load_text(const char *path, const rf_type *types, int32_t ncols,
                          const rf_rt_load_opts *o, rf_rt_texttable *out, rf_diags *d);

/* The same for text already in memory (streaming readers: `redfox import`
** reads a file a block of whole lines at a time, `tpch gen --format db` parses
** the generator's rows): data[0..size) is parsed as a file would be, name is
** the file that errors name, and first_line the line number of data's first
** line (header applies to that line). data is only read. */
rf_status rf_rt_load_mem(const char *name, const char *data, int64_t size, int64_t first_line, const rf_type *types,
                         int32_t ncols, const rf_rt_load_opts *o, rf_rt_texttable *out, rf_diags *d);

/* Frees every array; safe on a zeroed or already freed table. */
void rf_rt_texttable_free(rf_rt_texttable *t);

#endif
