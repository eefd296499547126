/*
** runtime/rf_rt_hold.h: the mark a running `redfox hold` leaves on its host,
** so that --device auto weighs the short GPU start a fresh process has
** while the driver is held (tools/cmd_hold.c says why it is short).
**
** Owns: the mark: the file redfox-hold.lock in $TMPDIR (an absolute path),
** else /tmp, and a read lock on it that a holder keeps while it lives
** (the system drops it when the process ends, however it ends).
*/
#ifndef RF_RT_HOLD_H
#define RF_RT_HOLD_H

#include "rf_common.h"

#define RF_RT_HOLD_FILE "redfox-hold.lock"

/* The mark's path (owned; NULL: out of memory). */
char *rf_rt_hold_path(void);
/* Marks this process as one that holds the driver, until it ends: the
** mark's file made where there is none (mode 0644, never through a link)
** and read-locked. RF_EIO and a warning in d, naming the file, when it
** cannot be (the driver is held all the same; auto only does not know). */
rf_status rf_rt_hold_mark(rf_diags *d);
/* 1 when a live process holds the mark (a `redfox hold` runs on this host
** with this $TMPDIR), 0 otherwise; takes no lock and makes no file (about
** 10 us). */
int rf_rt_hold_present(void);

#endif
