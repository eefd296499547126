/*
** common/rf_file.h: writing files so that nothing is lost: write aside,
** then rename into place.
**
** Owns: the safe-write protocol every writer of a user-visible file uses
** (.rfx programs, run outputs, TPC-H tables, reports), the advisory lock on
** an output folder, and the removal of temporaries when SIGINT, SIGTERM or
** SIGHUP ends the process.
**
** The protocol. rf_file_out_open creates a temporary in the target's folder
** (".NAME.redfox-PID-N.tmp", O_CREAT|O_EXCL|O_NOFOLLOW, a fresh name) and
** registers it for removal on a signal; writes go there; rf_file_out_close
** flushes it to the disk (fsync) and closes it; rf_file_out_rename renames
** it over the final name (atomic on a POSIX file system: a reader sees the
** old file or the new one, never a part); rf_file_sync_dir makes the rename
** itself durable. rf_file_out_commit does the three for a single file.
** rf_file_out_abort removes the temporary at any point and is a no-op after
** a commit, so cleanup code may always call it. A writer of several files
** that must change together opens all, writes all, closes all and only then
** renames all: a failure before the renames leaves every final name as it
** was. The renames themselves are one system call each, and there is no
** atomic rename of several files on POSIX: a crash between two of them
** would leave some files new and some old, so the writer lists them first
** in a journal (rf_file_renames_begin) and removes it after the last
** (rf_file_renames_end); a reader or writer of the folder that finds one
** (rf_file_lock_try, rf_file_lock_wait, rf_file_lock_text_folder_shared)
** makes the renames left before it reads or writes anything.
**
** Symbolic links are never written through: a final name that is a link
** is refused (RF_EIO, the error says why) before anything is written; a
** link planted there later is replaced by the rename, not followed. A final
** name that is a character device, FIFO or socket (/dev/null, /dev/full, a
** named pipe) is written in place: such files have no contents to keep.
** A folder holding the final name may itself be reached through links (it
** is the user's choice of folder).
**
** Errors are reported into an rf_diags at the file ("PATH: error: cannot
** write: No space left on device"), with the system's reason (strerror).
*/
#ifndef RF_FILE_H
#define RF_FILE_H

#include "rf_common.h"

/* A file being written aside. Zero it with rf_file_out_init before use. */
typedef struct rf_file_out {
    char *path;   /* the final name (owned copy) */
    char *tmp;    /* the temporary (owned); NULL when direct or once renamed */
    int fd;       /* -1 when closed */
    int direct;   /* a device, FIFO or socket written in place */
    int slot;     /* the signal-cleanup slot, -1 for none */
    int err_no;   /* the first failure's errno, 0 if none */
    int reported; /* the failure was added to the diagnostics */
    int closed;   /* rf_file_out_close succeeded */
} rf_file_out;

void rf_file_out_init(rf_file_out *f);
/* Creates the temporary for path (or opens a device in place). */
rf_status rf_file_out_open(rf_file_out *f, const char *path, rf_diags *d);
/* Writes n bytes, retrying short writes and EINTR. On failure returns RF_EIO
** and records the reason; rf_file_out_close reports it. Later writes after a
** failure do nothing and return RF_EIO. */
rf_status rf_file_out_write(rf_file_out *f, const void *p, int64_t n);
/* rf_file_out_write as a callback: ctx is the rf_file_out; 0 ok, -1 failed. */
int rf_file_out_write_cb(void *ctx, const void *p, int64_t n);
/* fsync and close; reports any write, sync or close failure. */
rf_status rf_file_out_close(rf_file_out *f, rf_diags *d);
/* After a successful close: renames the temporary over the final name. */
rf_status rf_file_out_rename(rf_file_out *f, rf_diags *d);
/* close + rename + rf_file_sync_dir of the final name's folder. */
rf_status rf_file_out_commit(rf_file_out *f, rf_diags *d);
/* Closes and removes the temporary if there is one; frees everything. Safe
** on an initialised, failed or committed rf_file_out, and twice. */
void rf_file_out_abort(rf_file_out *f);

/* fsync of the folder holding path (for the renames in it to last). */
rf_status rf_file_sync_dir(const char *path, rf_diags *d);

/* The folder part of path ("." when it has none); caller frees. */
char *rf_file_dirname(const char *path);

/* A relative file name in its tidy form, in place: "." segments and empty
** ones (a repeated or leading '/') dropped, so that "./t.txt", "t.txt" and
** "sub//./t.txt" against "sub/t.txt" name one input (one table of a
** database). ".." is kept (it depends on links). A name that would become
** empty is left as it is. */
void rf_file_name_tidy(char *name);
/* Do a and b name one file by their tidy forms? */
int rf_file_same_name(const char *a, const char *b);

/* Removes temporaries of path (".NAME.redfox-PID-N.tmp" in its folder)
** left by a process that no longer runs (killed by SIGKILL, say). Call it
** while holding the folder's lock. Returns how many were removed. */
int64_t rf_file_remove_stale(const char *path);
/* The same for a writer that holds no lock on the folder (compile -o, run
** --trace, tpch bench --json): only temporaries that also changed last
** RF_FILE_STALE_S ago or more, so that the writer of another pid namespace
** sharing the folder (its pid unseen here) is never robbed of a file it
** still writes. */
#define RF_FILE_STALE_S 600
int64_t rf_file_remove_stale_unlocked(const char *path);

/* A set of renames into one folder, all or nothing as redfox's readers and
** writers of it see them (common/rf_file_renames.c). A writer of several
** files of dir that closed them all, holding dir's lock (rf_file_lock_try)
** and the folder's own exclusively (rf_file_lock_folder, where it takes
** it), calls rf_file_renames_begin (the journal DIR/.redfox-renames listing
** the renames of files[0..n) that have a temporary, written aside and
** synced; none for one rename), renames them (rf_file_out_rename), syncs
** the folder (rf_file_sync_dir) and calls rf_file_renames_end (the journal
** removed). A writer killed between them leaves the journal:
** rf_file_renames_finish (called by the locks below) makes the renames it
** lists that are not made (every temporary in it is complete and synced),
** then removes it, with a note; where it cannot (a reader without write
** permission), an error naming dir and what to do, and nothing of dir is
** to be read. RF_OK where there is no journal. */
#define RF_FILE_RENAMES_NAME ".redfox-renames"
rf_status rf_file_renames_begin(const char *dir, const rf_file_out *files, int64_t n, rf_diags *d);
rf_status rf_file_renames_end(const char *dir, rf_diags *d);
rf_status rf_file_renames_finish(const char *dir, rf_diags *d);

/* The advisory lock of an output folder: flock(LOCK_EX) on DIR/.redfox.lock
** (created if missing, never through a link). rf_file_lock_try returns RF_OK
** with *fd >= 0 when it holds the lock, RF_OK with *fd = -1 and *busy_fd the
** open lock file when another process holds it (then rf_file_lock_wait
** blocks until it is free), and an error otherwise. Once either holds it,
** a journal a killed writer left in dir is finished
** (rf_file_renames_finish), before the caller's stale temporaries are
** removed; where that fails, the lock is released and the error returned. */
#define RF_FILE_LOCK_NAME ".redfox.lock"
rf_status rf_file_lock_try(const char *dir, int *fd, int *busy_fd, rf_diags *d);
rf_status rf_file_lock_wait(const char *dir, int busy_fd, rf_diags *d);
void rf_file_unlock(int fd);

/* The advisory lock of a folder that a writer replaces as a whole (a
** database that `redfox exec` commits by exchanging it with a new folder):
** flock(LOCK_EX) on the folder itself, taken again until the folder locked
** is still the one at dir, so that a process that waited on the replaced
** folder locks its successor. Blocks; *waited is set when another process
** held it (the caller may say so). *fd: release with rf_file_unlock. */
rf_status rf_file_lock_folder(const char *dir, int *fd, int *waited, rf_diags *d);
/* The same lock shared, for a reader of such a folder (`redfox run --data
** DB`): readers hold it together, and a writer's exclusive lock waits for
** them, as they wait for it, so a read never meets a half-done commit. */
rf_status rf_file_lock_folder_shared(const char *dir, int *fd, int *waited, rf_diags *d);
/* The same shared lock for a reader of a folder of text files (`run`, `tpch
** run`, `tpch bench`, `import` --data DIR), whose writer (`tpch gen`) takes
** rf_file_lock_folder around the renames that put its files in place, so a
** reader never reads some tables of one generation and some of the next.
** Creates no file (a read-only folder reads as before). A dir that is
** missing or no folder, or that this process may search but not list (no
** read permission, so it cannot be opened to be locked), or on a file
** system without flock (ENOLCK, EOPNOTSUPP, ENOSYS, EINVAL: NFS without its
** lock service, some FUSE), is not locked: RF_OK with *fd = -1 (the reader
** reports a missing folder itself), so that it reads as it did before the
** lock existed. A journal a killed writer left (rf_file_renames_finish) is
** finished once the lock is held (or found not to be had); where that
** fails, the lock is released and the error returned: dir is not to be read. */
rf_status rf_file_lock_text_folder_shared(const char *dir, int *fd, int *waited, rf_diags *d);
/* A wait for one of these three folder locks while this process holds the
** signals (rf_file_hold_signals, rf_file_commit_begin) ends when a SIGINT,
** SIGTERM or SIGHUP is held: RF_EUSER with the error "stopped by SIGINT
** while waiting for another process's lock on this folder", so that a ^C
** does not wait for another process's run to end; the caller then removes
** what it wrote and ends the process by the signal (rf_file_end_by_signal). */

/* Installs handlers for SIGINT, SIGTERM and SIGHUP (where not ignored) that
** remove the registered temporaries and then end the process by the same
** signal; also ignores SIGXFSZ, so that a file-size limit is a write error
** ("File too large") rather than a crash. For tools/ to call once. */
void rf_file_cleanup_on_signals(void);
/* Around the renames that put several outputs in place: a SIGINT, SIGTERM
** or SIGHUP that comes between begin and end takes effect at end, so that
** the folder holds the old outputs or the new ones, never some of each
** (SIGKILL cannot be held). */
void rf_file_commit_begin(void);
void rf_file_commit_end(void);
/* Around a commit a library makes (`redfox exec`'s transactions: from its
** temporary folder's creation to the end of its exchange, on the thread it
** ends on), several at once on several threads: a SIGINT, SIGTERM or
** SIGHUP that comes while one is under way is held (rf_file_signal_held)
** until the caller, once every hold ended and it said what is committed,
** ends the process by it (rf_file_end_by_signal); one that comes while
** none is under way ends the process at once. Without the handlers
** (rf_file_cleanup_on_signals) nothing is ever held. */
void rf_file_hold_signals(void);
void rf_file_release_signals(void);
/* The signal held (0: none). */
int rf_file_signal_held(void);
/* Ends the process by the signal held, as its handler does (the registered
** temporaries removed): where one is held and no hold is under way; else
** returns. */
void rf_file_end_by_signal(void);
/* "SIGINT", "SIGTERM", "SIGHUP" (else "a signal"), for messages. */
const char *rf_file_signal_name(int sig);

#endif
