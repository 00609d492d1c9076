"""results_file.py wrap gives each timed record the SM clock and power that nvidia-smi sampled inside its timed
windows (one per repeat), and report.py tabulates them: the evidence for whether a kernel is slower in cycles or
in clock."""
import datetime
import json
import os
import subprocess
import sys

import report
import results_file

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def smi_line(unix_ms, mhz, watts):
    stamp = datetime.datetime.fromtimestamp(unix_ms / 1e3).strftime(results_file.SMI_TIMESTAMP)[:-3]
    return f"{stamp}, {mhz}, {watts}, 50, 0x0000000000000004"


def sustained_rec(impl, tflops, start_ms, end_ms):
    return {"impl": impl, "dtype": "bf16", "d_qk": 128, "d_v": 128, "batch": 1, "seqlen": 16384, "nheads": 32,
            "nheads_k": 8, "inputs": "structured", "mode": "sustained", "family": "gqa-d128", "input_std": 1.0,
            "tflops": tflops, "timed_s": (end_ms - start_ms) / 1e3, "windows_unix_ms": [[start_ms, end_ms]]}


def wrap(tmp_path, samples, records):
    (tmp_path / "samples.csv").write_text("\n".join(samples) + "\n")
    (tmp_path / "before.csv").write_text("before")
    (tmp_path / "after.csv").write_text("after")
    (tmp_path / "records.json").write_text(json.dumps({"records": records}))
    out = tmp_path / "part.json"
    subprocess.run([sys.executable, os.path.join(BENCH, "results_file.py"), "wrap", "--part", "p",
                    "--command", "test", "--commit", "c", "--clocks-before", str(tmp_path / "before.csv"),
                    "--clocks-after", str(tmp_path / "after.csv"), "--clock-samples", str(tmp_path / "samples.csv"),
                    "--out", str(out), str(tmp_path / "records.json")], check=True, capture_output=True)
    return json.loads(out.read_text())["records"]


def test_wrap_matches_samples_to_each_records_window_and_report_divides_by_the_clock(tmp_path):
    t0 = 1_796_000_000_000
    # zyfa's window sees 1700-1720 MHz, the peer's (after a 2 s idle at 1980 MHz, outside both) 1900 MHz.
    samples = [smi_line(t0 + 200 * i, 1700 + 10 * (i % 3), 690.0) for i in range(16)]
    samples += [smi_line(t0 + 3200 + 200 * i, 1980, 90.0) for i in range(10)]
    samples += [smi_line(t0 + 5200 + 200 * i, 1900, 650.0) for i in range(16)]
    records = [sustained_rec("zyfa", 610.0, t0, t0 + 3050), sustained_rec("fa3", 650.0, t0 + 5200, t0 + 8250),
               sustained_rec("cudnn", 570.0, t0 + 20000, t0 + 23000)]  # no sample inside its window
    rows = wrap(tmp_path, samples, records)
    by_impl = {r["impl"]: r["clocks_in_window"] for r in rows}
    assert by_impl["zyfa"]["samples"] == 16
    assert by_impl["zyfa"]["sm_mhz_median"] == 1710.0 and by_impl["zyfa"]["sm_mhz_min"] == 1700.0
    assert by_impl["zyfa"]["power_w_median"] == 690.0
    assert by_impl["zyfa"]["clock_event_reasons"] == ["0x0000000000000004"]
    assert by_impl["fa3"]["samples"] == 16 and by_impl["fa3"]["sm_mhz_median"] == 1900.0
    assert by_impl["cudnn"] == {"samples": 0}

    table = report.clock_table(rows)
    assert "| bf16 | gqa-d128 | 16K | structured | zyfa | 610 | 1710 | 690 | 357 | 16 |" in table
    assert "| bf16 | gqa-d128 | 16K | structured | fa3 | 650 | 1900 | 650 | 342 | 16 |" in table
    assert "cudnn" not in table  # no samples, no row


def test_kernel_mode_repeats_each_have_a_window_and_the_clock_table_takes_their_samples_only(tmp_path):
    t0 = 1_796_000_000_000
    # Three repeats of zyfa interleaved with three of the peer: zyfa's repeats at 1980 MHz, the peer's at 1600.
    samples, records = [], []
    zyfa_windows, peer_windows = [], []
    for rep in range(3):
        z0, p0 = t0 + 1000 * rep, t0 + 1000 * rep + 500
        zyfa_windows.append([z0, z0 + 300])
        peer_windows.append([p0, p0 + 300])
        samples += [smi_line(z0 + 100, 1980, 600.0), smi_line(z0 + 400, 1200, 150.0),  # the second between
                    smi_line(p0 + 100, 1600, 690.0)]
    kernel = {"dtype": "fp8", "d_qk": 128, "d_v": 128, "batch": 1, "seqlen": 16384, "nheads": 32, "nheads_k": 8,
              "inputs": "gaussian", "mode": "kernel", "family": "gqa-d128", "input_std": 0.1}
    records = [dict(kernel, impl="zyfa", tflops=950.0, windows_unix_ms=zyfa_windows),
               dict(kernel, impl="fa3", tflops=920.0, windows_unix_ms=peer_windows),
               dict(kernel, impl="cudnn", tflops=None, error="not run")]
    rows = {r["impl"]: r for r in wrap(tmp_path, samples, records)}
    assert rows["zyfa"]["clocks_in_window"]["samples"] == 3 and rows["zyfa"]["clocks_in_window"]["sm_mhz_min"] == 1980
    assert rows["fa3"]["clocks_in_window"]["sm_mhz_median"] == 1600
    assert "clocks_in_window" not in rows["cudnn"]
    text = report.throughput_tables(list(rows.values()), "kernel", report.clock_of, report.CLOCK)
    assert "| gqa-d128 | zyfa | 1980 |" in text and "| gqa-d128 | fa3 | 1600 |" in text and "cudnn" not in text


def test_no_clock_table_without_windows():
    rec = sustained_rec("zyfa", 610.0, 0, 1)
    del rec["windows_unix_ms"]
    assert report.clock_table([rec]) == ""
    assert report.throughput_tables([rec], "sustained", report.clock_of, report.CLOCK) == ""
