"""bench/ab_summary.py: the A/B's medians and ratios come from run_bench.sh's part files, and a failed or
missing repeat fails the A/B instead of being compared on fewer."""
import io
import json

import ab_summary


def part(repeats_by_case, mhz=1800, watts=690, mode="kernel"):
    records = [{"impl": "zyfa", "mode": mode, "dtype": "fp8", "family": fam, "seqlen": s, "inputs": "gaussian",
                "input_std": 0.1, "tflops": None if None in reps else sorted(reps)[len(reps) // 2],
                "tflops_repeats": reps} for (fam, s), reps in repeats_by_case.items()]
    return {"records": records, "clocks_under_load": {"sm_mhz_median": mhz, "power_w_median": watts}}


def write(tmp_path, name, rnd, p, part_name="kernel"):
    d = tmp_path / f"ab-{name}-{rnd}"
    d.mkdir()
    (d / f"part-{part_name}.json").write_text(json.dumps(p))


def run(tmp_path, names):
    out = io.StringIO()
    ok = ab_summary.summarize(str(tmp_path / "ab"), names, out)
    return ok, out.getvalue()


def test_medians_over_every_round_and_ratios_to_the_first_build(tmp_path):
    write(tmp_path, "main", 1, part({("mha-d128", 4096): [800.0, 810.0]}))
    write(tmp_path, "main", 2, part({("mha-d128", 4096): [790.0, 820.0]}))
    write(tmp_path, "cand", 1, part({("mha-d128", 4096): [880.0, 870.0]}, mhz=1900))
    write(tmp_path, "cand", 2, part({("mha-d128", 4096): [860.0, 890.0]}, mhz=1920))
    write(tmp_path, "main-x", 1, part({("mha-d128", 4096): [1.0, 1.0]}))  # another build's runs: not main's
    ok, text = run(tmp_path, ["main", "cand"])
    assert ok, text
    assert "fp8/mha-d128/S4096/gaussian/std0.1" in text
    assert "main   805.0 (1.000x)" in text and "cand   875.0 (1.087x)" in text
    assert "cand: SM clock 1910 MHz, power 690 W under load (medians of 2 rounds)" in text


def test_a_failed_repeat_fails_the_ab(tmp_path):
    write(tmp_path, "main", 1, part({("mha-d128", 4096): [800.0, 810.0]}))
    write(tmp_path, "cand", 1, part({("mha-d128", 4096): [880.0, None]}))
    ok, text = run(tmp_path, ["main", "cand"])
    assert not ok
    assert "cand: fp8/mha-d128/S4096/gaussian/std0.1: a repeat failed" in text


def test_a_build_that_lost_a_round_is_not_compared(tmp_path):
    write(tmp_path, "main", 1, part({("mha-d128", 4096): [800.0]}))
    write(tmp_path, "main", 2, part({("mha-d128", 4096): [810.0]}))
    write(tmp_path, "cand", 1, part({("mha-d128", 4096): [880.0]}))
    ok, text = run(tmp_path, ["main", "cand"])
    assert not ok
    assert "repeats per build differ {'main': 2, 'cand': 1}: not compared" in text


def test_nothing_timed_fails(tmp_path):
    ok, text = run(tmp_path, ["main", "cand"])
    assert not ok and "no case was timed" in text


def test_a_sustained_ab_is_summarized_under_its_mode(tmp_path):
    write(tmp_path, "main", 1, part({("gqa-d128", 16384): [1000.0]}, mode="sustained"), "sustained")
    write(tmp_path, "cand", 1, part({("gqa-d128", 16384): [1030.0]}, mode="sustained"), "sustained")
    ok, text = run(tmp_path, ["main", "cand"])
    assert ok, text
    assert "sustained/fp8/gqa-d128/S16384/gaussian/std0.1" in text and "cand  1030.0 (1.030x)" in text
