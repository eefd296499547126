/*
** common/test_file.c: unit tests of rf_file.h, the write-aside protocol.
**
** Owns: checks that a committed file has the new contents, an aborted one
** leaves the old file and no temporary, a link is refused and its target
** untouched, a device is written in place with the system's reason on
** failure (/dev/full), and the folder lock excludes a second holder.
*/
#include "rf_file.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rf_test_check.h"
#include "rf_test_folder.h"

/* Files in dir other than the named ones. */
static int others(const char *a, const char *b, const char *c)
{
    DIR *dd = opendir(dir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(dd))) {
        const char *s = e->d_name;
        if (!strcmp(s, ".") || !strcmp(s, "..")) continue;
        if ((a && !strcmp(s, a)) || (b && !strcmp(s, b)) || (c && !strcmp(s, c))) continue;
        fprintf(stderr, "unexpected file %s\n", s);
        n++;
    }
    closedir(dd);
    return n;
}

static int has_error(const rf_diags *d, const char *text)
{
    for (int64_t i = 0; i < d->count; i++)
        if (strstr(d->items[i].msg, text)) return 1;
    return 0;
}

int main(void)
{
    test_folder_make("rf_test_file");
    rf_diags d;
    rf_diags_init(&d);
    rf_file_out f;

    /* a commit replaces the old contents; nothing else is left */
    spit(path_in("a.csv"), "old\n");
    CHECK(rf_file_out_open(&f, path_in("a.csv"), &d) == RF_OK);
    CHECK(rf_file_out_write(&f, "new ", 4) == RF_OK);
    CHECK(rf_file_out_write(&f, "text\n", 5) == RF_OK);
    char *s = slurp(path_in("a.csv"));
    CHECK(s && !strcmp(s, "old\n")); /* untouched until the rename */
    free(s);
    CHECK(rf_file_out_commit(&f, &d) == RF_OK);
    rf_file_out_abort(&f); /* a no-op after the commit */
    s = slurp(path_in("a.csv"));
    CHECK(s && !strcmp(s, "new text\n"));
    free(s);
    CHECK(others("a.csv", NULL, NULL) == 0);

    /* an abort keeps the old file and removes the temporary */
    CHECK(rf_file_out_open(&f, path_in("a.csv"), &d) == RF_OK);
    CHECK(rf_file_out_write(&f, "partial", 7) == RF_OK);
    CHECK(rf_file_out_close(&f, &d) == RF_OK);
    rf_file_out_abort(&f);
    rf_file_out_abort(&f);
    s = slurp(path_in("a.csv"));
    CHECK(s && !strcmp(s, "new text\n"));
    free(s);
    CHECK(others("a.csv", NULL, NULL) == 0);

    /* a link is refused and its target untouched */
    spit(path_in("target"), "keep\n");
    CHECK(symlink(path_in("target"), path_in("link.csv")) == 0);
    CHECK(rf_file_out_open(&f, path_in("link.csv"), &d) == RF_EIO);
    CHECK(has_error(&d, "symbolic link"));
    rf_file_out_abort(&f);
    s = slurp(path_in("target"));
    CHECK(s && !strcmp(s, "keep\n"));
    free(s);
    struct stat sb;
    CHECK(lstat(path_in("link.csv"), &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(others("a.csv", "target", "link.csv") == 0);
    unlink(path_in("link.csv"));
    unlink(path_in("target"));
    rf_diags_free(&d);
    rf_diags_init(&d);

    /* a folder is not a file */
    CHECK(rf_file_out_open(&f, dir, &d) == RF_EIO);
    CHECK(has_error(&d, strerror(EISDIR)));
    rf_file_out_abort(&f);

    /* devices are written in place; a full one says so */
    CHECK(rf_file_out_open(&f, "/dev/null", &d) == RF_OK);
    CHECK(rf_file_out_write(&f, "x", 1) == RF_OK);
    CHECK(rf_file_out_commit(&f, &d) == RF_OK);
    rf_file_out_abort(&f);
    if (access("/dev/full", W_OK) == 0) {
        rf_diags_free(&d);
        rf_diags_init(&d);
        CHECK(rf_file_out_open(&f, "/dev/full", &d) == RF_OK);
        CHECK(rf_file_out_write(&f, "x", 1) == RF_EIO);
        CHECK(rf_file_out_commit(&f, &d) == RF_EIO);
        CHECK(has_error(&d, strerror(ENOSPC)));
        rf_file_out_abort(&f);
    }

    /* a missing folder: the reason, and no file anywhere */
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(rf_file_out_open(&f, path_in("nowhere/x.csv"), &d) == RF_EIO);
    CHECK(has_error(&d, strerror(ENOENT)));
    rf_file_out_abort(&f);

    /* the lock: a second holder finds it busy until the first lets go */
    int l1, b1, l2, b2;
    CHECK(rf_file_lock_try(dir, &l1, &b1, &d) == RF_OK && l1 >= 0 && b1 < 0);
    CHECK(rf_file_lock_try(dir, &l2, &b2, &d) == RF_OK && l2 < 0 && b2 >= 0);
    rf_file_unlock(l1);
    CHECK(rf_file_lock_wait(dir, b2, &d) == RF_OK);
    rf_file_unlock(b2);
    CHECK(others("a.csv", RF_FILE_LOCK_NAME, NULL) == 0);

    char *dn = rf_file_dirname("x.csv");
    CHECK(dn && !strcmp(dn, "."));
    free(dn);
    dn = rf_file_dirname("/x");
    CHECK(dn && !strcmp(dn, "/"));
    free(dn);
    dn = rf_file_dirname("a/b/c");
    CHECK(dn && !strcmp(dn, "a/b"));
    free(dn);

    /* a cache entry read bounded: regular files only, never past max */
    char *data = NULL;
    int64_t len = -1;
    const char *why = NULL;
    spit(path_in("c.txt"), "0123456789");
    CHECK(rf_read_file_bounded(path_in("c.txt"), 10, &data, &len, &why) == RF_OK && len == 10 && data &&
          !strcmp(data, "0123456789"));
    free(data);
    CHECK(rf_read_file_bounded(path_in("c.txt"), 9, &data, &len, &why) == RF_EIO && !data && why == RF_READ_TOO_LARGE);
    CHECK(rf_read_file_bounded(path_in("none"), 9, &data, &len, &why) == RF_EIO && why == RF_READ_ABSENT);
    CHECK(rf_read_file_bounded(dir, 1 << 20, &data, &len, &why) == RF_EIO && why == RF_READ_NOT_REGULAR);
    CHECK(mkfifo(path_in("fifo"), 0600) == 0); /* no writer: a blocking open would wait for ever */
    CHECK(rf_read_file_bounded(path_in("fifo"), 1 << 20, &data, &len, &why) == RF_EIO && why == RF_READ_NOT_REGULAR);
    if (access("/dev/zero", R_OK) == 0)
        CHECK(rf_read_file_bounded("/dev/zero", 1 << 20, &data, &len, &why) == RF_EIO && why == RF_READ_NOT_REGULAR);
    spit(path_in("e.txt"), "");
    CHECK(rf_read_file_bounded(path_in("e.txt"), 0, &data, &len, &why) == RF_OK && len == 0 && data && !data[0]);
    free(data);
    unlink(path_in("c.txt"));
    unlink(path_in("e.txt"));
    unlink(path_in("fifo"));

    unlink(path_in("a.csv"));
    unlink(path_in(RF_FILE_LOCK_NAME));
    rmdir(dir);
    rf_diags_free(&d);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures != 0;
}
