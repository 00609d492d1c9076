"""results_file.py recovers timing records from zyfa_bench's console lines when a step was killed before it
wrote its file; Google Benchmark prints a counter of 1000 or more with a k."""
import results_file


def line(ms, tflops, rep):
    return (f"kernel/fp8/gqa-d128/S16384/H32:8/gaussian/zyfa/rep{rep}/iterations:1/manual_time"
            f"      {ms} ms        {ms} ms            1    {tflops}      120")


def test_lines_with_a_k_counter_are_recovered_from_their_time():
    lines = [line("2.0000", "1.09951k", 0), line("1.9000", "1.15738k", 1), line("2.2000", "999.56", 2)]
    records = results_file.records_from_gb_lines(lines)
    assert len(records) == 1
    r = records[0]
    assert (r["dtype"], r["family"], r["seqlen"], r["nheads"], r["nheads_k"]) == ("fp8", "gqa-d128", 16384, 32, 8)
    assert r["time_ms"] == 2.0  # the median of the three rounds
    flops = 32 * 16384 * 16384 * (128 + 128)
    assert abs(r["tflops"] - flops / 2.0e-3 / 1e12) < 1e-9
