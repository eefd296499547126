/*
** common/rf_common.h: the few things every stage shares.
**
** Owns: result codes, source locations, the diagnostic list that every
** library stage appends to (only tools/ prints), an arena allocator for
** IR nodes, a growable byte buffer, and checked allocation helpers.
** Counts and offsets are 64-bit everywhere (int64_t / uint64_t).
*/
#ifndef RF_COMMON_H
#define RF_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RF_VERSION_STRING "0.1.0"

/* Result codes; the CLI maps them to exit statuses (see tools/). */
typedef enum rf_status {
    RF_OK = 0,
    RF_EUSER = 1,     /* an error in the user's program or data */
    RF_EUSAGE = 2,    /* bad command-line usage */
    RF_EINTERNAL = 3, /* a bug or an unexpected system failure */
    RF_ENOMEM = 4,    /* out of host memory (reported as exit 1 with a message) */
    RF_EIO = 5,       /* a file could not be read or written */
    RF_EDEVMEM = 6    /* the GPU's memory is exhausted (the runtime then uses the CPU) */
} rf_status;

/* A position in a source or data file; line and col are 1-based, 0 = unknown. */
typedef struct rf_loc {
    const char *file; /* not owned; outlives the diagnostics that use it */
    int32_t line;
    int32_t col;
} rf_loc;

static inline rf_loc rf_mkloc(const char *file, int32_t line, int32_t col)
{
    rf_loc l = {file, line, col};
    return l;
}

typedef enum rf_severity { RF_SEV_ERROR, RF_SEV_WARNING, RF_SEV_NOTE } rf_severity;

typedef struct rf_diag {
    rf_severity sev;
    rf_loc loc; /* loc.file is an owned copy */
    char *msg;  /* owned */
} rf_diag;

/* A list of diagnostics; stages append, tools/ prints. */
typedef struct rf_diags {
    rf_diag *items;
    int64_t count, cap;
    int64_t nerrors;
    int64_t max_errors; /* stop collecting after this many errors (0 = 1000) */
} rf_diags;

/* Errors rf_diags_print shows; the rest are counted in one line. */
#define RF_DIAGS_SHOWN 20

void rf_diags_init(rf_diags *d);
void rf_diags_free(rf_diags *d);
/* Drops the diagnostics added after d held count of them, nerrors errors
** (a failure that was handled: a request tried again another way). */
void rf_diags_truncate(rf_diags *d, int64_t count, int64_t nerrors);
/* Appends a diagnostic; printf-style message. Never fails (drops on OOM). */
void rf_diag_add(rf_diags *d, rf_severity sev, rf_loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void rf_diag_addv(rf_diags *d, rf_severity sev, rf_loc loc, const char *fmt, va_list ap);
#define rf_error(d, loc, ...) rf_diag_add((d), RF_SEV_ERROR, (loc), __VA_ARGS__)
/* An error that is a bug in redfox, not in the user's program or data. Its
** message starts with RF_INTERNAL_PREFIX, which is how it is told apart once
** copied (from threads, ranks, the library's lists): see rf_diags_status. */
#define RF_INTERNAL_PREFIX "internal error: "
#define rf_internal_error(d, loc, ...) rf_diag_add((d), RF_SEV_ERROR, (loc), RF_INTERNAL_PREFIX __VA_ARGS__)
/* st, or RF_EINTERNAL where st reports the user's error (RF_EUSER) but one of
** d's errors is internal: a bug exits 3, whichever stage noticed it. */
rf_status rf_diags_status(const rf_diags *d, rf_status st);
/* True once max_errors errors were collected: callers may stop early. */
int rf_diags_full(const rf_diags *d);
/* Sorts by file, line, column (stable), so output is deterministic. */
void rf_diags_sort(rf_diags *d);
/* Writes "file:line:col: error: message" lines: every warning and note, the
** first RF_DIAGS_SHOWN errors, then "N more errors" when there were more. */
void rf_diags_print(const rf_diags *d, FILE *out);

/* Checked allocation: abort with a message on exhausted memory is not
** acceptable in libraries, so these return NULL and callers report RF_ENOMEM. */
void *rf_malloc(size_t n);
void *rf_calloc(size_t n, size_t size);
void *rf_realloc(void *p, size_t n);
char *rf_strdup(const char *s);
char *rf_strndup(const char *s, size_t n);
char *rf_sprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *rf_vsprintf(const char *fmt, va_list ap);

/* Arena: bump allocation for IR nodes freed all at once. */
typedef struct rf_arena_block rf_arena_block;
typedef struct rf_arena {
    rf_arena_block *head;
    int64_t bytes; /* total allocated, for statistics */
} rf_arena;

void rf_arena_init(rf_arena *a);
void rf_arena_free(rf_arena *a);
/* Zeroed memory, 16-byte aligned; NULL on exhausted memory. */
void *rf_arena_alloc(rf_arena *a, size_t n);
char *rf_arena_strdup(rf_arena *a, const char *s);
char *rf_arena_strndup(rf_arena *a, const char *s, size_t n);
char *rf_arena_sprintf(rf_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Growable byte buffer for building text and binary images. */
typedef struct rf_buf {
    char *data; /* always NUL-terminated when len > 0 or after rf_buf_cstr */
    int64_t len, cap;
    int oom; /* set once an allocation failed; later appends are no-ops */
} rf_buf;

void rf_buf_init(rf_buf *b);
void rf_buf_free(rf_buf *b);
void rf_buf_append(rf_buf *b, const void *p, int64_t n);
void rf_buf_puts(rf_buf *b, const char *s);
void rf_buf_putc(rf_buf *b, char c);
void rf_buf_printf(rf_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *rf_buf_cstr(rf_buf *b);
/* Moves the contents out (caller frees); the buffer is left empty. */
char *rf_buf_take(rf_buf *b);

/* Growable array of pointers. */
typedef struct rf_ptrvec {
    void **items;
    int64_t count, cap;
} rf_ptrvec;
int rf_ptrvec_push(rf_ptrvec *v, void *p); /* 0 ok, -1 OOM */
void rf_ptrvec_free(rf_ptrvec *v);

/* Reads a whole file; *len excludes the added NUL. RF_EIO on failure with
** errno-based text in *why (static string). */
rf_status rf_read_file(const char *path, char **data, int64_t *len, const char **why);

/* rf_read_file for a cache entry, which anything may have replaced: the
** file only when it is a regular file of at most max bytes. It is opened
** without blocking (a named pipe in an entry's place would block its reader
** for ever) and never read past max + 1 bytes (a device such as /dev/zero
** never ends; a huge file would cost its size in memory). RF_OK with the
** data; else RF_EIO with *why: RF_READ_ABSENT (no such file: errno ENOENT),
** RF_READ_NOT_REGULAR (a folder, named pipe, device or socket),
** RF_READ_TOO_LARGE, or the system's reason (errno-based, static). */
extern const char RF_READ_ABSENT[], RF_READ_NOT_REGULAR[], RF_READ_TOO_LARGE[];
rf_status rf_read_file_bounded(const char *path, int64_t max, char **data, int64_t *len, const char **why);

/* A finite decimal number that is the whole of s: an optional sign, digits
** with an optional fraction and an optional exponent ("1", "0.01", "-2",
** ".5", "1e3"), nothing else: no blanks around it, no hexadecimal (strtod
** reads "0x10" as 16), no inf or nan. 1 with the value in *out, else 0. */
int rf_parse_decimal(const char *s, double *out);

/* A size in bytes that is the whole of s: digits and an optional K, M, G or
** T (powers of 1024, lower case too, an optional B after it: "512M",
** "64mb", "4096"), above 0 and at most 2^62 bytes; no sign, blanks or
** fraction. Every byte-size option and setting reads sizes with it. 1 with
** the size in *out, else 0. */
int rf_parse_bytes(const char *s, int64_t *out);

/* FNV-1a 64-bit hash, for hash tables and cache keys. */
uint64_t rf_hash64(const void *p, size_t n, uint64_t seed);

#define RF_ARRAY_LEN(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

#endif
