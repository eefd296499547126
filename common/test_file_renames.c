/*
** common/test_file_renames.c: unit tests of the journal that makes a set of
** renames all or nothing (rf_file.h, common/rf_file_renames.c).
**
** Owns: checks that a journal a writer "killed" after its first rename left
** is finished by rf_file_renames_finish (every file new, the journal gone, a
** note), by rf_file_lock_try and by rf_file_lock_text_folder_shared; that
** finishing twice, or with nothing to do, changes nothing; that a single
** rename writes no journal; and that a damaged journal (its head or end
** missing, a name with a '/', "..", a temporary not named for its file) is
** refused, naming it, with nothing renamed.
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

static int has(const char *p, const char *text)
{
    char *data = slurp(p);
    int same = data && !strcmp(data, text);
    free(data);
    return same;
}

static int has_diag(const rf_diags *d, rf_severity sev, const char *text)
{
    for (int64_t i = 0; i < d->count; i++)
        if (d->items[i].sev == sev && strstr(d->items[i].msg, text)) return 1;
    return 0;
}

static int exists(const char *p)
{
    struct stat sb;
    return lstat(p, &sb) == 0;
}

/* Writes "old" to a.csv, b.csv, c.csv, then "new" aside into files[3]
** (closed, not renamed). */
static void prepare(rf_file_out files[3], rf_diags *d)
{
    const char *names[3] = {"a.csv", "b.csv", "c.csv"};
    for (int i = 0; i < 3; i++) {
        spit(path_in(names[i]), "old\n");
        CHECK(rf_file_out_open(&files[i], path_in(names[i]), d) == RF_OK);
        CHECK(rf_file_out_write(&files[i], "new\n", 4) == RF_OK);
        CHECK(rf_file_out_close(&files[i], d) == RF_OK);
    }
}

static int all(const char *text)
{
    return has(path_in("a.csv"), text) && has(path_in("b.csv"), text) && has(path_in("c.csv"), text);
}

/* A journal of the given text: refused, naming it; nothing renamed. */
static void damaged(const char *text)
{
    rf_diags d;
    rf_diags_init(&d);
    spit(path_in(".a.csv.redfox-1-1.tmp"), "aside\n");
    spit(path_in(RF_FILE_RENAMES_NAME), text);
    CHECK(rf_file_renames_finish(dir, &d) == RF_EUSER);
    CHECK(has_diag(&d, RF_SEV_ERROR, "not a list of renames as redfox writes them"));
    CHECK(d.count > 0 && d.items[0].loc.file && strstr(d.items[0].loc.file, RF_FILE_RENAMES_NAME));
    CHECK(has(path_in(".a.csv.redfox-1-1.tmp"), "aside\n") && exists(path_in(RF_FILE_RENAMES_NAME)));
    unlink(path_in(RF_FILE_RENAMES_NAME));
    unlink(path_in(".a.csv.redfox-1-1.tmp"));
    rf_diags_free(&d);
}

int main(void)
{
    test_folder_make("rf_test_renames");
    rf_diags d;
    rf_diags_init(&d);
    rf_file_out files[3];

    /* killed after the first rename: the journal finishes the others */
    prepare(files, &d);
    CHECK(rf_file_renames_begin(dir, files, 3, &d) == RF_OK);
    CHECK(exists(path_in(RF_FILE_RENAMES_NAME)));
    CHECK(rf_file_out_rename(&files[0], &d) == RF_OK);
    CHECK(has(path_in("a.csv"), "new\n") && has(path_in("b.csv"), "old\n")); /* the mix a kill leaves */
    char *tb = rf_strdup(files[1].tmp), *tc = rf_strdup(files[2].tmp);
    for (int i = 0; i < 3; i++) { /* (the temporaries kept, as a killed writer keeps them) */
        free(files[i].tmp);
        files[i].tmp = NULL;
        rf_file_out_abort(&files[i]);
    }
    CHECK(exists(tb) && exists(tc));
    CHECK(rf_file_renames_finish(dir, &d) == RF_OK);
    CHECK(all("new\n"));
    CHECK(!exists(tb) && !exists(tc) && !exists(path_in(RF_FILE_RENAMES_NAME)));
    CHECK(has_diag(&d, RF_SEV_NOTE, "finished putting in place the 3 files"));
    CHECK(d.nerrors == 0);
    /* again: nothing to do */
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(rf_file_renames_finish(dir, &d) == RF_OK && d.count == 0);
    free(tb);
    free(tc);

    /* a whole set: the journal gone at the end */
    prepare(files, &d);
    CHECK(rf_file_renames_begin(dir, files, 3, &d) == RF_OK);
    for (int i = 0; i < 3; i++) CHECK(rf_file_out_rename(&files[i], &d) == RF_OK);
    CHECK(rf_file_renames_end(dir, &d) == RF_OK);
    CHECK(all("new\n") && !exists(path_in(RF_FILE_RENAMES_NAME)));
    for (int i = 0; i < 3; i++) rf_file_out_abort(&files[i]);

    /* one rename alone: no journal */
    spit(path_in("a.csv"), "old\n");
    CHECK(rf_file_out_open(&files[0], path_in("a.csv"), &d) == RF_OK);
    CHECK(rf_file_out_close(&files[0], &d) == RF_OK);
    CHECK(rf_file_renames_begin(dir, files, 1, &d) == RF_OK);
    CHECK(!exists(path_in(RF_FILE_RENAMES_NAME)));
    rf_file_out_abort(&files[0]);

    /* the locks finish a journal: the output folder's, a text folder's reader's */
    for (int how = 0; how < 2; how++) {
        prepare(files, &d);
        CHECK(rf_file_renames_begin(dir, files, 3, &d) == RF_OK);
        for (int i = 0; i < 3; i++) { /* killed before any rename */
            free(files[i].tmp);
            files[i].tmp = NULL;
            rf_file_out_abort(&files[i]);
        }
        CHECK(all("old\n"));
        int fd = -1, busy = -1, waited = 0;
        if (how == 0) CHECK(rf_file_lock_try(dir, &fd, &busy, &d) == RF_OK && fd >= 0);
        else CHECK(rf_file_lock_text_folder_shared(dir, &fd, &waited, &d) == RF_OK);
        CHECK(all("new\n") && !exists(path_in(RF_FILE_RENAMES_NAME)));
        rf_file_unlock(fd);
        rf_file_unlock(busy);
    }
    CHECK(d.nerrors == 0);

    /* damaged journals: refused, nothing renamed */
    damaged("");
    damaged("redfox renames 2\n.a.csv.redfox-1-1.tmp/a.csv\nend\n");
    damaged("redfox renames 1\n.a.csv.redfox-1-1.tmp/a.csv\n");            /* no end */
    damaged("redfox renames 1\n.a.csv.redfox-1-1.tmp/../a.csv\nend\n");     /* a '/' */
    damaged("redfox renames 1\n.a.csv.redfox-1-1.tmp/..\nend\n");           /* ".." */
    damaged("redfox renames 1\n.b.csv.redfox-1-1.tmp/a.csv\nend\n");        /* not a.csv's */
    damaged("redfox renames 1\n.a.csv.redfox-1-1.tmp\nend\n");              /* no final name */
    damaged("redfox renames 1\n.a.csv.redfox-1-1.tmp/a.csv\nx\nend\n");     /* a line of nothing */
    damaged("redfox renames 1\n..redfox-renames.redfox-1-1.tmp/.redfox-renames\nend\n"); /* the journal */
    damaged("redfox renames 1\n..redfox.lock.redfox-1-1.tmp/.redfox.lock\nend\n");       /* the lock */
    { /* a NUL byte in a name */
        static const char nul[] = "redfox renames 1\n.a.csv.redfox-1-1.tmp/a.csv\0x\nend\n";
        spit(path_in(".a.csv.redfox-1-1.tmp"), "aside\n");
        FILE *f = fopen(path_in(RF_FILE_RENAMES_NAME), "w");
        CHECK(f && fwrite(nul, 1, sizeof nul - 1, f) == sizeof nul - 1);
        if (f) fclose(f);
        rf_diags nd;
        rf_diags_init(&nd);
        CHECK(rf_file_renames_finish(dir, &nd) == RF_EUSER && has_diag(&nd, RF_SEV_ERROR, "not a list of renames"));
        CHECK(has(path_in(".a.csv.redfox-1-1.tmp"), "aside\n"));
        unlink(path_in(RF_FILE_RENAMES_NAME));
        unlink(path_in(".a.csv.redfox-1-1.tmp"));
        rf_diags_free(&nd);
    }
    /* a journal listing a temporary already renamed: nothing to do but remove it */
    spit(path_in(RF_FILE_RENAMES_NAME), "redfox renames 1\n.a.csv.redfox-1-1.tmp/a.csv\nend\n");
    rf_diags_free(&d);
    rf_diags_init(&d);
    CHECK(rf_file_renames_finish(dir, &d) == RF_OK && !exists(path_in(RF_FILE_RENAMES_NAME)));
    CHECK(has(path_in("a.csv"), "new\n"));

    const char *names[] = {"a.csv", "b.csv", "c.csv", RF_FILE_LOCK_NAME};
    for (int i = 0; i < 4; i++) unlink(path_in(names[i]));
    CHECK(rmdir(dir) == 0);
    rf_diags_free(&d);
    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    return failures != 0;
}
