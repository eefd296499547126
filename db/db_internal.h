/*
** db/db_internal.h: what the database's files share and no one else needs.
*/
#ifndef RF_DB_INTERNAL_H
#define RF_DB_INTERNAL_H

#include "rf_db.h"
#include "rf_rfx.h"

#define RF_DB_HEADER 64 /* bytes of the manifest's header */

extern const unsigned char rf_db_magic[8];

/* The manifest's bytes for db (header and body); out->oom on exhausted memory. */
void rf_db_encode(const rf_db *db, rf_buf *out);
/* 1 when s[0..n) may name a file of the database. */
int rf_db_file_name_ok(const char *s, uint64_t n);

#endif
