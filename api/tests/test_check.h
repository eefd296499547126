/*
** api/tests/test_check.h: the check the tests of libredfox through its
** public header share (api/tests/test_api*.c, tests/dbkeep).
**
** Owns: CHECK and its count of failures. A failed check prints its file,
** line and expression (with the world's rank, where the test has set
** check_rank) and counts; each test's main exits non-zero when failures is
** not 0. Included once by each test program: its definitions are the
** program's own.
*/
#ifndef RF_TEST_CHECK_H
#define RF_TEST_CHECK_H

#include <stdio.h>

static int failures;
static int check_rank = -1; /* a test on several ranks: its own, said with a failure; -1: none */

#define CHECK(c)                                                                                              \
    do {                                                                                                      \
        if (!(c)) {                                                                                           \
            if (check_rank >= 0)                                                                              \
                fprintf(stderr, "%s:%d: rank %d: check failed: %s\n", __FILE__, __LINE__, check_rank, #c);   \
            else                                                                                              \
                fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                         \
            failures++;                                                                                       \
        }                                                                                                     \
    } while (0)

#endif
