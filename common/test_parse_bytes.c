/*
** common/test_parse_bytes.c: unit tests of rf_parse_bytes (rf_common.h),
** the reader of every byte-size option and setting.
**
** Owns: checks the suffixes (K, M, G, T in either case, an optional B after
** one), the bounds (above 0, at most 2^62 bytes) and the refusals (signs,
** blanks, fractions, unknown suffixes, a number too big to read).
*/
#include "rf_common.h"

#include <stdio.h>

#include "rf_test_check.h"

static int64_t size_of(const char *s)
{
    int64_t v = -7;
    return rf_parse_bytes(s, &v) ? v : -1;
}

int main(void)
{
    CHECK(size_of("4096") == 4096);
    CHECK(size_of("1") == 1);
    CHECK(size_of("64M") == INT64_C(64) << 20);
    CHECK(size_of("64m") == INT64_C(64) << 20);
    CHECK(size_of("64MB") == INT64_C(64) << 20);
    CHECK(size_of("64mb") == INT64_C(64) << 20);
    CHECK(size_of("1k") == 1024);
    CHECK(size_of("3G") == INT64_C(3) << 30);
    CHECK(size_of("2T") == INT64_C(2) << 40);
    CHECK(size_of("4611686018427387904") == INT64_C(1) << 62); /* 2^62 */
    CHECK(size_of("4194304T") == INT64_C(1) << 62);
    const char *bad[] = {"",    "0",    "0K",  "-1",   "+1",   " 1",  "1 ",  "1.5M", "64X",
                         "M",   "B",    "1B",  "1KK",  "1KBB", "0x10", "1e3", "4611686018427387905",
                         "4194305T", "99999999999999999999999", "off"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (size_of(bad[i]) != -1) fprintf(stderr, "accepted '%s'\n", bad[i]);
        CHECK(size_of(bad[i]) == -1);
    }
    return failures != 0;
}
