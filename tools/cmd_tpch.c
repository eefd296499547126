/*
** tools/cmd_tpch.c: `redfox tpch`: dispatch to gen, run and bench.
*/
#include "tools.h"

#include <string.h>

static const char *usage =
    "usage: redfox tpch <command> [options]\n"
    "\n"
    "commands:\n"
    "  gen --sf X --out DIR [--jobs N]   generate the eight dbgen .tbl files\n"
    "  run --data DIR [--check DIR]      run the 22 queries, check the answers\n"
    "  bench --data DIR [--sf X]         time them: medians, bandwidth floor, power\n"
    "\n"
    "`redfox tpch <command> --help` describes a command.\n";

int rf_tool_tpch(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return RF_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
        fputs(usage, stdout);
        return RF_EXIT_OK;
    }
    if (!strcmp(cmd, "gen")) return rf_tool_tpch_gen(argc - 1, argv + 1);
    if (!strcmp(cmd, "run")) return rf_tool_tpch_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench")) return rf_tool_tpch_bench(argc - 1, argv + 1);
    static const char *const commands[] = {"gen", "run", "bench"};
    const char *near = rf_tool_suggest(cmd, strlen(cmd), commands, sizeof commands / sizeof commands[0]);
    if (near) fprintf(stderr, "redfox tpch: unknown command '%s'; did you mean '%s'?\n\n%s", cmd, near, usage);
    else fprintf(stderr, "redfox tpch: unknown command '%s'\n\n%s", cmd, usage);
    return RF_EXIT_USAGE;
}
