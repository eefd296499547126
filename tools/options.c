/*
** tools/options.c: the command line's options, parsed alike for every
** command: --name VALUE and --name=VALUE, no empty value, a single-valued
** option given twice with different values refused (lists by design, such
** as --set, take each), an output named '-' refused; and the usage error
** every command reports with.
**
** Owns: the table of the single-valued options seen in this process's
** command line (a process parses one).
*/
#include "tools.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* runtime/dist/rf_rt_dist.h's (that header needs the runtime's, which the
** stand-alone tpch gen of the tests, also built from this file, lacks) */
int rf_rt_dist_launch_rank(void);

int rf_tool_usage_error(const char *cmd, const char *fmt, ...)
{
    /* every rank of an mpirun finds the same usage error: rank 0 says it */
    if (rf_rt_dist_launch_rank() != 0) return RF_EXIT_USAGE;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "redfox %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see `redfox %s --help`)\n", cmd);
    va_end(ap);
    return RF_EXIT_USAGE;
}

/* Matches --name VALUE and --name=VALUE (rf_tool_opt_value without the
** check that the option was not given before with another value). */
static int opt_match(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
    } else if (a[n] != 0) {
        return 0;
    } else if (*i + 1 >= argc) {
        rf_tool_usage_error(cmd, "%s needs a value", name);
        return -1;
    } else {
        *value = argv[++*i];
    }
    /* no option takes an empty value: a path, a number or a name (an
    ** empty --out or -o named no file, and an error came after the run) */
    if (!**value) {
        rf_tool_usage_error(cmd, "%s needs a value, not an empty one%s", name,
                            !strcmp(name, "--cache-dir") ? " (--no-cache: no cache)" : "");
        return -1;
    }
    return 1;
}

/* The single-valued options matched so far: the argument that gave each
** (argv's string, the key: a command line parsed again finds the same
** ones) and its value. A process parses one command line. */
#define SEEN_MAX 256
static struct {
    const char *arg, *name, *value;
} seen[SEEN_MAX];
static int nseen;

int rf_tool_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    int m = opt_match(cmd, argc, argv, i, name, value);
    if (m <= 0) return m;
    /* given twice with different values: a slip to say (--device cpu
    ** --device gpu ran on the GPU, the last one winning silently), not one
    ** to settle by order; the same value twice is the same request */
    for (int k = 0; k < nseen; k++) {
        if (strcmp(seen[k].name, name) || seen[k].arg == arg) continue;
        if (strcmp(seen[k].value, *value)) {
            rf_tool_usage_error(cmd, "%s given twice with different values, '%s' and '%s': give it once", name,
                                seen[k].value, *value);
            return -1;
        }
    }
    int known = 0;
    for (int k = 0; k < nseen && !known; k++) known = seen[k].arg == arg && !strcmp(seen[k].name, name);
    if (!known && nseen < SEEN_MAX) seen[nseen].arg = arg, seen[nseen].name = name, seen[nseen++].value = *value;
    return 1;
}

int rf_tool_opt_list_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value)
{
    return opt_match(cmd, argc, argv, i, name, value);
}

int rf_tool_opt_out(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value)
{
    int m = rf_tool_opt_value(cmd, argc, argv, i, name, value);
    if (m > 0 && !strcmp(*value, "-")) {
        rf_tool_usage_error(cmd,
                            "%s -: this output is written aside and renamed into place, not to standard output "
                            "(give a name; ./- for one called '-')",
                            name);
        return -1;
    }
    return m;
}
