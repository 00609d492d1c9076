"""The results tools with zyfa runs of an explicit P rounding (zyfa_bench --p-rounding), on synthetic records:
report.py's tables, results_file.py's record identity (merge --base, recover) and peers.py's command line."""
import json
import os
import subprocess
import sys

import pytest

import peers
import report
import results_file

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def rec(impl="zyfa", dtype="fp8", family="gqa-d128", seqlen=4096, inputs="gaussian", mode="accuracy", p_rounding=None,
        **extra):
    d_qk = 192 if family.endswith("d192") else 128
    heads = max(32, 262144 // seqlen)
    r = {"impl": impl, "dtype": dtype, "d_qk": d_qk, "d_v": 128, "batch": 1, "seqlen": seqlen, "nheads": heads,
         "nheads_k": heads // 4 if family.startswith("gqa") else heads, "inputs": inputs, "mode": mode,
         "family": family, "tflops": None}
    if p_rounding:
        r["p_rounding"] = p_rounding
    r.update(extra)
    return r


def acc(impl, err, p_rounding=None, **kw):
    kw.setdefault("rows_weighted", True)
    return rec(impl, p_rounding=p_rounding, rel_rms_err=err, max_abs_err=10 * err, lse_max_abs_err=err,
               rows_sum_max_err=0.0, **kw)


RECORDS = [
    acc("zyfa", 2.7e-2), acc("zyfa", 2.7e-2, "lean"), acc("zyfa", 2.0e-2, "exact"), acc("cudnn", 1.7e-2),
    # outlier: no explicit lean run, so the table takes the default run and marks it
    acc("zyfa", 1.3e-2, inputs="outlier"), acc("zyfa", 1.0e-2, "exact", inputs="outlier"),
    # 16K structured: explicit lean only, no default
    acc("zyfa", 3.3e-2, "lean", seqlen=16384, inputs="structured"),
    acc("zyfa", 2.5e-2, "exact", seqlen=16384, inputs="structured"),
    # d_qk = 192: exact P is the default; no lean P, so no row in the lean/exact table
    acc("zyfa", 1.9e-2, family="mha-d192"), acc("zyfa", 1.9e-2, "exact", family="mha-d192"),
    # gqa-d192: lean P on request; exact P from the default run (marked)
    acc("zyfa", 1.6e-2, family="gqa-d192"), acc("zyfa", 2.0e-2, "lean", family="gqa-d192"),
    acc("zyfa", 1.0e-3, dtype="bf16"),
    rec("zyfa", mode="kernel", seqlen=16384, tflops=819.0, input_std=0.1),
    rec("zyfa", mode="kernel", seqlen=16384, tflops=760.0, input_std=0.1, p_rounding="exact"),
    rec("cudnn", mode="kernel", seqlen=16384, tflops=874.0, input_std=0.1),
]


def table_rows(text, first_cell):
    return [line for line in text.splitlines() if line.startswith(f"| {first_cell} |")]


def test_lean_exact_table():
    text = report.lean_exact_table(RECORDS)
    assert text.startswith("**Lean P against exact P**")
    rows = [line for line in text.splitlines() if line.startswith("| gqa-d128 |")]
    assert rows == ["| gqa-d128 | 4K | gaussian | 2.70e-02 | 2.00e-02 | 1.35 |",
                    "| gqa-d128 | 4K | outlier | 1.30e-02 * | 1.00e-02 | 1.30 |",
                    "| gqa-d128 | 16K | structured | 3.30e-02 | 2.50e-02 | 1.32 |"]
    assert table_rows(text, "gqa-d192") == ["| gqa-d192 | 4K | gaussian | 2.00e-02 | 1.60e-02 * | 1.25 |"]
    assert "mha-d192" not in text
    assert "lean / exact: 1.25-1.35 over 4 cases." in text
    assert "zyfa's default run" in text  # the note for the marked cell


def test_lean_exact_table_empty_without_a_case_of_both():
    explicit_other = {128: "exact", 192: "lean"}  # the rounding that only an explicit run gives at each head dim
    assert report.lean_exact_table([r for r in RECORDS if r.get("p_rounding") != explicit_other[r["d_qk"]]]) == ""


def test_accuracy_table_puts_p_rounding_runs_next_to_zyfa():
    text = report.accuracy_tables(RECORDS)
    header = text.splitlines()[2]
    assert header == "| dtype | shape | S | inputs | zyfa | zyfa (lean P) | zyfa (exact P) | cudnn |"
    assert "| fp8 | gqa-d128 | 4K | gaussian | 2.70e-02 | 2.70e-02 | 2.00e-02 | 1.70e-02 |" in text
    assert "| fp8 | mha-d192 | 4K | gaussian | 1.90e-02 | — | 1.90e-02 | — |" in text
    assert "| bf16 | gqa-d128 | 4K | gaussian | 1.00e-03 | — | — | — |" in text


def test_accuracy_table_marks_unweighted_samples():
    records = [acc("zyfa", 2.7e-2), acc("cudnn", 1.7e-2, rows_weighted=False)]
    text = report.accuracy_tables(records)
    assert "| fp8 | gqa-d128 | 4K | gaussian | 2.70e-02 | 1.70e-02 † |" in text
    assert "† an unweighted sample of rows" in text
    assert "†" not in report.accuracy_tables(records[:1])


def test_kernel_table_has_an_exact_p_row():
    text = report.throughput_tables(RECORDS, "kernel")
    assert table_rows(text, "gqa-d128") == ["| gqa-d128 | zyfa | 819 |", "| gqa-d128 | zyfa (exact P) | 760 |",
                                            "| gqa-d128 | cudnn | 874 |"]


def test_report_command_line(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"date": "2026-12-01", "gpu": "NVIDIA H200", "git_commit": "abc", "records": RECORDS}))
    out = tmp_path / "tables.md"
    subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), str(path), "--markdown", str(out), "--no-plots"],
                   check=True, capture_output=True)
    text = out.read_text()
    assert "**Lean P against exact P**" in text and "| gqa-d128 | zyfa (exact P) | 760 |" in text


def write_part(path, records, commit="abc"):
    path.write_text(json.dumps({"part": "accuracy", "command": "test", "git_commit": commit,
                                "environment": {"nvidia_smi": "NVIDIA H200, 580, 141 GB, 700 W"}, "records": records}))


def merge(tmp_path, base_records, part_records, *extra_parts, drop=()):
    base_part, part, base, out = (tmp_path / n for n in ("base-part.json", "part.json", "base.json", "out.json"))
    write_part(base_part, base_records)
    write_part(part, part_records)
    extra = []
    for i, records in enumerate(extra_parts):
        extra.append(tmp_path / f"extra-{i}.json")
        write_part(extra[-1], records, commit=f"later{i}")
    results = os.path.join(BENCH, "results_file.py")
    subprocess.run([sys.executable, results, "merge", "--date", "2026-12-01", "--out", str(base), str(base_part)],
                   check=True, capture_output=True)
    drops = [a for d in drop for a in ("--drop", d)]
    subprocess.run([sys.executable, results, "merge", "--date", "2026-12-02", "--out", str(out), "--base", str(base),
                    *drops, str(part), *map(str, extra)], check=True, capture_output=True)
    return json.loads(out.read_text())["records"]


def test_merge_base_keeps_the_default_run_beside_an_exact_p_run(tmp_path):
    merged = merge(tmp_path, [acc("zyfa", 2.7e-2)], [acc("zyfa", 2.0e-2, "exact")])
    assert sorted((r.get("p_rounding") or "", r["rel_rms_err"]) for r in merged) == [("", 2.7e-2), ("exact", 2.0e-2)]


def test_merge_base_replaces_only_the_same_p_rounding(tmp_path):
    merged = merge(tmp_path, [acc("zyfa", 2.7e-2), acc("zyfa", 2.0e-2, "exact")], [acc("zyfa", 1.9e-2, "exact")])
    assert sorted((r.get("p_rounding") or "", r["rel_rms_err"]) for r in merged) == [("", 2.7e-2), ("exact", 1.9e-2)]


def test_merge_a_later_part_replaces_an_earlier_parts_record(tmp_path):
    merged = merge(tmp_path, [], [acc("cudnn", 2.7e-2), acc("zyfa", 1.7e-2)], [acc("zyfa", 6.3e-3)])
    assert sorted((r["impl"], r["rel_rms_err"], r["git_commit"]) for r in merged) == [
        ("cudnn", 2.7e-2, "abc"), ("zyfa", 6.3e-3, "later0")]


def test_merge_drop_with_a_p_rounding_leaves_the_other_runs(tmp_path):
    merged = merge(tmp_path, [acc("zyfa", 2.7e-2), acc("zyfa", 2.0e-2, "lean"), acc("zyfa", 1.9e-2, "exact")],
                   [acc("cudnn", 3e-2)], drop=["zyfa/fp8/lean"])
    assert sorted((r["impl"], r.get("p_rounding") or "") for r in merged) == [
        ("cudnn", ""), ("zyfa", ""), ("zyfa", "exact")]


def test_merge_leaves_out_a_sustained_record_timed_too_briefly(tmp_path):
    brief = rec("fa3", mode="sustained", tflops=700.0, calls=1, timed_s=0.003)
    full = rec("zyfa", mode="sustained", tflops=600.0, calls=900, timed_s=3.3)
    merged = merge(tmp_path, [brief], [full])
    assert [(r["impl"], r["mode"]) for r in merged] == [("zyfa", "sustained")]


def test_record_key_and_schema():
    assert results_file.record_key(acc("zyfa", 1e-2)) != results_file.record_key(acc("zyfa", 1e-2, "exact"))
    results_file.check_record(acc("zyfa", 1e-2, "lean"))
    for bad in (acc("zyfa", 1e-2, "fast"), acc("cudnn", 1e-2, "exact"), acc("zyfa", 1e-3, "exact", dtype="bf16")):
        with pytest.raises(ValueError):
            results_file.check_record(bad)


def test_recover_reads_p_rounding_runs_from_benchmark_lines():
    lines = [f"kernel/fp8/gqa-d128/S16384/H32:8/gaussian/{run}/rep{i}/iterations:1/manual_time   {ms} ms   {ms} ms"
             f"   1   800.0   50" for i in range(3) for run, ms in (("zyfa", 5.4), ("zyfa@exact", 5.8), ("cudnn", 5.0))]
    got = {(r["impl"], r.get("p_rounding")): r for r in results_file.records_from_gb_lines(lines)}
    assert set(got) == {("zyfa", None), ("zyfa", "exact"), ("cudnn", None)}
    assert got[("zyfa", "exact")]["time_ms"] == 5.8 and got[("zyfa", "exact")]["repeats"] == 3
    for r in got.values():
        results_file.check_record(r)


def test_peers_accepts_and_ignores_p_rounding():
    args = peers.parser().parse_args(["--bench", "zyfa_bench", "--json", "out.json", "--mode=accuracy",
                                      "--p-rounding=default,lean,exact"])
    assert args.mode == "accuracy" and args.p_rounding == "default,lean,exact"


def test_plots_draw_p_rounding_runs_as_their_own_series(tmp_path):
    pytest.importorskip("matplotlib")
    written = report.plot_throughput(RECORDS, str(tmp_path / "r")) + report.plot_accuracy(RECORDS, str(tmp_path / "r"))
    assert sorted(os.path.basename(p) for p in written) == ["r-error-bf16.png", "r-error-fp8.png", "r-tflops-fp8.png"]


def test_impls_of_zyfa_bench_are_skipped_and_unknown_ones_stop():
    assert peers.peer_impls("zyfa") == []
    assert peers.peer_impls("zyfa,cudnn,fa3") == ["fa3"]
    with pytest.raises(SystemExit, match="unknown fa4"):
        peers.peer_impls("fa3,fa4")


def test_merge_a_later_failure_does_not_replace_a_measurement(tmp_path):
    failed = dict(acc("zyfa", 1.0), rel_rms_err=None, error="not installed in this call")
    merged = merge(tmp_path, [acc("zyfa", 2.7e-2)], [failed])
    assert [(r["rel_rms_err"], r.get("error")) for r in merged] == [(2.7e-2, None)]
    merged = merge(tmp_path, [], [acc("zyfa", 2.7e-2)], [failed])
    assert [(r["rel_rms_err"], r.get("error")) for r in merged] == [(2.7e-2, None)]


def test_merge_keeps_runs_on_inputs_of_another_std_apart(tmp_path):
    merged = merge(tmp_path, [], [dict(acc("zyfa", 2.7e-2), input_std=0.1)], [dict(acc("zyfa", 2.0e-2), input_std=1.0)])
    assert sorted((r["input_std"], r["rel_rms_err"]) for r in merged) == [(0.1, 2.7e-2), (1.0, 2.0e-2)]


def test_merge_refuses_parts_from_two_gpus_unless_told(tmp_path):
    h200, h100 = tmp_path / "h200.json", tmp_path / "h100.json"
    write_part(h200, [acc("zyfa", 2.7e-2)])
    h100.write_text(json.dumps({"part": "accuracy", "command": "test", "git_commit": "abc",
                                "environment": {"nvidia_smi": "NVIDIA H100 80GB HBM3, 580, 80 GB, 700 W"},
                                "records": [acc("cudnn", 3e-2)]}))
    results = os.path.join(BENCH, "results_file.py")
    out = tmp_path / "out.json"
    refused = subprocess.run([sys.executable, results, "merge", "--date", "2026-12-06", "--out", str(out), str(h200),
                              str(h100)], capture_output=True, text=True)
    assert refused.returncode != 0 and "different machines" in refused.stderr
    subprocess.run([sys.executable, results, "merge", "--date", "2026-12-06", "--out", str(out), "--mixed",
                    "two cards, on purpose", str(h200), str(h100)], check=True, capture_output=True)
    assert json.loads(out.read_text())["mixed"] == "two cards, on purpose"
