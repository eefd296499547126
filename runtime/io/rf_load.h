/*
** runtime/io/rf_load.h: the parallel loader of dbgen-style delimited text
** files into typed columns (the input side of `redfox run --data DIR`).
**
** Owns: the loaded columns (rf_rt_texttable) until rf_rt_texttable_free;
** each data / str_off / str_bytes array is one malloc block, so a caller
** may take one over (and free() it) after setting the pointer to NULL.
**
** Format: RFC 4180 records with a configurable delimiter. One record per
** line, "\n" or "\r\n" line ends, the last line may lack its line end;
** fields separated by the delimiter; each field is parsed as its column type
** by common/rf_value.h. A field that starts with '"' is quoted: it ends at
** the next '"' that is not doubled, must be followed by the delimiter or the
** line end, and its text is what lies between the quotes with each '""' made
** one '"'; delimiters, "\n" and "\r\n" inside quotes are data (a record
** then spans several lines). A '"' inside an unquoted field is an ordinary
** byte. A quote without its closing quote is an error at the opening quote.
** A delimiter right before the line end (dbgen writes one) is accepted.
** With header = 1 the first record is skipped. An empty file has 0 rows.
** A UTF-8 byte order mark (EF BB BF) at the start of the file (of text whose
** first line is line 1) is skipped; line 1's columns count from after it. An
** empty line is an error (missing fields), except in a table of one string
** column, where it is the empty string. An empty last field of a non-string
** column is reported as missing; of a string column it is the empty string
** ("a|b|" in a table of three string columns is ("a", "b", "")). A NUL byte
** in a string field is an error.
** Files without any '"' (dbgen's .tbl files) take the fast path of plain
** line splitting; a file with quotes is split into records by one quote-aware
** pass before the parallel parse.
** When the first record fails to parse and would parse with another common
** delimiter (',' '|' '\t' ';'), or looks like a header (names where the
** types are numbers, dates or booleans), a single error is reported for it,
** with "hint: ..." lines naming the lang:input:delimiter / lang:input:header
** setting to add.
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
    int64_t *lines; /* a file with quotes: the line on which each row starts
                       (a quoted field may span lines); NULL otherwise, where
                       row i is on line i + 1 (+ 1 after a header) */
    int64_t nlines; /* the lines the text spans: its '\n's, plus one for a
                       last line without one (a streaming reader's next
                       first_line, counted by the parallel phases) */
} rf_rt_texttable;

typedef struct rf_rt_load_opts {
    char delimiter; /* 0 means '|'; '\n', '\r' and '"' are refused */
    int header;     /* 1: skip the first line */
    int threads;    /* > 0: split into exactly this many chunks (at most 256);
                       <= 0: one per online CPU, at most one per 8 MiB of text */
    const char *pred; /* the input predicate, named in errors and hints; may be NULL */
    /* NULL, or told on the caller's thread how far the load is: its phase
    ** ("reading": a pipe's bytes as they come, a file's as its lines are
    ** counted; "parsing") and the bytes of the file done of total (0: not
    ** known yet), about every MiB or 65,536 rows */
    void (*progress)(void *ctx, const char *phase, int64_t done, int64_t total);
    void *progress_ctx;
} rf_rt_load_opts;

/* Loads path into *out (zeroed first; left empty on failure). o may be NULL
** for the defaults. Data errors go to d as "file:line:col: expected a decimal,
** found \"12.3x4\": unexpected character", at most 5 of them, the earliest
** lines of the file whatever the thread count; loc.file names path (the
** diagnostics keep their own copy). A file that cannot be opened is an error
** naming its full path (and o->pred). Returns RF_OK, RF_EUSER (bad data), RF_EIO (the file
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

/* path's bytes read whole into *data (malloc'd, *size bytes; the caller
** frees it): for a file that is not regular (a pipe, a FIFO), which can be
** read only once, so that several inputs of one run parse one reading of it
** (rf_rt_load_mem). o->progress, where set, hears "reading" as the bytes
** come. Errors as rf_rt_load_text's for a file that cannot be opened or read. */
rf_status rf_rt_read_whole(const char *path, const rf_rt_load_opts *o, char **data, int64_t *size, rf_diags *d);

/* Part `part` of `nparts` of a file (rf_load_range.c), for a rank that
** reads only its share: bytes [lo, hi) of data, split at line starts
** (part 0 begins at 0, the last ends at the file's end; a part may be
** empty), the '\n' bytes in it, and whether it holds a '"'. The file is
** mapped (only the part's pages are read) or, when it cannot be, read
** whole. Parse it with rf_rt_load_mem(path, data + lo, hi - lo, LINE, ...)
** where LINE is 1 plus the newlines of the parts before it, and with the
** header only for part 0; a file with a '"' in any part may have a quoted
** line end at a bound and must be read whole instead. */
typedef struct rf_rt_textrange {
    char *data;
    int64_t size;
    int is_mmap;
    int guard;   /* (rf_rt_map_guard_add) */
    int64_t lo, hi;
    int64_t newlines;
    int quote;
} rf_rt_textrange;
rf_status rf_rt_text_range(const char *path, const rf_rt_load_opts *o, int part, int nparts, rf_rt_textrange *r,
                           rf_diags *d);
void rf_rt_text_range_free(rf_rt_textrange *r);

/* The error for a file that cannot be opened (errno err): the input
** predicate pred (may be NULL), the full path looked for, the reason, and a
** missing data folder named as such. */
void rf_rt_load_open_error(const char *path, const char *pred, int err, rf_diags *d);

/* Frees every array; safe on a zeroed or already freed table. */
void rf_rt_texttable_free(rf_rt_texttable *t);

/* A mapped text file that another process cuts short while it is read:
** its pages past the new end raise SIGBUS, which killed the process (exit
** 135, an import leaving its temporary folder). A mapping registered here
** has such pages replaced by zero pages instead (the handler maps them),
** so the parse meets NUL bytes, an error, and the reader asks
** rf_rt_map_guard_shrunk to name the cause. rf_rt_map_guard_add returns a
** slot (0: none free, the mapping unguarded), which rf_rt_map_guard_remove
** releases before the mapping goes. A SIGBUS elsewhere keeps its default. */
int rf_rt_map_guard_add(const void *base, int64_t len);
void rf_rt_map_guard_remove(int slot);
/* Did a guarded mapping holding p lose pages to a shrunk file? */
int rf_rt_map_guard_shrunk(const void *p);

#endif
