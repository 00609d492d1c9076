"""A results file that merges runs of several zyfa commits (merge --base): every record keeps the commit of its
part, and report.py says which rows ran at which commit."""
import json
import os
import subprocess
import sys

import report

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def kernel_rec(impl, tflops, **extra):
    r = {"impl": impl, "dtype": "bf16", "d_qk": 128, "d_v": 128, "batch": 1, "seqlen": 16384, "nheads": 32,
         "nheads_k": 8, "inputs": "gaussian", "mode": "kernel", "family": "gqa-d128", "input_std": 0.1,
         "tflops": tflops}
    r.update(extra)
    return r


def write_part(path, part, commit, records):
    path.write_text(json.dumps({"part": part, "command": "test", "git_commit": commit,
                                "environment": {"nvidia_smi": "NVIDIA H200, 580, 141 GB, 700 W"}, "records": records}))


def test_merge_stamps_each_record_with_its_parts_commit_and_report_lists_them(tmp_path):
    old_kernel, old_peers, new_kernel = (tmp_path / n for n in ("old-kernel.json", "old-peers.json", "new.json"))
    write_part(old_kernel, "kernel", "aaaaaaaaaaaa", [kernel_rec("zyfa", 580.0), kernel_rec("cudnn", 560.0)])
    write_part(old_peers, "peers-kernel", "aaaaaaaaaaaa", [kernel_rec("fa3", 650.0)])
    write_part(new_kernel, "kernel", "bbbbbbbbbbbb", [kernel_rec("zyfa", 630.0), kernel_rec("cudnn", 566.0)])
    results = os.path.join(BENCH, "results_file.py")
    base, out = tmp_path / "base.json", tmp_path / "out.json"
    subprocess.run([sys.executable, results, "merge", "--date", "2026-12-01", "--out", str(base), str(old_kernel),
                    str(old_peers)], check=True, capture_output=True)
    subprocess.run([sys.executable, results, "merge", "--date", "2026-12-02", "--out", str(out), "--base", str(base),
                    str(new_kernel)], check=True, capture_output=True)
    records = json.loads(out.read_text())["records"]
    assert sorted((r["impl"], r["tflops"], r["git_commit"]) for r in records) == [
        ("cudnn", 566.0, "bbbbbbbbbbbb"), ("fa3", 650.0, "aaaaaaaaaaaa"), ("zyfa", 630.0, "bbbbbbbbbbbb")]
    text = report.provenance(records)
    assert "- kernel: fa3 at aaaaaaaaa; zyfa, cudnn at bbbbbbbbb" in text


def test_report_says_nothing_when_every_row_ran_at_one_commit():
    assert report.provenance([kernel_rec("zyfa", 630.0, git_commit="b"), kernel_rec("fa3", 650.0, git_commit="b")]) == ""


def test_report_lists_cells_whose_implementations_ran_in_different_calls():
    import report

    def timed(impl, start_s, commit, seqlen=4096):
        return {"impl": impl, "dtype": "fp8", "d_qk": 128, "d_v": 128, "batch": 1, "seqlen": seqlen, "nheads": 64,
                "nheads_k": 64, "inputs": "gaussian", "mode": "kernel", "family": "mha-d128", "input_std": 0.1,
                "tflops": 800.0, "git_commit": commit, "windows_unix_ms": [[start_s * 1000, start_s * 1000 + 60]]}

    day = 1796535520  # 2026-12-06
    same_call = [timed("zyfa", day, "aaaaaaa"), timed("fa3", day + 240, "aaaaaaa")]
    assert report.mixed_cells(same_call) == ""
    apart = [timed("zyfa", day, "bbbbbbb"), timed("fa3", day - 86400, "aaaaaaa")]
    text = report.mixed_cells(apart)
    assert "fp8 mha-d128 gaussian, S=4K: " in text
    assert "zyfa (2026-12-06, bbbbbbb)" in text and "fa3 (2026-12-05, aaaaaaa)" in text


def test_ratios_pair_each_peer_with_the_zyfa_run_of_its_own_call():
    def timed(impl, tflops, start_s, commit="aaaaaaa", seqlen=4096, **extra):
        r = {"impl": impl, "dtype": "fp8", "d_qk": 128, "d_v": 128, "batch": 1, "seqlen": seqlen, "nheads": 64,
             "nheads_k": 64, "inputs": "gaussian", "mode": "kernel", "family": "mha-d128", "input_std": 0.1,
             "tflops": tflops, "git_commit": commit, "windows_unix_ms": [[start_s * 1000, start_s * 1000 + 60]]}
        r.update(extra)
        return r

    day = 1796535520
    records = [timed("zyfa", 900.0, day), timed("cudnn", 750.0, day + 30),            # zyfa_bench's call
               timed("zyfa-py", 880.0, day + 3600), timed("fa3", 800.0, day + 3620),  # peers.py's call, an hour on
               timed("flashinfer", 720.0, day + 7200, commit="bbbbbbb"),              # a call with no zyfa run
               timed("zyfa", 990.0, day + 10, p_rounding="lean")]                   # not the default: no peer
    text = report.ratio_tables(records)
    assert "| mha-d128 | zyfa / cudnn | 1.20 |" in text      # 900 / 750, not zyfa-py's 880
    assert "| mha-d128 | zyfa / fa3 | 1.10 |" in text        # 880 / 800, not zyfa_bench's 900
    assert "| mha-d128 | zyfa / flashinfer | 1.25† |" in text  # 900 / 720 across calls, marked
    assert "zyfa (lean P)" not in text
    assert report.ratio_tables([timed("fa3", 800.0, day)]) == ""
