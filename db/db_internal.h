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

/* A string column's dictionary (db_dict.c). */
typedef struct rf_db_dict rf_db_dict;
rf_db_dict *rf_db_dict_new(void);
void rf_db_dict_free(rf_db_dict *dc);
/* Distinct strings so far. */
int64_t rf_db_dict_count(const rf_db_dict *dc);
/* The codes of n more rows (string i is bytes[off[i] .. off[i+1])), adding
** new strings: nthreads threads through par (NULL: this thread). 0, or -1
** when memory ran out, -2 past RF_DB_MAX_DICT entries. */
int rf_db_dict_encode(rf_db_dict *dc, int64_t n, const int64_t *off, const char *bytes, uint32_t *codes,
                      int nthreads, rf_db_parallel_fn par);
/* Writes the dictionary file's bytes to fd: *crc their CRC-32C, *size their
** count. 0, or -1 with errno set. */
int rf_db_dict_write(const rf_db_dict *dc, int fd, uint32_t *crc, uint64_t *size);
uint64_t rf_db_hash_bytes(const char *p, int64_t n);

/* Narrow blocks (db_narrow.c). */
#define RF_DB_NARROW_EXP_TRY 6  /* the largest divisor a writer tries: 10^6, the decimals' scale */
#define RF_DB_NARROW_EXP_MAX 18 /* the largest a manifest may give: 10^18 < 2^63 */
/* Block bl's min, max, width and exp for its n values at v (of type t, at
** the runtime's width): width the type's (exp 0) where narrowing saves
** nothing or a value is one the type does not allow. */
void rf_db_narrow_plan(rf_type t, const void *v, int64_t n, rf_db_block *bl);
/* The n values at v stored as bl says (n x bl->width bytes at out). */
void rf_db_narrow_pack(rf_type t, const void *v, int64_t n, const rf_db_block *bl, void *out);

#endif
