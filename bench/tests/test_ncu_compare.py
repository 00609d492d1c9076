"""ncu_compare.py reads two ncu details pages, puts each metric in one unit whatever prefix ncu chose, and
compares only what both launches report."""
import ncu_compare

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def details(tmp_path, name, metrics, launch_id="0"):
    lines = ["==PROF== a line ncu prints before the table", HEADER]
    for section, metric, unit, value in metrics:
        lines.append(f'"{launch_id}","1","zyfa","h","k","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0",'
                     f'"{section}","{metric}","{unit}","{value}"')
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_units_are_normalized_and_only_common_numeric_metrics_compared(tmp_path):
    a = details(tmp_path, "a.csv", [("GPU Speed Of Light Throughput", "Duration", "msecond", "2.50"),
                                    ("GPU Speed Of Light Throughput", "SM Frequency", "Ghz", "1.65"),
                                    ("Compute Workload Analysis", "Issue Slots Busy", "%", "40.00"),
                                    ("Warp State Statistics", "Warp Cycles Per Issued Instruction", "cycle", "9.5"),
                                    ("Launch Statistics", "Function Cache Configuration", "", "CachePreferNone")])
    b = details(tmp_path, "b.csv", [("GPU Speed Of Light Throughput", "Duration", "usecond", "2,350.00"),
                                    ("GPU Speed Of Light Throughput", "SM Frequency", "Mhz", "1,545.00"),
                                    ("Compute Workload Analysis", "Issue Slots Busy", "%", "50.00")])
    rows = {r[1]: r for r in ncu_compare.compare(ncu_compare.read_details(a), ncu_compare.read_details(b))}
    assert set(rows) == {"Duration", "SM Frequency", "Issue Slots Busy"}
    assert rows["Duration"][2:5] == ("ns", 2.5e6, 2.35e6)
    assert abs(rows["Duration"][5] - 0.94) < 1e-12
    assert rows["SM Frequency"][2:5] == ("MHz", 1650.0, 1545.0)
    assert rows["Issue Slots Busy"][5] == 1.25


def test_only_the_first_launch_of_a_report_counts(tmp_path):
    path = tmp_path / "two.csv"
    first = details(tmp_path, "first.csv", [("S", "Elapsed Cycles", "cycle", "100")], launch_id="0")
    second = details(tmp_path, "second.csv", [("S", "Elapsed Cycles", "cycle", "999")], launch_id="1")
    path.write_text(open(first).read() + "\n".join(open(second).read().splitlines()[2:]) + "\n")
    assert ncu_compare.read_details(str(path)) == {("S", "Elapsed Cycles"): (100.0, "cycle")}


def test_metric_rows_shorter_than_a_header_with_rule_columns_are_read(tmp_path):
    # ncu 2025's details page: the header goes on with the rule columns, a metric row stops after its value.
    header = HEADER + ',"Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"'
    row = '"0","1","zyfa","h","k","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","S","Elapsed Cycles","cycle","5,346,821",'
    path = tmp_path / "rules.csv"
    path.write_text(header + "\n" + row + "\n")
    assert ncu_compare.read_details(str(path)) == {("S", "Elapsed Cycles"): (5346821.0, "cycle")}
