#!/usr/bin/env python3
"""Builds bench/results/<date>-<gpu>.json from the pieces a device run writes.

  wrap   (device) one part of tools/device/run_bench.sh: its records files, the exact command, the
         clocks read before and after, and the machine's versions -> one part file.
  recover (here)  the records a step printed to the log, when its results file was not written (a time limit
                  killed it) or did not come back -> a part file.
  merge  (here)   part files -> the results file: {date, gpu, git_commit, driver, cuda, cudnn, torch,
         parts: [{part, command, clocks_before, clocks_after, ...}], records: [...]}. With --base, an
         earlier results file's parts and records come first, and each of its records that a new record
         measures again (same identity: record_key) is dropped: a session that re-measures some shapes
         keeps one file with every shape. Among the parts, too, a later part's record replaces an
         earlier one's.

The schema of a record (other tools read it; keep it stable): impl (zyfa | cudnn | fa3 | flashinfer |
torch-flash | torch-cudnn), dtype (bf16 | fp8), d_qk, d_v, batch, seqlen, nheads, nheads_k, inputs
(gaussian | outlier | structured), mode (kernel | sustained | accuracy; isolated: NVIDIA's protocol, only
to reconcile published figures), tflops (null for accuracy
records and failures), rel_rms_err (accuracy records), and extra fields (family, input_std, time_ms,
tflops_repeats, calls, plan, out_dtype, max_abs_err, lse_max_abs_err, rows_sum_max_err, error, part,
git_commit (the zyfa build its part ran; a results file that merges several runs mixes commits),
p_rounding). p_rounding (lean | exact | split; zyfa FP8 only) marks a zyfa run with an explicit P rounding
(zyfa_bench --p-rounding); a record without it ran the library's default. It is part of a record's identity.
"""
import argparse
import datetime
import json
import re
import subprocess
import sys

REQUIRED = ["impl", "dtype", "d_qk", "d_v", "batch", "seqlen", "nheads", "nheads_k", "inputs", "mode", "tflops"]
IMPLS = {"zyfa", "zyfa-py", "cudnn", "fa3", "flashinfer", "torch-flash", "torch-cudnn"}
P_ROUNDINGS = {"lean", "exact", "split"}


def record_key(r):
    """What one record measures: two records with the same key measure the same thing (the later replaces the
    earlier in merge --base). A zyfa run with an explicit P rounding is its own measurement, and so is one on
    inputs of another std (the check part's std-1 runs beside the protocol's 0.1)."""
    std = r.get("input_std")
    return (r["impl"], r["dtype"], r["d_qk"], r["d_v"], r["batch"], r["seqlen"], r["nheads"], r["nheads_k"],
            r["inputs"], r["mode"], r.get("p_rounding"), None if std is None else round(float(std), 6))


def is_failure(r):
    """A record that says why nothing was measured (an error, no time and no error figure)."""
    return bool(r.get("error")) and r.get("tflops") is None and r.get("rel_rms_err") is None


def check_record(r):
    missing = [k for k in REQUIRED if k not in r]
    if missing:
        raise ValueError(f"record lacks {missing}: {r}")
    if r["impl"] not in IMPLS or r["dtype"] not in ("bf16", "fp8") or \
            r["inputs"] not in ("gaussian", "outlier", "structured") or \
            r["mode"] not in ("kernel", "sustained", "accuracy", "isolated"):
        raise ValueError(f"record has a value outside the schema: {r}")
    if "p_rounding" in r and (r["p_rounding"] not in P_ROUNDINGS or r["impl"] != "zyfa" or r["dtype"] != "fp8"):
        raise ValueError(f"record has a p_rounding outside the schema (lean | exact | split, zyfa FP8 only): {r}")


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e:  # noqa: BLE001 - a missing tool is recorded, not fatal
        return f"unavailable: {e}"


def environment():
    env = {"nvidia_smi": run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,power.limit",
                                "--format=csv,noheader"]),
           "nvcc": run(["nvcc", "--version"]).splitlines()[-1:],
           "cuda_driver_version": run(["bash", "-c", "nvidia-smi | grep -o 'CUDA Version: [0-9.]*'"])}
    try:
        import torch
        env.update({"torch": torch.__version__, "torch_cuda": torch.version.cuda,
                    "cudnn": torch.backends.cudnn.version()})
    except Exception as e:  # noqa: BLE001
        env["torch"] = f"unavailable: {e}"
    return env


# Power above this means a kernel is running (the H200 idles near 80-120 W): the clock summary of a part
# is taken over those samples only.
LOADED_WATTS = 250.0


# nvidia-smi's timestamp column, in the local time of the machine that sampled (wrap runs there too).
SMI_TIMESTAMP = "%Y/%m/%d %H:%M:%S.%f"


def clock_samples(path):
    """(Unix ms or None, SM MHz, W, C, clock event reasons) per sample nvidia-smi took every 200 ms."""
    samples = []
    with open(path) as f:
        for line in f:
            fields = [x.strip() for x in line.split(",")]
            try:
                sm, watts, temp = float(fields[1]), float(fields[2]), float(fields[3])
            except (IndexError, ValueError):
                continue
            try:
                unix_ms = datetime.datetime.strptime(fields[0], SMI_TIMESTAMP).timestamp() * 1e3
            except ValueError:
                unix_ms = None
            samples.append((unix_ms, sm, watts, temp, fields[4] if len(fields) > 4 else ""))
    return samples


def sample_stats(samples):
    """SM clock (min, median, max), power (median, max), the hottest temperature and the clock event reasons
    of clock_samples() entries; {} for none."""
    if not samples:
        return {}
    sms = sorted(s[1] for s in samples)
    watts = sorted(s[2] for s in samples)
    return {"sm_mhz_min": sms[0], "sm_mhz_median": sms[len(sms) // 2], "sm_mhz_max": sms[-1],
            "power_w_median": watts[len(watts) // 2], "power_w_max": watts[-1],
            "temp_c_max": max(s[3] for s in samples), "clock_event_reasons": sorted({s[4] for s in samples})}


def clocks_in_window(samples, windows):
    """SM clock and power over the samples inside one record's timed windows ([[start, end], ...] in Unix ms,
    one per timed repeat): whether a kernel ran slower because the board lowered its clock (power or heat)
    or because it needs more cycles."""
    inside = [s for s in samples if s[0] is not None and any(start <= s[0] <= end for start, end in windows)]
    return {"samples": len(inside), **sample_stats(inside)}


def clock_summary(path):
    """SM clock and power over the samples nvidia-smi took every 200 ms while the part ran."""
    loaded = [s for s in clock_samples(path) if s[2] >= LOADED_WATTS]
    return {"loaded_samples": len(loaded), **sample_stats(loaded)}


def wrap(args):
    records = []
    tools = []
    for path in args.records:
        with open(path) as f:
            d = json.load(f)
        tools.append({k: v for k, v in d.items() if k != "records"})
        for r in d["records"]:
            r["part"] = args.part
            check_record(r)
            records.append(r)
    if args.clock_samples:
        samples = clock_samples(args.clock_samples)
        for r in records:
            if r.get("windows_unix_ms"):
                r["clocks_in_window"] = clocks_in_window(samples, r["windows_unix_ms"])
    with open(args.clocks_before) as f:
        before = f.read().strip()
    with open(args.clocks_after) as f:
        after = f.read().strip()
    part = {"part": args.part, "command": args.command, "git_commit": args.commit, "clocks_before": before,
            "clocks_after": after, "clocks_under_load": clock_summary(args.clock_samples) if args.clock_samples else None,
            "environment": environment(), "tools": tools, "records": records}
    with open(args.out, "w") as f:
        json.dump(part, f, indent=1)
    print(f"{args.out}: {len(records)} records")


# One Google Benchmark line of zyfa_bench: mode/dtype/family/S<seqlen>/H<nheads>:<nheads_k>/inputs/run/rep<r>,
# where run is an impl or zyfa@<P rounding> (--p-rounding). Google Benchmark prints a counter of 1000 or more
# with a k (1.10632k TFLOP/s).
GB_LINE = re.compile(r"^(kernel|sustained|isolated)/(bf16|fp8)/([\w.-]+)/S(\d+)/H(\d+):(\d+)/(\w+)/([\w-]+)"
                     r"(?:@(lean|exact|split))?/rep\d+"
                     r"/iterations:1/manual_time\s+([\d.]+) ms\s+[\d.]+ ms\s+1\s+([\d.]+k?)\s+(\d+)")
FAMILY_DIMS = {"mha-d128": (128, 128), "gqa-d128": (128, 128), "mha-d192": (192, 128), "gqa-d192": (192, 128),
               "llama3.1-8b": (128, 128)}
TIMING_GAUSSIAN_STD = 0.1  # zyfa_bench's kTimingGaussianStd, for steps run without --input-std


def records_from_gb_lines(lines):
    """zyfa_bench's timing records from its console lines: the median round of each (case, impl), as the
    binary itself computes it (a fallback when a step was killed before it wrote its file)."""
    rounds = {}
    for line in lines:
        m = GB_LINE.match(line)
        if m:
            mode, dtype, fam, s, h, hk, inputs, impl, p_rounding, ms, _tflops, calls = m.groups()
            rounds.setdefault((mode, dtype, fam, int(s), int(h), int(hk), inputs, impl, p_rounding), []).append(
                (float(ms), int(calls)))
    records = []
    for (mode, dtype, fam, s, h, hk, inputs, impl, p_rounding), rs in rounds.items():
        d_qk, d_v = FAMILY_DIMS[fam]
        flops = h * s * s * (d_qk + d_v)
        med = sorted(ms for ms, _ in rs)[len(rs) // 2]
        records.append({"impl": impl, "dtype": dtype, "d_qk": d_qk, "d_v": d_v, "batch": 1, "seqlen": s, "nheads": h,
                        "nheads_k": hk, "inputs": inputs, "mode": mode, "family": fam,
                        "input_std": TIMING_GAUSSIAN_STD if inputs == "gaussian" else 1.0,
                        "tflops": flops / (med * 1e-3) / 1e12, "time_ms": med,
                        "tflops_repeats": [flops / (ms * 1e-3) / 1e12 for ms, _ in rs], "calls": rs[0][1],
                        "repeats": len(rs)})
        if p_rounding:
            records[-1]["p_rounding"] = p_rounding
    return records


KILLED_BEFORE_RESULTS = "the step was killed by its time limit before it wrote its results file"


def recover(args):
    """Records a step printed to its log when its results file is missing (the step was killed before it
    wrote it, or the file did not come back: --reason says which): JSON lines (accuracy mode, peers.py) and
    zyfa_bench's Google Benchmark lines (timing modes)."""
    records = []
    with open(args.log) as f:
        lines = f.read().splitlines()[args.from_line - 1:args.to_line]
    found = [json.loads(line) for line in lines if line.startswith('{"impl"')] + records_from_gb_lines(lines)
    for r in found:
        r["part"] = args.part
        r["recovered_from_log"] = True
        check_record(r)
        records.append(r)
    part = {"part": args.part, "command": args.command, "git_commit": args.commit,
            "note": f"recovered from lines {args.from_line}-{args.to_line} of the run's log: {args.reason}",
            "environment": json.loads(args.environment),
            "records": records}
    with open(args.out, "w") as f:
        json.dump(part, f, indent=1)
    print(f"{args.out}: {len(records)} records recovered")


# The sustained protocol times at least 3 s of back-to-back calls (bench/NOTES.md, Protocol). A record timed over
# less did not follow it (peers.py sized FA3's window from a slow first call until 8faed3e: 1 call, 3 ms).
SUSTAINED_MIN_TIMED_S = 3.0


def follows_protocol(record):
    """False for a sustained-mode timing whose window was shorter than the protocol's."""
    return not (record["mode"] == "sustained" and record.get("tflops") is not None
                and record.get("timed_s", SUSTAINED_MIN_TIMED_S) < SUSTAINED_MIN_TIMED_S)


def latest_per_key(records):
    """One record per identity (record_key): a later part's measurement replaces an earlier part's; a later
    failure (a peer not installed in that call, a fault) replaces only a failure, never a measurement."""
    latest = {}
    for r in records:
        key = record_key(r)
        if key in latest and is_failure(r) and not is_failure(latest[key]):
            continue
        latest.pop(key, None)
        latest[key] = r
    return list(latest.values())


def gpu_environment(env):
    """What must match between the parts of one results file: the GPU's name, the driver, cuDNN and torch."""
    smi = env.get("nvidia_smi", "").split(", ")
    return {"gpu": smi[0] if smi else "?", "driver": smi[1] if len(smi) > 1 else "?", "cudnn": env.get("cudnn"),
            "torch": env.get("torch")}


def dropped(record, drop):
    """Whether --drop IMPL/DTYPE[/P_ROUNDING] names this record."""
    impl, dtype, *p_rounding = drop
    return (record["impl"], record["dtype"]) == (impl, dtype) and (
        not p_rounding or record.get("p_rounding") == p_rounding[0])


def merge(args):
    parts = []
    for path in args.parts:
        with open(path) as f:
            parts.append(json.load(f))
    if not parts:
        sys.exit("no parts")
    # One file, one machine: parts from another GPU (the device tool may hand out an H100 for an H200), driver,
    # cuDNN or torch would be published under the first part's name. --mixed says so in the file instead.
    envs = {json.dumps(gpu_environment(p["environment"]), sort_keys=True) for p in parts}
    if len(envs) > 1 and not args.mixed:
        sys.exit(f"merge: the parts ran on different machines or stacks: {sorted(envs)} (--mixed NOTE to merge anyway)")
    env = parts[0]["environment"]
    machine = gpu_environment(env)
    out = {"date": args.date, "gpu": machine["gpu"], "git_commit": parts[0]["git_commit"],
           "driver": machine["driver"], "cuda": env.get("cuda_driver_version"), "nvcc": env.get("nvcc"),
           "cudnn": machine["cudnn"], "torch": machine["torch"],
           "parts": [{k: v for k, v in p.items() if k != "records"} for p in parts],
           "records": latest_per_key(dict({"git_commit": p["git_commit"]}, **r)
                                     for p in parts for r in p["records"])}
    commits = {p["git_commit"] for p in parts}
    if args.base:
        with open(args.base) as f:
            base = json.load(f)
        base_env = {k: base.get(k) for k in machine}
        if base_env != machine and not args.mixed:
            sys.exit(f"merge: --base ran on {base_env}, the parts on {machine} (--mixed NOTE to merge anyway)")
        # --drop IMPL/DTYPE[/P_ROUNDING]: the base's records of a kernel that no longer runs (superseded, not
        # re-measured); with P_ROUNDING, only its runs with that explicit P rounding. The rest meet the parts'
        # records under latest_per_key's rule, as the parts' own did.
        drops = [tuple(d.split("/")) for d in (args.drop or [])]
        undropped = [r for r in base["records"] if not any(dropped(r, d) for d in drops)]
        base_ids = {id(r) for r in undropped}
        out["records"] = latest_per_key(undropped + out["records"])
        kept = [r for r in out["records"] if id(r) in base_ids]
        out["parts"] = base["parts"] + out["parts"]
        commits |= set(base.get("git_commits", [base["git_commit"]]))
        out["base"] = {"file": args.base, "records_kept": len(kept),
                       "records_replaced_or_dropped": len(base["records"]) - len(kept), "dropped": args.drop or []}
    invalid = [r for r in out["records"] if not follows_protocol(r)]
    if invalid:
        out["records"] = [r for r in out["records"] if follows_protocol(r)]
        out["dropped_off_protocol"] = [{k: r.get(k) for k in ("impl", "dtype", "family", "seqlen", "mode", "calls",
                                                              "timed_s", "git_commit")} for r in invalid]
        print(f"left out {len(invalid)} sustained records timed over less than {SUSTAINED_MIN_TIMED_S} s")
    if len(commits) > 1:
        out["git_commits"] = sorted(commits)
    if args.mixed:
        out["mixed"] = args.mixed
    for r in out["records"]:
        check_record(r)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    print(f"{args.out}: {len(out['records'])} records from {len(parts)} parts")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("wrap")
    w.add_argument("--part", required=True)
    w.add_argument("--command", required=True)
    w.add_argument("--commit", required=True)
    w.add_argument("--clocks-before", required=True)
    w.add_argument("--clocks-after", required=True)
    w.add_argument("--clock-samples", help="nvidia-smi samples (timestamp, sm MHz, W, C, reasons) taken while it ran")
    w.add_argument("--out", required=True)
    w.add_argument("records", nargs="+")
    rc = sub.add_parser("recover")
    rc.add_argument("--part", required=True)
    rc.add_argument("--command", required=True)
    rc.add_argument("--commit", required=True)
    rc.add_argument("--environment", required=True, help="JSON of the environment (from another part of the run)")
    rc.add_argument("--log", required=True)
    rc.add_argument("--from-line", type=int, required=True)
    rc.add_argument("--to-line", type=int, required=True)
    rc.add_argument("--reason", default=KILLED_BEFORE_RESULTS,
                    help="why the results file is missing, for the part's note")
    rc.add_argument("--out", required=True)
    m = sub.add_parser("merge")
    m.add_argument("--date", required=True)
    m.add_argument("--out", required=True)
    m.add_argument("--base", help="an earlier results file whose records the parts extend or replace")
    m.add_argument("--mixed", metavar="NOTE", help="merge parts (or a base) from different GPUs, drivers, cuDNN or "
                   "torch; NOTE says why, and goes into the file")
    m.add_argument("--drop", action="append", metavar="IMPL/DTYPE[/P_ROUNDING]",
                   help="leave out the base's records of this kernel (it has been replaced), or only its runs "
                        "with this explicit P rounding; repeatable")
    m.add_argument("parts", nargs="+")
    args = p.parse_args()
    {"wrap": wrap, "recover": recover, "merge": merge}[args.cmd](args)


if __name__ == "__main__":
    main()
