/*
** common/rf_test_folder.h: the scratch folder of the unit tests of files
** (common/test_file.c, common/test_file_renames.c).
**
** Owns: the folder a test works in (dir: made by test_folder_make under
** $TMPDIR or /tmp, named for the test and its process; the test empties
** and removes it), the path of a file in it (path_in: four at a time, for
** calls that take several), and writing and reading a file's whole text
** (spit, slurp). Included once by each test program, after
** rf_test_check.h, as that header is.
*/
#ifndef RF_TEST_FOLDER_H_INTERNAL
#define RF_TEST_FOLDER_H_INTERNAL

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rf_file.h"
#include "rf_test_check.h"

static char dir[256];

static inline void test_folder_make(const char *name)
{
    snprintf(dir, sizeof dir, "%s/%s.%ld", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name, (long)getpid());
    CHECK(mkdir(dir, 0777) == 0);
}

static inline char *path_in(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* The file's text (malloc'd), NULL where it cannot be read. */
static inline char *slurp(const char *p)
{
    char *data = NULL;
    int64_t len;
    const char *why;
    if (rf_read_file(p, &data, &len, &why)) return NULL;
    return data;
}

static inline void spit(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
}

#endif
