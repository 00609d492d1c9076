#!/usr/bin/env python3
"""Two kernel launches side by side, from Nsight Compute's details pages: every numeric metric both reports
hold, in one unit, with the ratio B / A. The question it answers: where does one kernel spend the cycles that
another does not (issue slots, pipe utilization, warp states, instruction counts)?

  python3 bench/ncu_compare.py A-details.csv B-details.csv [--names zyfa,fa3]
      [--sections "Warp State Statistics,Compute Workload Analysis"]

Input: `ncu -i REPORT --page details --csv --print-units base` of one launch each (tools/device/run_ncu.sh
writes NAME-details.csv, for a zyfa kernel or, with RUNNER=peers, a peer's). Base units make the two reports
agree; UNITS below is the fallback for files exported without them.
"""
import argparse
import csv
import sys

# Unit -> (base unit, factor): ncu picks a prefix per value, so two reports can print one metric differently.
UNITS = {
    "nsecond": ("ns", 1.0), "usecond": ("ns", 1e3), "msecond": ("ns", 1e6), "second": ("ns", 1e9),
    "hz": ("MHz", 1e-6), "khz": ("MHz", 1e-3), "mhz": ("MHz", 1.0), "ghz": ("MHz", 1e3),
    "byte": ("byte", 1.0), "kbyte": ("byte", 1e3), "mbyte": ("byte", 1e6), "gbyte": ("byte", 1e9),
    "byte/second": ("byte/s", 1.0), "kbyte/second": ("byte/s", 1e3), "mbyte/second": ("byte/s", 1e6),
    "gbyte/second": ("byte/s", 1e9), "tbyte/second": ("byte/s", 1e12),
}


def to_number(text):
    try:
        return float(text.replace(",", "").strip())
    except ValueError:
        return None


def read_details(path):
    """{(section, metric): (value, unit)} of the first launch in the file, numbers only, in UNITS' base units."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    for start, header in enumerate(rows):
        if "Metric Name" in header and "Metric Value" in header:
            break
    else:
        raise ValueError(f"{path}: no header with Metric Name and Metric Value (ncu --page details --csv?)")
    col = {name: i for i, name in enumerate(header)}
    first_id, out = None, {}
    for row in rows[start + 1:]:
        # Metric rows stop after the value: the rule columns (Rule Name ... Estimated Speedup) are rule rows'.
        if len(row) <= col["Metric Value"]:
            continue
        if "ID" in col:
            first_id = row[col["ID"]] if first_id is None else first_id
            if row[col["ID"]] != first_id:
                break  # one launch per report: compare the first
        value = to_number(row[col["Metric Value"]])
        if value is None:
            continue
        unit = row[col["Metric Unit"]].strip() if "Metric Unit" in col else ""
        base, factor = UNITS.get(unit.lower(), (unit, 1.0))
        out[(row[col["Section Name"]] if "Section Name" in col else "", row[col["Metric Name"]])] = (value * factor, base)
    return out


def compare(a, b, sections=None):
    """Rows (section, metric, unit, A, B, B / A) for the metrics in both, in A's order."""
    rows = []
    for key, (va, unit) in a.items():
        if key not in b or (sections and key[0] not in sections):
            continue
        vb, unit_b = b[key]
        if unit_b != unit:
            continue  # a unit UNITS does not know, printed with different prefixes: not comparable as is
        rows.append((key[0], key[1], unit, va, vb, vb / va if va else None))
    return rows


def fmt(x):
    if x is None:
        return "—"
    return f"{x:.4g}" if abs(x) < 1e6 else f"{x:.4e}"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--names", default="A,B", help="column names for the two launches")
    p.add_argument("--sections", help="comma-separated section names as the CSV's Section Name column prints them, "
                   "e.g. \"GPU Speed Of Light Throughput,Warp State Statistics\" (default: all)")
    args = p.parse_args()
    name_a, name_b = args.names.split(",")
    sections = set(args.sections.split(",")) if args.sections else None
    rows = compare(read_details(args.a), read_details(args.b), sections)
    if not rows:
        sys.exit("no metric in common")
    print(f"| section | metric | unit | {name_a} | {name_b} | {name_b} / {name_a} |")
    print("| --- | --- | --- | ---: | ---: | ---: |")
    for section, metric, unit, va, vb, ratio in rows:
        print(f"| {section} | {metric} | {unit} | {fmt(va)} | {fmt(vb)} | {fmt(ratio)} |")


if __name__ == "__main__":
    main()
