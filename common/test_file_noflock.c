/*
** common/test_file_noflock.c: the folder locks of rf_file.h on a file system
** without flock (NFS without its lock service, some FUSE file systems).
**
** Owns: checks that a text folder's reader (rf_file_lock_text_folder_shared)
** reads it unlocked there, as it did before the lock existed, while a
** database's reader and every writer still stop with the system's reason.
** This program defines flock() itself, failing with ENOLCK as such a file
** system does; rf_common is a static library, so its calls land here.
*/
#include "rf_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "rf_test_check.h"

static int flock_errno = ENOLCK;

int flock(int fd, int op)
{
    (void)fd;
    (void)op;
    errno = flock_errno;
    return -1;
}

int main(void)
{
    char dir[] = "/tmp/rf_noflock_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    const int errs[] = {ENOLCK, EOPNOTSUPP, ENOSYS, EINVAL};
    for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
        flock_errno = errs[i];
        rf_diags d;
        rf_diags_init(&d);
        int fd = 7, waited = 1;
        CHECK(rf_file_lock_text_folder_shared(dir, &fd, &waited, &d) == RF_OK);
        CHECK(fd == -1 && !waited && d.count == 0);
        rf_file_unlock(fd);
        rf_diags_free(&d);
    }
    /* a database's readers and the writers need the lock: an error naming the folder */
    flock_errno = ENOLCK;
    for (int k = 0; k < 2; k++) {
        rf_diags d;
        rf_diags_init(&d);
        int fd = -1, waited = 0;
        rf_status st = k ? rf_file_lock_folder(dir, &fd, &waited, &d) : rf_file_lock_folder_shared(dir, &fd, &waited, &d);
        CHECK(st != RF_OK && fd == -1 && d.count == 1);
        rf_diags_free(&d);
    }
    /* another failure (a bad descriptor is no file system's answer) stays an error */
    flock_errno = EBADF;
    {
        rf_diags d;
        rf_diags_init(&d);
        int fd = -1, waited = 0;
        CHECK(rf_file_lock_text_folder_shared(dir, &fd, &waited, &d) != RF_OK && fd == -1);
        rf_diags_free(&d);
    }
    rmdir(dir);
    if (failures) fprintf(stderr, "%d failures\n", failures);
    return failures ? 1 : 0;
}
