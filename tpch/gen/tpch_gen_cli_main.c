/*
** tpch/gen/tpch_gen_cli_main.c: a stand-alone `tpch gen` for the tests.
**
** Owns nothing but main: it runs tools/cmd_tpch_gen.c's command exactly as
** the redfox dispatcher would (argv[0] is "gen"), so the tests exercise the
** real command line without depending on the dispatcher.
*/
int rf_tool_tpch_gen(int argc, char **argv);

int main(int argc, char **argv)
{
    static char gen[] = "gen";
    argv[0] = gen;
    return rf_tool_tpch_gen(argc, argv);
}
