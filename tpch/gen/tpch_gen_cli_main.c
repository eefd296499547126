/*
** tpch/gen/tpch_gen_cli_main.c: a stand-alone `tpch gen` for the tests.
**
** Owns nothing but main: it runs tools/cmd_tpch_gen.c's command exactly as
** the redfox dispatcher would (argv[0] is "gen"), so the tests exercise the
** real command line without depending on the dispatcher.
*/
#include "rf_tpch_gen.h"

int rf_tool_tpch_gen(int argc, char **argv);

/* --format db needs the whole redfox (the schema's compiler, the database). */
rf_status rf_tool_tpch_gen_db(rf_tpch_gen_opts *o, rf_diags *d);
rf_status rf_tool_tpch_gen_db(rf_tpch_gen_opts *o, rf_diags *d)
{
    rf_error(d, rf_mkloc(o->out_dir, 0, 0), "--format db is only in the redfox command");
    return RF_EUSAGE;
}

/* tools/options.c's usage errors are said by rank 0 of an mpirun: a
** stand-alone generator is one process, rank 0. */
int rf_rt_dist_launch_rank(void);
int rf_rt_dist_launch_rank(void)
{
    return 0;
}

int main(int argc, char **argv)
{
    static char gen[] = "gen";
    argv[0] = gen;
    return rf_tool_tpch_gen(argc, argv);
}
