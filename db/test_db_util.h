/*
** db/test_db_util.h: what the database's unit tests (test_db.c,
** test_db_narrow.c) share.
**
** Owns: CHECK and its count of failures, has_error_naming (an error whose
** location names a file, and whose message holds a text), flip_byte (one
** byte of a file changed in place) and slurp (a file's bytes). Included once
** by each test program: its definitions are the program's own.
*/
#ifndef RF_DB_TEST_UTIL_H
#define RF_DB_TEST_UTIL_H

#include "rf_db.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rf_test_check.h"

/* d holds an error located in a file whose name contains file, and whose
** message contains text (any message when text is NULL). */
static int has_error_naming(const rf_diags *d, const char *file, const char *text)
{
    for (int64_t i = 0; i < d->count; i++)
        if (d->items[i].sev == RF_SEV_ERROR && d->items[i].loc.file && strstr(d->items[i].loc.file, file) &&
            (!text || strstr(d->items[i].msg, text)))
            return 1;
    return 0;
}

/* The byte at offset at of the file at path, changed in place. */
static void flip_byte(const char *path, long at)
{
    int fd = open(path, O_RDWR);
    unsigned char c;
    if (fd < 0 || pread(fd, &c, 1, at) != 1) {
        CHECK(0);
        if (fd >= 0) close(fd);
        return;
    }
    c ^= 0x10;
    CHECK(pwrite(fd, &c, 1, at) == 1);
    close(fd);
}

/* The bytes of dir/name (NULL when unreadable), *n their count. */
static char *slurp(const char *dir, const char *name, long *n)
{
    char *path = rf_sprintf("%s/%s", dir, name);
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    char *b = NULL;
    *n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0 && (*n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)*n + 1)) != NULL && fread(b, 1, (size_t)*n, f) != (size_t)*n) {
        free(b);
        b = NULL;
    }
    if (f) fclose(f);
    return b;
}

#endif
