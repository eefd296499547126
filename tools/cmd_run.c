/*
** tools/cmd_run.c: `redfox run`: run a compiled program on input files.
*/
#include "tools.h"

#include <string.h>

static const char *usage =
    "usage: redfox run PROG.rfx|PROG.logic --data DIR [--device auto|cpu|gpu]\n"
    "                  [--format table|csv] [--out DIR] [--profile] [--threads N]\n"
    "\n"
    "Not available in this version: the runtime is being built.\n";

int rf_tool_run(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return RF_EXIT_OK;
        }
    fprintf(stderr, "redfox run: not available in this version: the runtime is being built\n");
    return RF_EXIT_USAGE;
}
