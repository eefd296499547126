#!/usr/bin/env python3
# bench/fresh/test_auto_table.py BUILD_DIR: auto_table.py's parsing of
# redfox's stderr, its verdicts and summary on made-up rows, and a tiny real
# run with --devices cpu,auto (one e2e program, one fresh and one repeated
# process each, and up to 3 for the devices in contention; the layout checked,
# not the times), --budget 0, and Runner.sample's choice of the devices that
# get more processes.
# Owns: the tests of bench/fresh/auto_table.py (ctest auto_table).
import contextlib, io, os, re, sys, tempfile, unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import auto_table as at  # noqa: E402

BUILD = None


class Parsing(unittest.TestCase):
    def test_chose(self):
        self.assertEqual(at.chose("redfox: note: running on the CPU: predicted faster than the GPU (0.01 s ...)"), "cpu")
        self.assertEqual(at.chose("x\nredfox: note: running on the GPU: NVIDIA H100 (sm_90)\n"), "gpu")
        self.assertEqual(at.chose("nothing said"), "?")

    def test_repeat(self):
        err = ("run 1 of 3 (device cpu): load 0.100000 s, run 0.200000 s\n"
               "redfox: note: running on the GPU: x\n"
               "run 2 of 3 (device gpu): load 0.010000 s, run 0.005000 s\n"
               "run 3 of 3 (device gpu): load 0.000000 s, run 0.004000 s\n")
        self.assertEqual(at.third_run(err), 0.004)
        self.assertEqual(at.repeat_devices(err), ["cpu", "gpu", "gpu"])
        self.assertNotEqual(at.third_run("no runs"), at.third_run("no runs"))  # nan

    def test_verdicts(self):
        t = at.Tally()
        within = {"gpu": 0.4, "cpu": 0.05, "auto": 0.054, "chose": "cpu"}
        self.assertAlmostEqual(t.add("fresh", "q01 SF 1", within, ""), 1.08)
        miss = {"gpu": 0.4, "cpu": 0.05, "auto": 0.06, "chose": "cpu",
                "gpu_r": 0.5, "cpu_r": 0.9, "auto_r": 0.52, "chose_r": "gpu"}
        self.assertAlmostEqual(t.add("fresh", "q02 SF 1", miss, ""), 1.2)
        self.assertAlmostEqual(t.add("repeated", "q02 SF 1", miss, "_r"), 1.04)
        # no GPU measured: the CPU is the better device; no auto: no verdict
        self.assertAlmostEqual(t.add("fresh", "e", {"cpu": 0.01, "auto": 0.0105, "chose": "cpu"}, ""), 1.05)
        r = t.add("fresh", "f", {"cpu": 0.01, "gpu": 0.02}, "")
        self.assertNotEqual(r, r)
        s = t.summary().splitlines()
        self.assertEqual(s[0], "within 10 %: 3 of 4 (fresh 2/3, repeated 1/1)")
        self.assertEqual(s[1], "misses:")
        self.assertEqual(s[2], "  q02 SF 1 fresh: auto 60.0 ms (cpu) against cpu 50.0 ms: 1.20, +10.0 ms")
        self.assertEqual(len(s), 3)


@unittest.skipUnless(BUILD or len(sys.argv) > 1, "needs a build folder")
class Sampling(unittest.TestCase):
    """Runner.sample: every device gets the first rounds; only the devices in contention more."""

    def walls(self, times, rounds, more, extra_s):
        calls = []

        def run(dev):
            calls.append(dev)
            return times[dev], ""

        w, _ = at.Runner("redfox", "1", os.devnull, "").sample(list(times), rounds, more, extra_s, run)
        return {d: len(v) for d, v in w.items()}, calls

    def test_far_device_not_sampled_again(self):
        n, calls = self.walls({"gpu": 0.3, "cpu": 0.01, "auto": 0.0102}, 3, 15, 60.0)
        self.assertEqual(n, {"gpu": 3, "cpu": 15, "auto": 15})
        self.assertEqual(calls[:3], ["gpu", "cpu", "auto"])  # alternated

    def test_close_devices_all_sampled(self):
        n, _ = self.walls({"gpu": 0.012, "cpu": 0.01, "auto": 0.011}, 2, 6, 60.0)
        self.assertEqual(n, {"gpu": 6, "cpu": 6, "auto": 6})

    def test_no_extra_time_no_more(self):
        n, _ = self.walls({"gpu": 0.3, "cpu": 0.01, "auto": 0.01}, 3, 15, 0.0)
        self.assertEqual(n, {"gpu": 3, "cpu": 3, "auto": 3})

    def test_failed_device_not_in_contention(self):
        n, _ = self.walls({"gpu": at.NAN, "cpu": 0.01, "auto": 0.01}, 2, 5, 60.0)
        self.assertEqual(n, {"gpu": 2, "cpu": 5, "auto": 5})


class TinyRun(unittest.TestCase):
    def run_table(self, *extra):
        with tempfile.TemporaryDirectory() as w:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                rc = at.main(["--build", BUILD, "--work", w + "/work", "--cache-dir", w + "/cache", "--sfs", "none",
                              "--devices", "cpu,auto", "--n", "1", "--reps", "1", "--more", "3", "--only", "^aggregates$",
                              "--threads", "2"] + list(extra))
            self.assertEqual(rc, 0)
            return out.getvalue()

    def test_cpu_and_auto(self):
        text = self.run_table()
        self.assertIn("| program | GPU | CPU | auto | chose | auto / best | GPU rep. |", text)
        row = re.search(r"^\| aggregates \| - \| ([0-9.]+) \| ([0-9.]+) \| cpu \| ([0-9.]+) \| - \| ([0-9.]+) \| "
                        r"([0-9.]+) \| cpu \| ([0-9.]+) \| - \| ([0-9.]+) \| ([0-9.]+) \|$", text, re.M)
        self.assertTrue(row, text)
        cpu, auto = float(row.group(1)), float(row.group(2))
        self.assertAlmostEqual(float(row.group(3)), auto / cpu, delta=0.05)
        self.assertRegex(text, r"(?m)^within 10 %: [0-2] of 2 \(fresh [01]/1, repeated [01]/1\)$")

    def test_budget(self):
        text = self.run_table("--budget", "0")
        self.assertIn("(budget of 0 s spent: stopped before e2e aggregates)", text)
        self.assertRegex(text, r"(?m)^within 10 %: 0 of 0 \(fresh 0/0, repeated 0/0\)$")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        BUILD = sys.argv.pop(1)
    unittest.main()
