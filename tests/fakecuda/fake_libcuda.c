/*
** tests/fakecuda/fake_libcuda.c: a library named libcuda.so.1 without the
** driver's entry points, for tests of --device auto (run_place_near_tie.sh).
**
** Owns: a stand-in driver that any run can load (LD_LIBRARY_PATH) and
** none can start: loading it proves that a run looked for the GPU, and its
** absence from the process (--profile: "libcuda.so.1 not loaded") that a
** run did not, on any host, with or without a GPU.
*/
int rf_test_fake_libcuda = 1; /* not cuInit: the driver "lacks cuInit", usable by no run */
