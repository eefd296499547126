/*
** common/test_diags.c: unit tests of the diagnostics list in rf_common.h.
**
** Owns: checks that an internal error (rf_internal_error, or its message
** copied from another list) turns the user's error status into
** RF_EINTERNAL (exit 3), that other statuses and warnings are left as they
** are, and that truncating the list drops an internal error's effect.
*/
#include "rf_common.h"

#include <stdio.h>
#include <string.h>

#include "rf_test_check.h"

int main(void)
{
    rf_diags d;
    rf_diags_init(&d);
    CHECK(rf_diags_status(&d, RF_OK) == RF_OK);
    CHECK(rf_diags_status(&d, RF_EUSER) == RF_EUSER);
    rf_error(&d, rf_mkloc("a.logic", 1, 2), "undefined predicate `p`");
    rf_diag_add(&d, RF_SEV_WARNING, rf_mkloc("a.logic", 2, 1), RF_INTERNAL_PREFIX "a warning is not an error");
    CHECK(rf_diags_status(&d, RF_EUSER) == RF_EUSER);
    int64_t count = d.count, nerrors = d.nerrors;
    rf_internal_error(&d, rf_mkloc("a.logic", 3, 1), "k%d: a malformed kernel", 7);
    CHECK(d.count == count + 1);
    CHECK(!strcmp(d.items[d.count - 1].msg, "internal error: k7: a malformed kernel"));
    CHECK(rf_diags_status(&d, RF_EUSER) == RF_EINTERNAL);
    /* other failures keep their own status (out of memory, I/O, usage) */
    CHECK(rf_diags_status(&d, RF_ENOMEM) == RF_ENOMEM);
    CHECK(rf_diags_status(&d, RF_EIO) == RF_EIO);
    CHECK(rf_diags_status(&d, RF_EUSAGE) == RF_EUSAGE);
    CHECK(rf_diags_status(&d, RF_OK) == RF_OK);
    /* a copy by message (threads, ranks) is still internal */
    rf_diags e;
    rf_diags_init(&e);
    for (int64_t i = 0; i < d.count; i++) rf_diag_add(&e, d.items[i].sev, d.items[i].loc, "%s", d.items[i].msg);
    CHECK(rf_diags_status(&e, RF_EUSER) == RF_EINTERNAL);
    rf_diags_free(&e);
    rf_diags_truncate(&d, count, nerrors);
    CHECK(rf_diags_status(&d, RF_EUSER) == RF_EUSER);
    rf_diags_free(&d);
    if (failures) fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
