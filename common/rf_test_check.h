/*
** common/rf_test_check.h: the check that the unit tests of the internal
** libraries share (common/, db/, harmony/rfx/).
**
** Owns: CHECK and its count of failures. A failed check prints its file,
** line and expression and counts; each test's main exits non-zero when
** failures is not 0. Included once by each test program: its definitions
** are the program's own. (The tests of the public library have their own,
** api/tests/test_check.h, as they see only include/redfox.h.)
*/
#ifndef RF_TEST_CHECK_H_INTERNAL
#define RF_TEST_CHECK_H_INTERNAL

#include <stdio.h>

static int failures;
#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #c);                  \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

#endif
